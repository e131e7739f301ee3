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
- Upright Latin letters whose cases differ only in size (s S, c C, o O ...) take the case
  their glyph's height says, against the page's x-height, and one read twice in both
  cases (xX) is one (``letter_cases``).
- Vertical Chinese columns that hold Latin are read by PP-OCR (the column turned) and by
  Tesseract ``chi_*_vert`` (upright); ``merge_reads`` merges the two reads.
- Curly quotes open before the text they quote and close after it: in a Chinese column a
  quote mark between a Han character (or CJK punctuation) and a Latin word opens (“), one
  between a Latin word and Han closes (”), one between Han and closing punctuation
  （正規表達式”）） closes, one after an opening bracket opens; the readers confuse the two
  (and the vertical forms of both). In the suite's 1271 zh-cn/zh-tw tuning paragraphs
  (spaces removed, as in a read) the rules turn 6 of 943 curly quotes the wrong way, each
  one the source itself sets the wrong way round (bin/init“，).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable

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


def dollars(text: str) -> str:
    """A column's read with the $ that Tesseract (jpn_vert or chi_*_vert) read twice, as $S
    or S$, put back (DOLLAR_READ_TWICE)."""
    return DOLLAR_READ_TWICE.sub("$", text)


def hyphens(text: str, low_line_strokes: int) -> str:
    """A column's read with hyphens misread as low lines put back (see the module doc)."""
    text = HYPHEN_RUN.sub(lambda m: "-" * max(1, m.group().count("-")), text)
    return text if low_line_strokes else text.replace("_", "-")


# Upright Latin in a Japanese column: each letter stands in its own cell, so ``jpn_vert``
# cannot tell the cases of a letter whose two forms differ only in size (``Screen``, ``SSh``
# for screen, ssh: about half the errors of the ja 16 pt serif tuning page). Its height
# can: an x-height letter against the x-height of the page's a e m n r (letters with no
# ascender and no same-shaped capital), a capital at least CAP_HEIGHT_RATIO of it (cap/x
# height 1.3-1.35 on the tuning faces; none of their letters flipped wrongly at 1.15-1.25).
CASE_BY_SIZE = set("cosuvwxz")
X_HEIGHT_LETTERS = set("aemnr")
CAP_HEIGHT_RATIO = 1.2
MIN_X_HEIGHT_LETTERS = 5  # fewer on the page: no x-height to judge by, the reads stand
# Only where the heights tell b d h k l from those: Latin set sideways (proportional, turned
# with the column) runs along the column by its widths, which say nothing of case
ASCENDER_LETTERS = set("bdhkl")
MIN_ASCENDERS = 3
NEAREST_GLYPH_EM = 0.25  # a placed letter with no ink on its row: the nearest glyph this close
LATIN_RUN = re.compile(f"[{LATIN}]*[A-Za-z\uff21-\uff3a\uff41-\uff5a][{LATIN}]*")  # one letter at least
STRETCH_MARGIN = 3
# jpn_vert reads one upright letter twice, in both cases (remotexX, #cCommand on the ja 16 pt
# serif tuning page): a letter beside its other case that PP-OCR, placing the stretch, read
# once is the second read (not APTtoolchain, where PP-OCR reads both t)
READ_TWICE = re.compile(r"([A-Za-z])(?!\1)(?i:\1)")

Placer = Callable[[list[np.ndarray]], list[tuple[str, float, list[float]]]]


def letter_cases(page: np.ndarray, boxes: list[tuple[int, int, int, int]], texts: list[str],
                 placed: Placer) -> list[str]:
    """Japanese columns' reads (``texts``, of the columns at ``boxes`` on ``page``) with each
    c o s u v w x z in the case its height says (see CASE_BY_SIZE). ``placed`` reads turned
    crops with each character's place along them (PP-OCR): the stretches of the columns
    that hold Latin (``_latin_stretches``); its letters, aligned with the read's (case
    folded), say where each letter of the read stands, and which letter jpn_vert read twice
    (``READ_TWICE``: dropped)."""
    stretches = [(i, start, end, page[y0:y1, boxes[i][0]:boxes[i][2]])
                 for i, text in enumerate(texts)
                 for start, end, y0, y1 in _latin_stretches(text, boxes[i][1], boxes[i][3])]
    if not stretches:
        return texts
    reads = placed([cv2.cvtColor(np.ascontiguousarray(np.rot90(crop)), cv2.COLOR_GRAY2BGR)
                    for _, _, _, crop in stretches])
    letters = [(i, start + k, letter, height) for (i, start, end, crop), (read, _, positions) in zip(stretches, reads)
               for k, letter, height in _letter_heights(crop, texts[i][start:end], read, positions)]
    x_heights = [height for _, _, letter, height in letters if letter in X_HEIGHT_LETTERS and height]
    ascenders = [height for _, _, letter, height in letters if letter in ASCENDER_LETTERS and height]
    if len(x_heights) < MIN_X_HEIGHT_LETTERS or len(ascenders) < MIN_ASCENDERS:
        return texts
    cap_height = CAP_HEIGHT_RATIO * float(np.median(x_heights))
    if np.median(ascenders) <= cap_height:  # not upright letters, or not where they were placed
        return texts
    out = [list(text) for text in texts]
    for i, k, letter, height in letters:
        if height is None:
            out[i][k] = ""
        elif letter.lower() in CASE_BY_SIZE:
            out[i][k] = out[i][k].upper() if height > cap_height else out[i][k].lower()
    return ["".join(chars) for chars in out]


def _latin_stretches(text: str, top: int, bottom: int) -> list[tuple[int, int, int, int]]:
    """(start, end) in a column's read and (top, bottom) rows on the page of each stretch of
    the column that holds Latin: its runs of letters and digits with a letter in them,
    STRETCH_MARGIN characters wider each way, placed by their share of the read (a column is
    one cell per character; a read that dropped or added a character or two is still inside
    the margin). PP-OCR reads these, not whole columns: a third less of its CPU (3.1 -> 2.0 s
    a page on the ja tuning pages under load), the same cases."""
    stretches: list[list[int]] = []
    for run in LATIN_RUN.finditer(text):
        start, end = max(0, run.start() - STRETCH_MARGIN), min(len(text), run.end() + STRETCH_MARGIN)
        if stretches and start <= stretches[-1][1]:
            stretches[-1][1] = end
        else:
            stretches.append([start, end])
    cell = (bottom - top) / max(1, len(text))
    return [(start, end, top + int(start * cell), top + int(np.ceil(end * cell))) for start, end in stretches]


def _letter_heights(column: np.ndarray, text: str, read: str,
                    positions: list[float]) -> list[tuple[int, str, int | None]]:
    """(index in ``text``, the letter, its glyph's height in pixels) for each Latin letter of
    a column's read that the placed ``read`` holds too, where ``positions`` place it; height
    None for a letter read twice (``READ_TWICE``)."""
    if not positions:
        return []
    _, labels, stats, _ = cv2.connectedComponentsWithStats(binarise(column), connectivity=8)
    reach = int(NEAREST_GLYPH_EM * column.shape[1])
    out: list[tuple[int, str, int | None]] = []
    matcher = difflib.SequenceMatcher(None, _folded(text), _folded(read), autojunk=False)
    for op, i1, i2, j1, _ in matcher.get_opcodes():
        if op == "delete" and i2 - i1 == 1 and READ_TWICE.search(text[max(0, i1 - 1):i1 + 2]):
            out.append((i1, nfkc(text[i1]), None))
        if op != "equal":
            continue
        for k, j in zip(range(i1, i2), range(j1, j1 + i2 - i1)):
            letter = nfkc(text[k])
            if not (letter.isascii() and letter.isalpha()):
                continue
            row = int(positions[j] * column.shape[0])
            for distance in range(reach + 1):  # the glyph on the letter's row, else the nearest
                rows = labels[[r for r in (row - distance, row + distance) if 0 <= r < column.shape[0]]]
                found = np.unique(rows[rows > 0])
                if found.size:
                    glyph = found[np.argmax(stats[found, cv2.CC_STAT_AREA])]
                    out.append((k, letter, int(stats[glyph, cv2.CC_STAT_HEIGHT])))
                    break
    return out


QUOTE_OPENS = re.compile(rf"(?<=[^{LATIN}\s!-/:-@\[-`{{-~])[“”](?=[{LATIN}])")
# After Latin, or an ASCII symbol but a comma, an opening bracket or a quote (“..”目錄, “<”或),
# a quote before Han or CJK punctuation closes: in the 1271 zh-cn/zh-tw tuning paragraphs
# 272 of 275 such quotes close (after an ASCII comma 48 of 48 open)
QUOTE_CLOSES = re.compile(rf"(?<=[{LATIN}!#-&)*+\-./:;<=>?@\\\]^_|}}~])[“”](?=[\u3000-\u303f\u3400-\u9fff\uff0c\uff1a\uff1b)\uff09])")
# After Han, a quote before closing punctuation closes (not before ASCII . : ? and the
# like, which code quotes: “.bak”, “:”); one after an opening bracket opens
QUOTE_BEFORE_CLOSING = re.compile(r"(?<=[\u3400-\u9fff])[“”](?=[)），。、；：！？」』])")
QUOTE_AFTER_OPENING = re.compile(r"(?<=[(（「『])[“”]")


def quote_direction(text: str) -> str:
    """Curly quotes of a Chinese column turned the way their neighbours say (see above)."""
    text = QUOTE_CLOSES.sub("”", QUOTE_OPENS.sub("“", text))
    return QUOTE_AFTER_OPENING.sub("“", QUOTE_BEFORE_CLOSING.sub("”", text))


# Kana in a Chinese column are Latin the readers took for kana (the 1271 zh-cn/zh-tw tuning
# paragraphs hold no kana and no ・): l read し, . read ・, X read メ, the 1 of bs=1M read ュ,
# the I of UUID read ェ
KANA_AS_LATIN = str.maketrans("し・メュェ", "l.X1I")
# PP-OCR reads an upright ｘ after a letter as × (regex read rege×); the 1271 zh tuning
# paragraphs hold no × at all, and a letter followed by x (not a letter after it) 190 times
TIMES_AFTER_LETTER = re.compile("(?<=[A-Za-z])×")


def latin_kana(text: str) -> str:
    """A Chinese column's read with the kana that stand for Latin, and an x read × after a
    letter, put back (see above)."""
    return TIMES_AFTER_LETTER.sub("x", text.translate(KANA_AS_LATIN))


# PP-OCR reads some characters of a traditional page in their simplified forms (參 read 参,
# 內 内, 裝 装, 虛 虚 on the zh-tw 14 pt sans tuning pages); of GB2312's characters that Big5
# lacks, the 630 zh-tw tuning paragraphs hold only 着 (twice in 58955 characters)
TRADITIONAL_FORMS = str.maketrans("参内装虚", "參內裝虛")

# Han, kana and CJK punctuation/brackets (not the full-width forms of ASCII)
CJK_TEXT = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\ufe10-\ufe4f]")


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _folded(text: str) -> list[str]:
    """``text`` as characters that align ignoring case and width (５ with 5, S with s)."""
    return [f if len(f := nfkc(c).lower()) == 1 else c for c in text]


def merge_reads(turned: str, upright: str, simplified: bool = False, traditional: bool = False) -> str:
    """One vertical Chinese column from PP-OCR's read (``turned``: the column turned into a
    line) and Tesseract ``chi_*_vert``'s (``upright``).

    Where the reads differ (aligned ignoring case and width: ５ is 5): Han and CJK
    punctuation from PP-OCR, which reads them better; Latin letters and digits from PP-OCR (Tesseract turns l
    into L, doubles letters and adds some after symbols); symbols from Tesseract, which
    sees them upright (PP-OCR drops ／ and ＿ and reads ＄ as s, ＇ as i, ： as .), in
    place of whatever PP-OCR read there. A 1 or 0 that PP-OCR read after a lower-case
    letter where Tesseract read l, I, o or O is the letter (turned, l and 1 look alike:
    "she11"; a run of 1 ending a word, ``_ones_for_ells``), and letters that PP-OCR read
    where Tesseract read the digits they look like on their side are the digits
    (TURNED_DIGITS: loopo is loop0). Where PP-OCR read only a symbol that looks like a letter against Tesseract's
    letters, Tesseract's read stands (x read ×; a $ read g stays $). A " that Tesseract
    does not confirm is a curly quote (UNCONFIRMED_QUOTE), and so is a 2 only Tesseract read.
    Tesseract's path symbols stand where PP-OCR read a kana (/l read し), its j where PP-OCR
    read 」, a slash after PP-OCR's curly quote (“/dev: PP-OCR drops the /), and a / or , it
    alone read between Latin and Han is a closing quote's ticks. A replaced span of equal
    length is merged character by character (``_one_of``); in an equal one the case of o u v
    w x z is Tesseract's (``_case_upright``). On a simplified page (``simplified``) PP-OCR's
    = where Tesseract read no symbol is an upright ＂ (two bars, turned). Tesseract's $S or
    S$ is one $ (``dollars``); an o it read O after a lower-case letter (before no letter),
    a digit or = is a 0 (``_tall_zeros``); a , it alone read before Han is an opening quote's
    ticks; on a traditional page (``traditional``) p takes Tesseract's case too. A closing
    paren only Tesseract read after a replaced span (符， against 竺),) is kept, and on a
    simplified page so is a 。 it alone read after a closing quote that ends the column
    (CLOSING_READS).
    """
    out = []
    cases = SAME_SHAPE_CASES | (TRADITIONAL_CASES if traditional else set())
    upright = dollars(upright.translate(DOUBLE_PRIME_QUOTES))
    matcher = difflib.SequenceMatcher(None, _folded(turned), _folded(upright), autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        ours, theirs = turned[i1:i2], upright[j1:j2]
        symbols = "".join(c for c in theirs if not c.isalnum())
        if op == "equal":
            out.append(_tall_zeros("".join(out)[-1:], ours, theirs, turned[i2:i2 + 1], cases))
        elif op == "replace" and DIGITS_FOR_LETTERS.fullmatch(ours) and LETTERS_LIKE_DIGITS.fullmatch(theirs) \
                and len(ours) == len(theirs) and ENDS_LOWER_CASE.search("".join(out)) \
                and not turned[i2:i2 + 1].isdigit():
            out.append(ours.translate(LETTERS_OF_DIGITS))  # she11 -> shell: 1 and 0 in a word
        elif op == "replace" and len(ours) == len(theirs) and \
                all((nfkc(a), b) in TURNED_DIGITS for a, b in zip(ours, theirs)):
            out.append(theirs)  # a digit turned on its side, read as the letter it then looks like
        elif op == "replace" and KANA_ONLY.fullmatch(ours) and PATH_FOR_KANA.fullmatch(theirs):
            after = turned[i2:i2 + 1] + "".join(out)[-1:]  # /l read し, ~/. read ・: a path's symbols
            out.append(theirs.replace("L", "l") if re.search("[a-z]", after) else theirs)
        elif op == "replace" and ours in "「」" and LETTER_FOR_BRACKET.fullmatch(theirs):
            out.append(theirs)  # /journal read 」ournal: a j on its side is a corner bracket
        elif simplified and op != "equal" and nfkc(ours) == "=" and not symbols:
            out.append('"')  # an upright ＂ turned: two bars, which only a simplified page sets
        elif op == "replace" and ours in ("“", "”") and SLASHES_FOR_QUOTE.fullmatch(theirs):
            out.append(ours + "/")  # “/dev: PP-OCR drops the slash, Tesseract reads the ticks as / too
        elif op == "insert" and theirs in ("/", ",") and ENDS_LATIN.search("".join(out)) \
                and CJK_TEXT.match(turned[i2:i2 + 1]):
            out.append("”")  # /dev/console”來: a closing quote's ticks only Tesseract read (as / or ,)
        elif op == "insert" and theirs == "," and CJK_TEXT.match(turned[i2:i2 + 1]):
            out.append("“")  # 選單：“動作 read 選單：,動作: an opening quote's ticks only Tesseract saw
        elif op == "insert" and theirs in TESSERACT_QUOTE_TICKS:
            out.append("“")  # a curly quote PP-OCR dropped, its ticks read 2 (turned by quote_direction)
        elif op == "replace" and len(theirs) > len(ours) and ours.isalnum() and theirs[:len(ours)].isalnum() \
                and not CJK_TEXT.search(ours) and not theirs[len(ours):].isalnum():
            rest = theirs[len(ours):]  # ttyS0” read ttySO: the letters as the rules say, then the symbols
            letters = merge_reads(ours, theirs[:len(ours)], simplified, traditional)
            out.append(letters + "".join(c for c in rest if not c.isalnum()))
        elif op == "replace" and len(theirs) == len(ours) + 1 and CLOSING_PAREN.fullmatch(theirs[-1]) \
                and not CLOSING_PAREN.search(ours):
            out.append(merge_reads(ours, theirs[:-1], simplified, traditional) + ")")  # 符， read 竺),: a closing paren only Tesseract saw
        elif op != "equal" and nfkc(ours) == '"' and nfkc(theirs) in UNCONFIRMED_QUOTE:
            out.append("“")  # a curly quote's ticks, which only the turned read took for "
        elif op == "replace" and ours and set(ours) <= SYMBOLS_LIKE_LETTERS and theirs[:1].isalpha() \
                and not CJK_TEXT.search(ours + theirs):
            out.append(theirs)  # a letter PP-OCR took for a symbol (x read ×) beside one it dropped
        elif op == "replace" and ours in ("“", "”") and theirs in (",", "，"):
            out.append(ours)  # 選單：“動作 read 選單：,動作: the ticks, which Tesseract took for a comma
        elif op == "replace" and len(ours) == len(theirs) and symbols:
            beside_han = bool(CJK_TEXT.search(ours + theirs))  # ps（1 指令 against ps(1)措令: ps（1)指令
            out.append("".join(_one_of(a, b, beside_han) for a, b in zip(ours, theirs)))
        elif op == "equal" or not symbols or CJK_TEXT.search(ours + theirs) or nfkc(ours) == nfkc(theirs):
            out.append(ours)
        else:
            out.append(symbols)
    merged = _ones_for_ells("".join(out), nfkc(upright))
    if simplified and upright.rstrip().endswith("。") and turned.rstrip()[-1:] in CLOSING_READS \
            and not merged.rstrip().endswith("。") and turned.rstrip()[-2:-1] != "。":  # (键。” is no 键。”。)
        merged = merged.rstrip() + "。"  # “TO_TEXT”。 read 『TO]TEXT』 / [TO_TEXT]=。 at a column's end
    return merged


def _case_upright(ours: str, theirs: str, cases: set[str]) -> str:
    """PP-OCR's letter in the case Tesseract read it, for letters whose two cases differ
    only in size (o u v w x z): turned, PP-OCR cannot tell them apart (Unix read unix).
    Not c and s, whose case Tesseract misread as often as PP-OCR on the tuning pages."""
    if nfkc(ours).lower() in cases and nfkc(ours) != nfkc(theirs):
        return ours.upper() if theirs.isupper() else ours.lower()
    return ours


def _tall_zeros(before: str, ours: str, theirs: str, after: str, cases: set[str]) -> str:
    """An equal span, letters in Tesseract's case (``_case_upright``), where an o that
    Tesseract read O (tall, as a 0 is upright; PP-OCR sees it turned, round) after a
    lower-case letter (and before no letter), a digit or = is a 0 (/dev/loop0 read loopO,
    count=0 read count=O)."""
    out = [_case_upright(a, b, cases) for a, b in zip(ours, theirs)]
    for k, (a, b) in enumerate(zip(ours, theirs)):
        context = (before + "".join(out[:k]))[-1:] + "O" + (ours[k + 1:] + after)[:1]
        if a == "o" and b == "O" and TALL_ZERO.fullmatch(context):
            out[k] = "0"
    return "".join(out)


def _one_of(ours: str, theirs: str, beside_han: bool) -> str:
    """One character of a replaced span the two reads hold at the same place: Han and CJK
    punctuation and letters from PP-OCR, symbols and turned digits from Tesseract; in a
    span with Han, Tesseract's symbols only where PP-OCR read a space (its — stays against
    Tesseract's -: 手冊——網路 read 手冊-網路 on a zh-tw tuning page, 16 pt serif)."""
    if CJK_TEXT.match(ours) or CJK_TEXT.match(theirs) or (beside_han and not ours.isspace()):
        return ours
    if (nfkc(ours), theirs) in TURNED_DIGITS or not theirs.isalnum():
        return theirs
    return ours


def _ones_for_ells(merged: str, upright: str) -> str:
    """A run of 1 that ends a lower-case word (she11) is the word's l's where Tesseract read
    that word with l or I there (shel1, shell): the merge takes letters turned one place at a
    time, and a 1 that Tesseract also read as 1 stood (she11 in 2 of every 3 "shell" of a
    zh-cn tuning page, 12 pt serif)."""
    def letters(match: re.Match[str]) -> str:
        word, ones = match.groups()
        upright_forms = re.findall(re.escape(word[-2:]) + f"[lI1]{{{len(ones)}}}(?![0-9])", upright)
        return word + "l" * len(ones) if any(re.search("[lI]", f[2:]) for f in upright_forms) else match.group()

    return ONES_ENDING_WORD.sub(letters, merged)

# Tesseract reads a curly quote's ticks as the double prime quotes 〝 〞 〟 (CJK
# punctuation to the merge, which would keep PP-OCR's read, often nothing)
DOUBLE_PRIME_QUOTES = str.maketrans("〝〞〟", "“””")
# Where PP-OCR reads " and Tesseract does not (nothing, "2", a curly quote), the ink is a
# curly quote: a full-width ＂ stands upright, and Tesseract, which sees it upright, reads
# it as " (PP-OCR, seeing it turned, drops it); the slanted ticks of “ ” are what PP-OCR
# reads as " and Tesseract as 2 or 2”. On a zh-tw tuning page (14 pt sans, JPEG mild) 13
# of the 16 errors were such quotes.
TESSERACT_QUOTE_TICKS = {"2", "2“", "2”"}  # Tesseract's reads of a curly quote's ticks
UNCONFIRMED_QUOTE = {"", "“", "”"} | TESSERACT_QUOTE_TICKS
# An upright digit in a column reaches PP-OCR on its side, where 0 looks like o, 9 like g
# and 1 like i; Tesseract, which sees it upright, reads the digit (loop0 read loopo,
# iso9660 isog66o, bs=1 bs=i by PP-OCR on a zh-tw tuning page, 13 pt sans, and right by
# Tesseract): where PP-OCR read only such letters against Tesseract's digits, the digits stand.
TURNED_DIGITS = {("o", "0"), ("O", "0"), ("g", "9"), ("i", "1")}
SYMBOLS_LIKE_LETTERS = {"×"}
KANA_ONLY = re.compile("[\u3041-\u3096\u30a1-\u30fa\u30fb]+")
SLASHES_FOR_QUOTE = re.compile("[2/]?/")
PATH_FOR_KANA = re.compile("[~/.]*/[~/.]*[A-Za-z]?")
LETTER_FOR_BRACKET = re.compile("/?[jJ]")
SAME_SHAPE_CASES = set("ouvwxz")
# A closing quote or bracket PP-OCR read at a column's end, and a 。 after it that only
# Tesseract read: on simplified pages the 。 stands (“TO_TEXT”。 read 『TO]TEXT』 and
# [TO_TEXT]=。 on a zh-cn tuning page, 16 pt serif, in every cell; no zh-cn tuning cell worse).
# Not on traditional pages: there chi_tra_vert read a 。 after 選單：“動作” that is not in the
# text, and two zh-tw tuning cells got worse.
CLOSING_READS = set("』」”）)")
CLOSING_PAREN = re.compile("[)）]")
# On traditional pages (chi_tra_vert) the case of p too: PP-OCR reads the turned ｐ of the TC
# faces as P (APache, GhostscriPt, OPenBSD on the zh-tw 12 and 16 pt serif tuning pages),
# Tesseract reads it right; on simplified pages chi_sim_vert reads p as P as often
TRADITIONAL_CASES = {"p"}
# Tesseract reads an upright $ before a command as $S or S$ ($ dd read $Sdd, $ rm read S$rm
# by chi_*_vert and jpn_vert; no ja, zh-cn or zh-tw tuning paragraph holds either, and where
# PP-OCR reads a column, it reads s there): one $ (but \$ is read \S$: PS1='\$')
DOLLAR_READ_TWICE = re.compile(r"\$S(?=[a-z])|(?<!\\)S\$")
# (in the zh tuning paragraphs, spaces removed, a lower-case letter is followed by 0 and then
# a non-letter 23 times, by O so never; by 0 or O and then a letter 10 and 8 times: FormattingObjects)
TALL_ZERO = re.compile("[a-z]O[^A-Za-z]?|[0-9=]O[^A-Z]?")
ENDS_LATIN = re.compile(f"[{LATIN}]$")
DIGITS_FOR_LETTERS = re.compile("[01]+")
LETTERS_LIKE_DIGITS = re.compile("[lIoO]+")
ENDS_LOWER_CASE = re.compile("[a-z]$")
LETTERS_OF_DIGITS = str.maketrans("10", "lo")
ONES_ENDING_WORD = re.compile("([a-z]{2,})(1+)(?![0-9])")
