"""Sentence splitting: the traps one by one, offsets, and accuracy on the gold set."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.text import sentences

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_sentences import LANGS, gold_paragraphs, score  # noqa: E402


def texts(text: str, lang: str) -> list[str]:
    return [text[a:b] for a, b in sentences.split(text, lang=lang)]


@pytest.mark.parametrize("lang,text,expected", [
    ("en", "Use a tool, e.g. dpkg. It is at http://www.debian.org/doc/. Version 1.2.53 is 3.5 MB.",
     ["Use a tool, e.g. dpkg.", "It is at http://www.debian.org/doc/.", "Version 1.2.53 is 3.5 MB."]),
    ("en", "Dr. Smith works for Example Inc. in the U.S. today. Why? Because!",
     ["Dr. Smith works for Example Inc. in the U.S. today.", "Why?", "Because!"]),
    ("de", "Das gilt z. B. für Art. 4 Nr. 6, d. h. für Dateisysteme. Sie gilt ab dem 25. Mai 2018.",
     ["Das gilt z. B. für Art. 4 Nr. 6, d. h. für Dateisysteme.", "Sie gilt ab dem 25. Mai 2018."]),
    ("de", "„Datenschutz ist Grundrechtsschutz.“ Mit diesem Satz beginnt es.",
     ["„Datenschutz ist Grundrechtsschutz.“", "Mit diesem Satz beginnt es."]),
    ("es", "¿Es necesario el consentimiento? Depende. ¡Atención! La Sra. García vive en EE.UU. desde 2010.",
     ["¿Es necesario el consentimiento?", "Depende.", "¡Atención!", "La Sra. García vive en EE.UU. desde 2010."]),
    ("es", "Véase el art. 72 y la pág. 12. El importe es 3.500,50 euros.",
     ["Véase el art. 72 y la pág. 12.", "El importe es 3.500,50 euros."]),
    ("zh", "大家都是志愿者。这个程序是否已经被打包了？他问：“这部法律什么时候生效？”当然！",
     ["大家都是志愿者。", "这个程序是否已经被打包了？", "他问：“这部法律什么时候生效？”", "当然！"]),
    ("zh", "请阅读第 1.4 节。详情请见 http://www.debian.org/doc/maint-guide/ 上的文档。",
     ["请阅读第 1.4 节。", "详情请见 http://www.debian.org/doc/maint-guide/ 上的文档。"]),
    ("ja", "彼は「この法律はいつ施行されますか。」と尋ねた。「来年の四月です。」本当ですか！",
     ["彼は「この法律はいつ施行されますか。」と尋ねた。", "「来年の四月です。」", "本当ですか！"]),
    ("ja", "記録（電磁的方式をいう。以下同じ。）により識別できるもの。ただし、この限りでない。",
     ["記録（電磁的方式をいう。以下同じ。）により識別できるもの。", "ただし、この限りでない。"]),
])
def test_traps(lang, text, expected):
    assert texts(text, lang) == expected


def test_line_wraps_are_not_boundaries_but_blank_lines_and_list_items_are():
    text = "This document tries to describe the building\nof a Debian package.\n\nNext paragraph\n• item one\n• item two"
    assert texts(text, "en") == ["This document tries to describe the building\nof a Debian package.",
                                 "Next paragraph", "• item one", "• item two"]


@pytest.mark.parametrize("lang", LANGS)
def test_gold_set_accuracy(lang):
    result = score(lambda t: sentences.split(t, lang=lang), lang)
    assert result["sentences"] >= 30
    assert result["exact"] >= 0.9 and result["precision"] >= 0.95, result


@given(st.text(max_size=400), st.sampled_from([*LANGS, None]))
def test_spans_are_trimmed_ordered_and_inside_the_range(text, lang):
    start, end = min(3, len(text)), len(text)
    previous = start
    for a, b in sentences.split(text, start, end, lang):
        assert previous <= a < b <= end
        assert not text[a].isspace() and not text[b - 1].isspace()
        previous = b
    assert "".join(text[start:end].split()) == "".join(
        "".join(text[a:b].split()) for a, b in sentences.split(text, start, end, lang))
