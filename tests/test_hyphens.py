"""Line-end hyphens decided by the document's own words (pipeline.extraction.hyphens), on pages
built from text; tests/test_extraction.py runs the same through the real extract stage, on a
text layer and on its scan."""

from __future__ import annotations

import pytest

from pipeline.contracts import Block, Page
from pipeline.extraction.hyphens import MARK, join_broken_words


def decided(*blocks: str, method: str = "text_layer") -> list[str]:
    page = Page(page_no=1, width=600, height=800, method=method, engine="test", direction="horizontal",
                blocks=[Block(text=text, bbox=(0, 0, 600, 20)) for text in blocks])
    return [block.text for block in join_broken_words([page])[0].blocks]


@pytest.mark.parametrize("elsewhere, broken, text", [
    ("", f"vor{MARK}kommen", "vorkommen"),  # no word elsewhere: lower-case on both sides, a broken word
    ("", f"Debian{MARK}Paketarchiv", "Debian-Paketarchiv"),  # a capital after it: the compound's hyphen
    ("its zero-shot results", f"trained zero{MARK}shot", "trained zero-shot"),
    ("run apt-get, apt-get source", f"apt{MARK}get install, or aptget", "apt-get install, or aptget"),
    ("the PostScript language", f"Post{MARK}Script", "PostScript"),
    ("without", f"WITH{MARK}OUT", "WITHOUT"),  # a word in capitals counts as itself
    ("German text", f"GER{MARK}MAN", "GERMAN"),  # and so does a sentence's first letter
    ("die Standardumgebung", f"LaTeX-Standard{MARK}Umgebung", "LaTeX-Standard-Umgebung"),  # a capital inside counts
    ("state-of-the-art models", f"of the{MARK}art", "of the-art"),  # a longer compound's neighbouring parts count
    ("", f"Arbeitnehmer{MARK}und Arbeitgeber", "Arbeitnehmer- und Arbeitgeber"),  # a part left out
    ("", f"pre{MARK}and post-processing", "pre- and post-processing"),
    ("", f"Ein{MARK}oder Ausgabe", "Ein- oder Ausgabe"),
    ("", f"page 3{MARK}4", "page 3-4"),  # no letters on both sides: the hyphen that was drawn
    ("", f"end{MARK}", "end-"),
])
def test_the_documents_words_decide(elsewhere, broken, text):
    assert decided(elsewhere, broken) == [elsewhere, text]


def test_more_often_written_wins():
    assert decided("co-operate, co-operate and cooperate", f"co{MARK}operate")[1] == "co-operate"
    assert decided("co-operate, cooperate and cooperate", f"co{MARK}operate")[1] == "cooperate"
    assert decided("co-operate and cooperate", f"co{MARK}operate")[1] == "cooperate"  # even: the default


def test_an_ocr_line_ending_in_a_hyphen():
    """An OCR reads a line-end hyphen as "-" and a new line: the same rules, and the line ends
    there are joined; a dash or a hyphen between ideographs or digits stays with its line end."""
    assert decided("zero-shot", "trained zero-\nshot on it", "ist vor-\nhanden", method="ocr")[1:] == \
        ["trained zero-shot on it", "ist vorhanden"]
    assert decided("Preise -\nalle netto", "データ-\nベース", "1990-\n1995", method="ocr") == \
        ["Preise -\nalle netto", "データ-\nベース", "1990-\n1995"]


def test_a_words_other_writings_are_counted_across_pages():
    pages = [Page(page_no=n, width=600, height=800, method="text_layer", engine="test", direction="horizontal",
                  blocks=[Block(text=text, bbox=(0, 0, 600, 20))])
             for n, text in enumerate([f"the so{MARK}called rule", "a so-called fact"], start=1)]
    assert [page.text for page in join_broken_words(pages)] == ["the so-called rule", "a so-called fact"]
