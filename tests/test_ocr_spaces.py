"""The ideographic space after a statute's paragraph and item numbers, which the OCR engines
drop, restored from the page (pipeline/ocr/spaces.py), and the clause tags it gives back."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import render_scans
import scan_pages
from PIL import Image, ImageDraw, ImageFont

from pipeline.ocr import spaces
from pipeline.ocr.geometry import Line
from pipeline.stages import extract, language, structure

KINDS = Path(__file__).parent / "fixtures" / "kinds"
EM = 50  # 12 pt at 300 dpi


def typeset(text: str, vertical: bool) -> tuple[np.ndarray, Line]:
    """One line (or column) of ``text`` on a one-em grid, as a scan shows it, and its box."""
    font = ImageFont.truetype(str(render_scans.FONTS["ja"].path), EM, index=render_scans.FONTS["ja"].index)
    size = (2 * EM, (len(text) + 2) * EM) if vertical else ((len(text) + 2) * EM, 2 * EM)
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    for i, ch in enumerate(text):
        at = (EM // 2, EM + i * EM) if vertical else (EM + i * EM, EM // 2)
        draw.text(at, ch, font=font, fill=20, direction="ttb" if vertical else None,
                  features=["vert"] if vertical else None)
    page = np.asarray(image)
    rows, cols = np.flatnonzero((page < 128).any(axis=1)), np.flatnonzero((page < 128).any(axis=0))
    return page, Line(box=(int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1), frame=0,
                      starts_paragraph=True)


@pytest.mark.parametrize("vertical", [False, True])
@pytest.mark.parametrize("printed, read, restored", [
    ("一　法令　法律、", "一法令法律、", "一\u3000法令法律、"),  # 号: only the number's space is put back
    ("十六　前号に", "十六前号に", "十六\u3000前号に"),
    ("２　前項の", "2前項の", "２\u3000前項の"),  # 項: PP-OCR's ASCII digit becomes the cell's
    ("２　前項の", "2 前項の", "２\u3000前項の"),  # its narrow space, the cell's
    ("二十一　前号", "二十一前号", "二十一\u3000前号"),
    ("ロ　地方", "ロ地方", "ロ\u3000地方"),  # 号の細分
    ("第三条　次に", "第三条次に", "第三条次に"),  # not a number: the article pattern needs no space
    ("一般に法令", "一般に法令", "一般に法令"),  # no empty cell: the same character starts a word
    ("２０２６年に", "2026年に", "2026年に"),
])
def test_a_space_the_page_shows_after_the_first_cells_is_put_back(printed, read, restored, vertical):
    page, line = typeset(printed, vertical)
    direction = "vertical" if vertical else "horizontal"
    assert spaces.restore_leading_spaces(page, [line], [read], [direction]) == [restored]


def test_a_columns_item_one_read_as_a_stroke_along_it_is_one():
    """jpn_vert reads the flat stroke of 一 across a column as a line along it ("|法律")."""
    page, line = typeset("一　法律の", vertical=True)
    assert spaces.restore_leading_spaces(page, [line], ["|法律の"], ["vertical"]) == ["一\u3000法律の"]
    page, line = typeset("ー　法律の", vertical=True)  # a stroke along the column stays what it is
    assert spaces.restore_leading_spaces(page, [line], ["|法律の"], ["vertical"]) == ["|法律の"]


def test_latin_and_a_read_that_does_not_fit_the_cells_are_left_alone():
    page, line = typeset("一　法令", vertical=False)
    assert spaces.restore_leading_spaces(page, [line], ["A law"], ["horizontal"]) == ["A law"]
    assert spaces.restore_leading_spaces(page, [line], ["一"], ["horizontal"]) == ["一"]


@pytest.mark.parametrize("name, engine", [("ja-statute-horizontal", "rapidocr"), ("ja-statute-vertical", "jpn_vert")])
def test_a_scanned_statutes_paragraphs_and_items_are_tagged(settings, name, engine):
    pdf = KINDS / f"{name}.pdf"
    printed = pdf.with_suffix(".txt").read_text(encoding="utf-8").splitlines()
    cleaned = language.clean_and_detect(extract.extract_file(pdf, settings, doc_id=name), settings)
    assert engine in cleaned.engines[0]
    tagged = Counter((e.level, e.number) for e in structure.tag(cleaned).elements if e.type == "CLAUSE")
    expected = Counter((4 if line[0] == "２" else 5, line.split("\u3000")[0]) for line in printed)
    assert tagged == expected
    assert scan_pages.cer("\n".join(printed), cleaned.text) <= 3.0
