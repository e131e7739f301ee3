"""OCR of one rasterised page: deskew, orientation, layout, then the engine measured best.

The steps, in order, and the facts behind them:

- Writing axis and deskew (pipeline.ocr.geometry): OpenCV closing along x vs along y
  tells rows from columns of text (Tesseract OSD cannot tell vertical from horizontal
  writing); the skew angle (within +-3.5 deg) is the one that makes the ink's row or
  column profile sharpest.
- Layout by projection profiles (pipeline.ocr.layout): horizontal pages split into text
  columns at blank gutters, then into lines; vertical pages split into tiers at blank
  bands (two-tier 段組 pages), then into columns read right to left. Lines become
  paragraph blocks at indents and short last lines. A region written the other way (a
  horizontal heading over vertical text) is laid out and read on its own, in its
  direction (``islands``).
- Orientation: 0 vs 180 by PP-OCR recognition confidence of a few sample lines read
  both ways. CJK text then asks Tesseract OSD for the glyph orientation, because a
  vertical page turned by 90 deg looks like a horizontal one, and vertical Japanese and
  Chinese must know which it is to pick their engines. (Latin text reads the same
  either way: a vertical column and a horizontal line turned by 90 deg give the
  recogniser the same image.)
- Recognition (engines in pipeline.ocr.engines): PP-OCR's recogniser from the rapidocr
  wheel on the line and column crops; vertical Japanese with Tesseract ``jpn_vert --psm
  5`` per tier (keeps ー 、。 and small kana that PP-OCR drops; whole-page --psm 5 fails
  on two-tier pages; PP-OCR places its Latin letters, whose heights give their case).
  Vertical Chinese columns that hold Latin are read by both: PP-OCR
  sees the column turned, so the upright full-width symbols of code (／ ＄ ＿ ＇ ：)
  reach it sideways and are dropped or misread, while Tesseract's ``chi_*_vert`` reads
  them upright; the two reads are merged character by character (``columns.merge_reads``).

Boxes are returned in the pixel frame of the page as given (before any rotation).
"""

from __future__ import annotations

import difflib
import logging
import re
import subprocess
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import numpy as np

from pipeline.contracts import Direction
from pipeline.ocr import columns, quotes
from pipeline.ocr.engines import (Recogniser, osd_rotation, recogniser, spaced_tier, tesseract_columns,
                                  tesseract_version)
from pipeline.ocr.geometry import Line, deskew, detect_direction, islands, other_direction, rotate90, unrotate_box
from pipeline.ocr.layout import layout, line_crop
from pipeline.ocr.noise import clean_page
from pipeline.ocr.spaces import restore_leading_spaces

log = logging.getLogger(__name__)

# Kana letters, not ー or ・: readers put those for the dashes and dots of any CJK text (a
# zh-cn column's apt-listchanges read as aｐtーlistｃhaｎgｅ made a sample look Japanese,
# and the page was read by jpn_vert: 20.7 % CER)
KANA = re.compile(r"[\u3041-\u3096\u30a1-\u30fa]")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
# A kana letter with neither Han nor kana on either side is a misread of Latin or a symbol,
# and does not count as kana: in code columns the readers take the 1 of bs=1M for ュ, the
# l of /mnt/loop for し, the I of UUID for ェ (zh-tw and zh-cn tuning pages, 13 pt sans,
# judged Japanese on such kana and read by jpn_vert at 9-14 % CER). Japanese text keeps
# its kana beside other kana and Han.
LONE_KANA = re.compile(r"(?<![\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff])[\u3041-\u3096\u30a1-\u30fa]"
                       r"(?![\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff])")
# A column with any of these (after NFKC) is read by Tesseract too: see columns.merge_reads
LATIN_OR_SYMBOL = re.compile(r"[!-~]")
SAMPLE_LINES = 4
# When the sample of a vertical page holds neither Han nor kana, the script is judged on
# this many more lines: the longest columns of a Chinese page can all be code (on a zh-cn
# page of tuning paragraphs the four longest were `$ touch foo bar ...` listings), and a
# page without a script was read without Tesseract's merge and the Chinese column rules
# (10.4 % CER instead of 4.3 %). (Horizontal pages are read by PP-OCR in every script.)
SCRIPT_LINES = 8
# A sample judged Japanese on fewer kana than this (LONE_KANA aside) is judged again with
# SCRIPT_LINES more lines: the sample of a zh-tw tuning page (13 pt sans, moderate dust,
# the four longest columns mostly code) held 16 CJK characters and one kana beside Han
# (這裡的ェsolinux: the I of Isolinux), enough for Japanese; the heads of the next eight
# columns hold 30 more Han and no kana but lone ones.
SURE_KANA = 3
# Two reads of a vertical Chinese column are merged only when they agree on this share
# of their characters (difflib ratio): less means one of them misread the column.
MERGE_MIN_AGREEMENT = 0.6
# A line (column) candidate PP-OCR reads with a lower recognition score (the mean of its
# characters' probabilities) is not text: on the degradation suite's tuning pages (clean;
# dust, fax, JPEG at mild and moderate) no horizontal line scored under 0.88 and no zh-cn
# column under 0.73, while the lines read from the drawings of texlive-science-doc's
# figure pages (diagrams, formulas, chemistry) scored 0.11-0.72, most under 0.65
# ('=(a++1 we cpend', '(x,)=( ))()= i+ )', a lone '1').
MIN_LINE_SCORE = 0.65
# SECOND_OPINION: on a vertical Chinese page a column under MIN_LINE_SCORE is read by
# Tesseract chi_*_vert too, and kept (merged) where the two reads agree as a merge needs
# (MERGE_MIN_AGREEMENT). PP-OCR sees a column turned, so upright Latin reaches it on its side,
# and a column of code can score under the bar though it is text: the `ls -li` listing of
# the zh-cn 13 pt sans measurement page (`-rw-r--r-- 1 root root 0 2008-09-15`) scored
# 0.84-0.90 clean and 0.61-0.63 after moderate JPEG or dust, and those whole columns were
# dropped (11.8 / 7.0 % CER, 0.95 clean); tuning pages of that style typeset from other
# paragraphs lost `/usr/share/common-licenses/GPL` (0.648, dust; 9.40 % CER, 3.17 % kept),
# `$ gs -q -dNOPAUSE ...` (0.592, JPEG; 7.19 -> 3.35 %) and, zh-tw, `CDPATH=.:/usr/share/doc...`
# (0.649, dust; 9.21 -> 2.94 %), and a short last column 打开。 (0.574).


@dataclass(frozen=True)
class OcrBlock:
    text: str
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom in pixels of the input page
    engine: str
    direction: Direction = "horizontal"


@dataclass
class PageOcr:
    blocks: list[OcrBlock]
    direction: Direction
    rotation: int  # degrees clockwise the page was turned to read it: 0, 90, 180, 270
    engines: list[str] = field(default_factory=list)
    rejected: list[tuple[str, float]] = field(default_factory=list)  # reads under MIN_LINE_SCORE, with it
    from_cache: bool = False  # read before, by this same code (pipeline/ocr/cache.py)


def _kana(text: str) -> int:
    """Kana letters that stand beside Han or kana (see LONE_KANA)."""
    return len(KANA.findall(text)) - len(LONE_KANA.findall(text))


def looks_japanese(text: str) -> bool:
    cjk = len(CJK.findall(text)) - len(LONE_KANA.findall(text))
    return cjk > 0 and _kana(text) / cjk > 0.05


def cjk_script(text: str) -> str | None:
    """"ja" for text with kana, "zh" for other Han text, None for text without either
    (kana among Latin do not count: LONE_KANA)."""
    if looks_japanese(text):
        return "ja"
    return "zh" if len(CJK.findall(text)) > len(LONE_KANA.findall(text)) else None


def page_script(sample: str, more: Callable[[], str] | None = None) -> str | None:
    """The script (``cjk_script``) of a page from its sample's read; where the sample does
    not decide it (no Han or kana, or fewer than SURE_KANA kana), from the sample and the
    read of SCRIPT_LINES more lines (``more``, when given) together."""
    script = cjk_script(sample)
    if more is not None and (script is None or (script == "ja" and _kana(sample) < SURE_KANA)):
        script = cjk_script(sample + more())
    return script


# Vertical presentation forms (︒ ︑ ﹁ ﹂ ︵ ︶ ...) that a reader may return: their
# horizontal forms are the text (NFKC maps each to it)
VERTICAL_FORMS = re.compile(r"[\ufe10-\ufe19\ufe30-\ufe4f]")
# In a column, a hyphen between Latin letters or digits reaches the readers as a
# vertical stroke: read as 一, ー, 丨 or |. (Not _: Tesseract reads dh_auto_configure's
# underscores right, and mapping its _ to - cost the clean benchmark's vertical pages.)
COLUMN_HYPHEN = re.compile(r"(?<=[A-Za-z0-9\uff10-\uff19\uff21-\uff3a\uff41-\uff5a])[一ー丨|](?=[A-Za-z0-9\uff10-\uff19\uff21-\uff3a\uff41-\uff5a])")
# 。 set in its vertical position (the top right of its cell) is read as a degree sign
DEGREE_FOR_STOP = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff])°")


# PP-OCR reads the vertical forms of “ ” in simplified Chinese columns as 『 』, which
# simplified Chinese does not use (none in the 641 zh-cn tuning paragraphs, 142 with “).
# Traditional Chinese uses 『』 itself, so its reads are left alone.
# Their white corners also come out as [ ] (142 of the tuning paragraphs hold “, 14 hold [);
# quote_direction then turns each the way its neighbours say.
SIMPLIFIED_QUOTES = str.maketrans({"『": "“", "』": "”"})
# ... but a bracket with ASCII on its outer side is one (Unit]Desc, "$x"];)
CORNER_READ_AS_BRACKET = re.compile(r"(?<![!-~])\[|\](?![!-~])")
# A curly quote a reader returns on a simplified page is the upright ＂ of an ASCII quote:
# the page's curly quotes are set as 『』, which the readers return as 『』 or [ ]
CURLY_FOR_ASCII = str.maketrans("“”", '""')


# (Tesseract reads the two ticks of one ＂ as "” at times: noexpandtab"”和)
TICKS_READ_TWICE = re.compile('"[“”]|[“”]"')


def simplified_quotes(text: str) -> str:
    """A simplified Chinese column's quotes put back (see above)."""
    text = TICKS_READ_TWICE.sub('"', text).translate(CURLY_FOR_ASCII).translate(SIMPLIFIED_QUOTES)
    return CORNER_READ_AS_BRACKET.sub(lambda m: "“" if m.group() == "[" else "”", text)


def vertical_punctuation(text: str) -> str:
    """A column's read with the punctuation of vertical setting put back (see above)."""
    text = VERTICAL_FORMS.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    text = DEGREE_FOR_STOP.sub("。", text)
    return COLUMN_HYPHEN.sub("-", text)


def _sample_crops(page: np.ndarray, lines: list[Line], direction: Direction, skip: int = 0,
                  count: int = SAMPLE_LINES) -> list[np.ndarray]:
    """The first ~16 characters of the longest lines (``count`` of them, after the ``skip``
    longest): enough to tell orientation and script."""
    def length(line: Line) -> int:
        return line.box[2] - line.box[0] if direction == "horizontal" else line.box[3] - line.box[1]

    crops = []
    for line in sorted(lines, key=length, reverse=True)[skip:skip + count]:
        x0, y0, x1, y1 = line.box
        thickness = (y1 - y0) if direction == "horizontal" else (x1 - x0)
        short = (x0, y0, min(x1, x0 + 16 * thickness), y1) if direction == "horizontal" else \
            (x0, y0, x1, min(y1, y0 + 16 * thickness))
        crops.append(line_crop(page, short, direction))
    return crops


def _mean_score(results: list[tuple[str, float]]) -> float:
    return float(np.mean([s for _, s in results])) if results else 0.0


def _blocks(lines: list[Line], texts: list[str], engines: list[str], directions: list[Direction],
            rotation: int, shape: tuple[int, int]) -> list[OcrBlock]:
    """Paragraph blocks from lines (one text line per line or column, joined by newlines; a word
    broken at a line end keeps the next line, short as its line may be); ``engines`` and
    ``directions`` are per line (a block's lines share a frame, and so a direction)."""
    blocks: list[OcrBlock] = []
    group: list[tuple[Line, str, str, Direction]] = []

    def flush() -> None:
        if not group:
            return
        text = "\n".join(t for _, t, _, _ in group if t)
        if text.strip():
            boxes = np.array([line.box for line, _, _, _ in group])
            box = (*boxes[:, :2].min(axis=0).tolist(), *boxes[:, 2:].max(axis=0).tolist())
            engine = " + ".join(dict.fromkeys(e for _, _, e, _ in group))
            bbox = unrotate_box(box, rotation, shape)  # type: ignore[arg-type]
            blocks.append(OcrBlock(text=text, bbox=bbox, engine=engine, direction=group[0][3]))
        group.clear()

    for line, text, engine, direction in zip(lines, texts, engines, directions):
        broken = group and group[-1][1].endswith("-") and group[-1][1][-2:-1].isalpha() and text.strip()[:1].isalpha()
        if group and ((line.starts_paragraph and not broken) or line.frame != group[-1][0].frame):
            flush()
        group.append((line, text.strip(), engine, direction))
    flush()
    return blocks


def _tesseract_engine(model: str) -> str:
    return f"tesseract-{tesseract_version()}:{model}:psm5"


def _vertical_tiers(page: np.ndarray, lines: list[Line], model: str,
                    wanted: list[int] | None = None) -> dict[int, str]:
    """Tesseract's read of each of the columns ``wanted`` (indices into ``lines``; all by
    default), one tier at a time."""
    wanted = list(range(len(lines))) if wanted is None else wanted
    reads: dict[int, str] = {}
    for frame in sorted({lines[i].frame for i in wanted}):
        reads |= _tier_columns(page, lines, [i for i in wanted if lines[i].frame == frame], model)
    return reads


def _tier_columns(page: np.ndarray, lines: list[Line], members: list[int], model: str) -> dict[int, str]:
    """Tesseract's read of these columns of one tier, one line of its output per column.
    Where it merged or split columns (its lines do not match the columns in number), each
    half is read again, down to single columns: the whole tier had been left unmerged, and
    a zh-cn page with one such tier read at 6.3 % CER instead of 2 %."""
    columns = tesseract_columns(spaced_tier(page, [lines[i] for i in members]), model)
    if len(columns) == len(members):
        return dict(zip(members, columns))
    if len(members) == 1:  # a column Tesseract split: its lines in order
        return {members[0]: "".join(columns)}
    half = len(members) // 2
    return _tier_columns(page, lines, members[:half], model) | _tier_columns(page, lines, members[half:], model)


def ocr_page(gray: np.ndarray, vertical_models: dict[str, str], rec: Recogniser | None = None) -> PageOcr:
    """OCR one page (8-bit grayscale) with the engine measured best for its script and direction.

    ``vertical_models`` names the Tesseract vertical model per script: "ja", "zh"
    (simplified Chinese) and "zh-Hant" (traditional). ``rec`` reads the line crops;
    by default the PP-OCR recogniser from the rapidocr wheel.
    """
    rec = rec or recogniser()
    shape = gray.shape[:2]
    cleaned = clean_page(gray)
    if cleaned is None:  # noise or a blank page: nothing to read
        return PageOcr(blocks=[], direction="horizontal", rotation=0)
    gray = cleaned
    direction = detect_direction(gray)
    page = deskew(gray, direction)
    lines = layout(page, direction)
    if not lines:
        return PageOcr(blocks=[], direction=direction, rotation=0)
    sample = _sample_crops(page, lines, direction)
    upright = rec.read(sample)
    flipped = rec.read([np.ascontiguousarray(np.rot90(c, 2)) for c in sample])
    rotation = 0
    if _mean_score(flipped) > _mean_score(upright) + 0.05:
        rotation, upright = 180, flipped
    def more_lines() -> str:
        more = _sample_crops(page, lines, direction, skip=SAMPLE_LINES, count=SCRIPT_LINES)
        if rotation == 180:
            more = [np.ascontiguousarray(np.rot90(c, 2)) for c in more]
        return "".join(t for t, _ in rec.read(more))

    # only columns need the script
    script = page_script("".join(t for t, _ in upright),
                         more_lines if direction == "vertical" and len(lines) > SAMPLE_LINES else None)
    if script in vertical_models:
        glyphs = osd_rotation(rotate90(page, rotation))
        if glyphs is not None:
            rotation = (rotation + glyphs) % 360
            if glyphs in (90, 270):
                direction = other_direction(direction)
    if rotation in (90, 270):  # the writing axis changed: deskew and lay out again
        page = deskew(rotate90(gray, rotation), direction)
        lines = layout(page, direction)
    elif rotation == 180:
        page = rotate90(page, 180)
        lines = layout(page, direction)
    regions = islands(page, direction, lines)
    if regions:  # the page's own layout without them
        main = page.copy()
        for x0, y0, x1, y1 in regions:
            main[y0:y1, x0:x1] = 255
        lines = layout(main, direction)
    read, rejected = _read(page, lines, direction, script, vertical_models, rec)
    reads = [(read, direction)]
    other = other_direction(direction)
    for number, (x0, y0, x1, y1) in enumerate(regions, start=1):
        inside = layout(np.ascontiguousarray(page[y0:y1, x0:x1]), other)
        placed = [Line(box=(l.box[0] + x0, l.box[1] + y0, l.box[2] + x0, l.box[3] + y0),
                       frame=1000 * number + l.frame, starts_paragraph=l.starts_paragraph) for l in inside]
        read, island_rejected = _read(page, placed, other, script, vertical_models, rec)
        rejected += island_rejected
        if read[0]:
            reads.append((read, other))
    if rejected:
        log.debug("%d line candidate(s) under recognition score %.2f rejected: %s", len(rejected), MIN_LINE_SCORE,
                  "; ".join(f"{text!r} {score:.2f}" for text, score in rejected))
    lines, texts, engines, directions = _in_reading_order(reads)
    if script is not None:  # CJK: a statute's 項 and 号 numbers stand apart by a space (ocr.spaces)
        texts = restore_leading_spaces(page, lines, texts, directions)
    blocks = _blocks(lines, texts, engines, directions, rotation, shape)
    used = [name for line_engines in engines for name in line_engines.split(" + ")]
    return PageOcr(blocks=blocks, direction=direction, rotation=rotation, engines=list(dict.fromkeys(used)),
                   rejected=rejected)


Read = tuple[list[Line], list[str], list[str]]  # lines, their texts, their engines


def _read(page: np.ndarray, lines: list[Line], direction: Direction, script: str | None,
          vertical_models: dict[str, str], rec: Recogniser) -> tuple[Read, list[tuple[str, float]]]:
    """Text of the lines (or columns) of one direction, by the engine for the script, and
    the reads of the line candidates PP-OCR scored under MIN_LINE_SCORE, which are left out
    (Tesseract's reads of vertical Japanese carry no score and are all kept)."""
    if script == "ja" and direction == "vertical" and "ja" in vertical_models:
        engines = [_tesseract_engine(vertical_models["ja"])] * len(lines)
        reads = _vertical_tiers(page, lines, vertical_models["ja"])
        texts = _kana_and_hyphens(page, lines, [vertical_punctuation(reads[i]) for i in range(len(lines))])
        if getattr(rec, "placed", None):  # upright Latin's case by its height
            texts = columns.letter_cases(page, [l.box for l in lines], texts, rec.placed)
        return (lines, texts, engines), []
    crops = [line_crop(page, l.box, direction) for l in lines]
    placed = rec.placed(crops) if getattr(rec, "placed", None) and script == "zh" and direction == "vertical" else None
    results = [(text, score) for text, score, _ in placed] if placed is not None else rec.read(crops)
    texts = read = [text for text, _ in results]
    engines = [rec.name] * len(lines)
    shown: list[str] = []  # the curly quotes of each column's ticks
    if placed is not None and (forms := _forms(texts)) in ("traditional", "simplified"):  # quotes (ocr.quotes)
        texts, shown = quotes.restore_quotes(page, [l.box for l in lines], texts, [p for _, _, p in placed],
                                             forms == "traditional")
    doubtful = {i for i, (text, score) in enumerate(results) if score < MIN_LINE_SCORE and text.strip()}
    confirmed: set[int] = set()
    if script == "zh" and direction == "vertical" and "zh" in vertical_models:
        texts, engines = _merge_vertical_chinese(page, lines, texts, engines, vertical_models, doubtful, read)
        texts = [quotes.turn_as_ticks(t, s) for t, s in zip(texts, shown)] if shown else texts
        confirmed = {i for i in doubtful if engines[i] != rec.name}  # SECOND_OPINION: Tesseract read it alike
    rejected = [results[i] for i in sorted(doubtful - confirmed)]
    keep = [i for i, (_, score) in enumerate(results) if score >= MIN_LINE_SCORE or i in confirmed]
    lines, texts, engines = [lines[i] for i in keep], [texts[i] for i in keep], [engines[i] for i in keep]
    if direction == "vertical":
        texts = [vertical_punctuation(t) for t in texts]
        forms = _forms(texts) if script == "zh" else None
        if forms == "simplified":
            texts = [simplified_quotes(t) for t in texts]
        elif forms == "traditional":
            texts = [t.translate(columns.TRADITIONAL_FORMS) for t in texts]
        if script == "zh":
            texts = [columns.quote_direction(columns.latin_kana(t)) for t in texts]
    return (lines, texts, engines), rejected


def _kana_and_hyphens(page: np.ndarray, lines: list[Line], texts: list[str]) -> list[str]:
    """Small ゃゅょ and hyphens in vertical Japanese columns put right (pipeline.ocr.columns)."""
    strokes = [columns.low_lines(page[l.box[1]:l.box[3], l.box[0]:l.box[2]]) for l in lines]
    out, before = [], ""
    for text, count in zip(texts, strokes):
        out.append(columns.dollars(columns.small_kana(columns.hyphens(text, count), before)))
        before = out[-1][-1:] or before
    return out


def _forms(texts: list[str]) -> str:
    from pipeline.text.langid import chinese_forms

    return chinese_forms("".join(texts))


def _in_reading_order(reads: list[tuple[Read, Direction]]) -> tuple[list[Line], list[str], list[str], list[Direction]]:
    """The page's own lines in their order, each island's lines before the first of them
    that starts below the island (a heading before the body under it)."""
    (lines, texts, engines), direction = reads[0]
    out = [(l, t, e, direction) for l, t, e in zip(lines, texts, engines)]
    for (i_lines, i_texts, i_engines), i_direction in reads[1:]:
        bottom = max(l.box[3] for l in i_lines)
        at = next((k for k, (l, _, _, d) in enumerate(out) if d == direction and l.box[1] >= bottom), len(out))
        out[at:at] = [(l, t, e, i_direction) for l, t, e in zip(i_lines, i_texts, i_engines)]
    return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out], [o[3] for o in out]


def _merge_vertical_chinese(page: np.ndarray, lines: list[Line], texts: list[str], engines: list[str],
                            vertical_models: dict[str, str], doubtful: Collection[int] = (),
                            read: list[str] | None = None) -> tuple[list[str], list[str]]:
    """Columns whose PP-OCR read holds Latin, and the ``doubtful`` ones (scored under
    MIN_LINE_SCORE; see SECOND_OPINION), read again by Tesseract and merged
    (``columns.merge_reads``; Latin as PP-OCR ``read`` it, before ``quotes``); a column where
    the two reads share too little is left as PP-OCR read it (and keeps PP-OCR's engine name alone)."""
    from pipeline.text.langid import chinese_forms

    forms = chinese_forms("".join(t for i, t in enumerate(texts) if i not in doubtful))
    model = vertical_models.get("zh-Hant", vertical_models["zh"]) if forms == "traditional" else vertical_models["zh"]
    latin = [i for i, t in enumerate(read or texts) if LATIN_OR_SYMBOL.search(columns.nfkc(t)) and i not in doubtful]
    if not latin and not doubtful:
        return texts, engines
    texts, engines = list(texts), list(engines)
    try:
        # the doubtful columns in a tier image of their own: beside them Tesseract read the
        # other columns of the tier differently (zh-tw tuning page, 13 pt sans, moderate dust:
        # 4.92 -> 5.41 % CER, every change in a column that was never in doubt)
        reads = _vertical_tiers(page, lines, model, latin) | _vertical_tiers(page, lines, model, sorted(doubtful))
    except (OSError, subprocess.CalledProcessError) as exc:  # no tesseract, or no such model
        stderr = getattr(exc, "stderr", b"") or b""
        log.warning("Tesseract %s unavailable (%s %s): vertical Chinese kept as PP-OCR read it",
                    model, exc, stderr.decode("utf-8", "replace").strip())
        return texts, engines
    for i, upright in reads.items():
        box = lines[i].box
        upright = columns.hyphens(upright, columns.low_lines(page[box[1]:box[3], box[0]:box[2]]))
        agreement = difflib.SequenceMatcher(None, columns.nfkc(texts[i]), columns.nfkc(upright), autojunk=False).ratio()
        if agreement >= MERGE_MIN_AGREEMENT:
            texts[i] = columns.merge_reads(texts[i], upright, forms == "simplified", forms == "traditional")
            engines[i] = f"{engines[i]} + {_tesseract_engine(model)}"
    return texts, engines
