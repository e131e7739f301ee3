"""Script and typography facts that repair the reads of vertical columns (Japanese by
Tesseract; quotes in Chinese by either reader).

- Small ゃゅょ (ャュョ) only follow an i-row kana (き し ち に ひ み り and their voiced
  forms; in katakana also テ デ フ ヴ: テュ デュ フュ ヴュ). After anything else the glyph
  is the full-size kana, which ``jpn_vert`` reads as small beside upright Latin
  ("Perl や APT"); next to its own full-size form it is a second read of that glyph, and
  so is a kana read twice between two Latin letters or digits ("Perl やや APT": a particle
  between two words is one kana; the adverb やや is not set between Latin words).
  Any small kana (ぁぃぅぇぉっ ァィゥェォッ too) belongs to the kana before it, so after a
  Latin letter or digit it is full-size ("telnet エスケープ", "8164 つの").
- Upright Latin in a column (Ｄｅｂｉａｎ, ａｐｔ－ｇｅｔ) keeps its horizontal hyphen,
  while the vertical form of the low line (＿ -> ︳) is a vertical stroke at the left edge
  of its cell. ``jpn_vert`` reads the hyphen as ``_``, ``-_`` or ``_-``: a run of hyphens
  and low lines is as many hyphens as it holds (at least one), and where the column holds
  no stroke at the left edge (``low_lines``) there is no low line in it at all.
- Curly quotes open before the text they quote and close after it: in a Chinese column a
  quote mark between a Han character (or CJK punctuation) and a Latin word opens (“), one
  between a Latin word and Han closes (”), one between Han and closing punctuation
  （正規表達式”）） closes, one after an opening bracket opens; the readers confuse the two
  (and the vertical forms of both). In the suite's 1271 zh-cn/zh-tw tuning paragraphs
  (spaces removed, as in a read) the rules turn 6 of 943 curly quotes the wrong way, each
  one the source itself sets the wrong way round (bin/init“，).
"""

from __future__ import annotations

import re

import cv2
import numpy as np

from pipeline.ocr.geometry import binarise

SMALL_TO_FULL = str.maketrans("ぁぃぅぇぉっゃゅょァィゥェォッャュョ", "あいうえおつやゆよアイウエオツヤユヨ")
SMALL_YA = re.compile("[ゃゅょャュョ]")
SMALL_OTHER = re.compile("[ぁぃぅぇぉっァィゥェォッ]")
# kana a small ゃゅょ (ャュョ) may follow
YOON_BEFORE = set("きぎしじちぢにひびぴみり" "キギシジチヂニヒビピミリテデフヴ")
LATIN = r"A-Za-z0-9\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
LATIN_CHAR = re.compile(f"[{LATIN}]")
KANA_TWICE = re.compile(rf"(?<=[{LATIN}])([\u3041-\u30fa])\1(?=[{LATIN}])")
HYPHEN_RUN = re.compile(r"[-_]*(?:-_|_-)[-_]*")
# A low line's vertical form: a stroke at least this long (of the column's width) and at
# most this thick, its centre in the left LOW_LINE_EDGE of the column.
LOW_LINE_LENGTH = 0.9
LOW_LINE_THICKNESS = 0.15
LOW_LINE_EDGE = 0.3


def small_kana(text: str, before: str = "") -> str:
    """``text`` with each small ゃゅょ (ャュョ) that does not follow an i-row kana, and each
    small kana after a Latin letter or digit, made full-size, or dropped next to its own
    full-size form; ``before`` is the character read before the column (the end of the
    previous one)."""
    out: list[str] = []
    for i, ch in enumerate(text):
        previous = out[-1] if out else before[-1:]
        if (SMALL_YA.fullmatch(ch) and previous not in YOON_BEFORE) or \
                (SMALL_OTHER.fullmatch(ch) and LATIN_CHAR.fullmatch(previous)):
            full = ch.translate(SMALL_TO_FULL)
            if previous == full or text[i + 1:i + 2] == full:
                continue
            ch = full
        out.append(ch)
    return KANA_TWICE.sub(r"\1", "".join(out))


def low_lines(column: np.ndarray) -> int:
    """Vertical strokes at the left edge of a column crop (8-bit gray, the column's ink
    box): the vertical form of ＿."""
    width = column.shape[1]
    if width == 0 or column.shape[0] == 0:
        return 0
    count, _, stats, _ = cv2.connectedComponentsWithStats(binarise(column), connectivity=8)
    x, w, h = stats[1:, cv2.CC_STAT_LEFT], stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
    stroke = (h >= LOW_LINE_LENGTH * width) & (w <= LOW_LINE_THICKNESS * width) & (x + w / 2 <= LOW_LINE_EDGE * width)
    return int(np.count_nonzero(stroke))


def hyphens(text: str, low_line_strokes: int) -> str:
    """A column's read with hyphens misread as low lines put back (see the module doc)."""
    text = HYPHEN_RUN.sub(lambda m: "-" * max(1, m.group().count("-")), text)
    return text if low_line_strokes else text.replace("_", "-")


QUOTE_OPENS = re.compile(rf"(?<=[^{LATIN}\s!-/:-@\[-`{{-~])[“”](?=[{LATIN}])")
QUOTE_CLOSES = re.compile(rf"(?<=[{LATIN}])[“”](?=[\u3000-\u303f\u3400-\u9fff\uff0c\uff1a\uff1b])")
# After Han, a quote before closing punctuation closes (not before ASCII . : ? and the
# like, which code quotes: “.bak”, “:”); one after an opening bracket opens
QUOTE_BEFORE_CLOSING = re.compile(r"(?<=[\u3400-\u9fff])[“”](?=[)），。、；：！？」』])")
QUOTE_AFTER_OPENING = re.compile(r"(?<=[(（「『])[“”]")


def quote_direction(text: str) -> str:
    """Curly quotes of a Chinese column turned the way their neighbours say (see above)."""
    text = QUOTE_CLOSES.sub("”", QUOTE_OPENS.sub("“", text))
    return QUOTE_AFTER_OPENING.sub("“", QUOTE_BEFORE_CLOSING.sub("”", text))
