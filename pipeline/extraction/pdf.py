"""A PDF's text layer, read with PDFium's text page (pypdfium2): opening and checking the
file, then text blocks.

PDFium's C text extraction gives reading-order lines with generated word spaces and
character boxes at >100 pages/s, where pdfplumber's ``extract_text`` reads ~8-14 pages/s
on these machines. Horizontal layers become paragraph blocks (tables, found by
pipeline.extraction.tables, kept whole); vertical CJK text layers are recognised from
the character boxes and read in column order by pipeline.extraction.vertical. Bad files raise
DocumentError with a machine-readable reason.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from pipeline.contracts import Block, DocumentError
from pipeline.extraction import hyphens, watermarks
from pipeline.extraction.fonts import PageFonts, name_glyphs
from pipeline.extraction.frame import PageFrame, upright_turn
from pipeline.extraction.images import image_format

LINE_BREAK = re.compile(r"\r\n|\n")
TALL_LINE = 2.0  # a PDFium line taller than this many times its text's size holds text at several heights


def check_file(path: Path) -> str:
    """The file's format, 'PDF' or an image format (pipeline.extraction.images), from its bytes."""
    if not path.exists():
        raise DocumentError("missing_file", f"{path} does not exist")
    if path.stat().st_size == 0:
        raise DocumentError("empty_file", f"{path} is empty (0 bytes)")
    try:
        with open(path, "rb") as handle:
            head = handle.read(1024)
    except OSError as error:  # there, but its permissions (or the disk) do not let it be read
        raise DocumentError("unreadable", f"{path.name} cannot be read: {error.strerror or error}") from None
    if b"%PDF-" in head:
        return "PDF"
    if image := image_format(head):
        return image
    kind = "a ZIP container (e.g. DOCX)" if head.startswith(b"PK") else "neither a PDF nor a PNG, JPEG or TIFF image"
    raise DocumentError("unsupported_format", f"{path.name} is {kind}; Rosetta reads PDF files and scans "
                                              "as PNG, JPEG or TIFF images")


def open_pdf(path: Path, passwords: Sequence[str] = (), passwords_file: Path | None = None):
    """The PDFium document and the password that opened it (None: it needs none), or the
    DocumentError that says why it cannot be read. A password-protected file is tried with
    each of ``passwords`` in turn; the error names ``passwords_file``, where its password goes."""
    import pdfplumber
    import pypdfium2 as pdfium
    from pdfminer.pdfdocument import PDFPasswordIncorrect

    try:
        return pdfium_document(path, passwords)
    except pdfium.PdfiumError as exc:
        pdfium_error = exc
    if getattr(pdfium_error, "err_code", None) == pdfium.raw.FPDF_ERR_SECURITY:
        raise DocumentError("unsupported_encryption", _unsupported_encryption(path)) from pdfium_error
    protected = DocumentError("encrypted_pdf", _protected(path, passwords, passwords_file))
    # PDFium reports an empty page tree as a password error: ask pdfminer which it is.
    try:
        with pdfplumber.open(path) as plumber:
            n_pages = len(plumber.pages)
    except Exception as exc:  # pdfminer raises many types for broken files; pdfplumber wraps them
        causes = (exc, *exc.args, exc.__cause__, exc.__context__)
        if any(isinstance(c, PDFPasswordIncorrect) for c in causes):
            raise protected from exc
        raise DocumentError("corrupt_pdf", f"{path.name} cannot be parsed: {pdfium_error}") from exc
    if n_pages == 0:
        raise DocumentError("no_pages", f"{path.name} has no pages")
    if "password" in str(pdfium_error).lower():
        raise protected
    raise DocumentError("corrupt_pdf", f"{path.name} cannot be parsed: {pdfium_error}")


def pdfium_document(path: Path, passwords: Sequence[str] = ()):
    """The PDFium document and the password that opened it (None: it needs none); PDFium's
    error when it cannot open the file with any. A document with a form has its form
    environment initialised, so that its fields' values are drawn and can be read
    (pipeline.extraction.annotations)."""
    import pypdfium2 as pdfium

    try:
        return _with_forms(pdfium.PdfDocument(path)), None
    except pdfium.PdfiumError as exc:
        if "password" not in str(exc).lower():
            raise
        for password in passwords:
            try:
                return _with_forms(pdfium.PdfDocument(path, password=password)), password
            except pdfium.PdfiumError:
                continue
        raise


class _WithoutXfaAdvice(logging.Filter):
    """pypdfium2 advises rebuilding it with V8 for an XFA form; the AcroForm fields such a file
    also holds are read all the same, and the advice is no operator's to act on."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "XFA support" not in record.getMessage()


logging.getLogger("pypdfium2._helpers.document").addFilter(_WithoutXfaAdvice())


def _with_forms(pdf):
    pdf.init_forms()  # before any page is loaded: PDFium attaches the form to each page as it loads
    return pdf


def _security_handler(path: Path) -> str | None:
    """The name of the PDF's security handler (its encryption dictionary's /Filter), or None."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser

    class EncryptionDictionary(PDFDocument):
        def _initialize_password(self, password: str = "") -> None:
            """Read the encryption dictionary; decrypt nothing (the handler is unknown to pdfminer)."""

    try:
        with open(path, "rb") as handle:
            handler = EncryptionDictionary(PDFParser(handle)).encryption[1].get("Filter")
    except Exception:  # noqa: BLE001 - a file broken past its trailer: the handler stays unnamed
        return None
    return getattr(handler, "name", None)


def _unsupported_encryption(path: Path) -> str:
    """Why an encrypted PDF that no password can open is refused, and what its owner can do."""
    handler = _security_handler(path)
    if handler == "Adobe.PubSec":
        return (f"{path.name} is encrypted for the holders of certain certificates (public-key security, "
                "/Adobe.PubSec), not with a password, and Rosetta cannot open it: have a recipient save it "
                "without encryption and put that file in its place")
    named = f"the security handler /{handler}" if handler else "a security handler PDFium does not support"
    return (f"{path.name} is encrypted with {named} (rights-management software, not a password), which Rosetta "
            "cannot open: have its owner export it without protection and put that file in its place")


def _protected(path: Path, passwords: Sequence[str], passwords_file: Path | None) -> str:
    tried = f"; none of the {len(passwords)} password(s) tried opens it" if passwords else ""
    where = f": add its password to {passwords_file} (one a line, mode 0600) and reprocess it" if passwords_file else ""
    return f"{path.name} is password-protected{tried}{where}"


PAD = "\uffff"  # holds the index of a surrogate pair's second half (a noncharacter: no text has it)


def text_by_index(textpage, n: int) -> str:
    """The page's text, one character per PDFium index: a character outside the BMP at its
    first index and PAD at its second, a glyph with no Unicode value as U+0000."""
    import pypdfium2.raw as pdfium_c

    units = [pdfium_c.FPDFText_GetUnicode(textpage, k) for k in range(n)]
    out = []
    for k, unit in enumerate(units):
        if 0xD800 <= unit < 0xDC00 and k + 1 < n and 0xDC00 <= units[k + 1] < 0xE000:
            out.append(chr(0x10000 + ((unit - 0xD800) << 10) + (units[k + 1] - 0xDC00)))
        elif 0xDC00 <= unit < 0xE000 and k > 0 and 0xD800 <= units[k - 1] < 0xDC00:
            out.append(PAD)
        elif 0xD800 <= unit < 0xE000:
            out.append("\ufffd")  # half a pair
        else:
            out.append(chr(unit))
    return "".join(out)


# Accents drawn as glyphs of their own over (or under) a letter, as TeX's OT1 fonts draw them:
# the layer reads "gew¨ohnlich", "informaci´on", "Fran¸cois". The combining mark each stands for,
# and whether it sits below the letter.
SPACING_ACCENTS = {"\u00a8": ("\u0308", False), "\u00b4": ("\u0301", False), "`": ("\u0300", False),
                   "\u02c6": ("\u0302", False), "\u02dc": ("\u0303", False), "\u02c7": ("\u030c", False),
                   "\u02d8": ("\u0306", False), "\u02d9": ("\u0307", False), "\u02da": ("\u030a", False),
                   "\u02dd": ("\u030b", False), "\u00af": ("\u0304", False), "\u00b8": ("\u0327", True),
                   "\u02db": ("\u0328", True)}
SPACING_ACCENT = re.compile("[" + re.escape("".join(SPACING_ACCENTS)) + "]")  # a page without one costs one scan
DOTLESS = {"\u0131": "i", "\u0237": "j"}  # TeX puts an accent on a dotless i or j


def attach_accents(textpage, text: str) -> str:
    """``text`` with each spacing accent that stands over (under) a letter joined to it: the
    letter becomes the precomposed character, the accent's index PAD. Matched by position,
    not order: PDFium puts the accent of a capital at the end of its line. An accent beside
    letters (an acute used as an apostrophe, a TeX opening quote) or one that composes to no
    single character stays as it is."""
    accents = [m.start() for m in SPACING_ACCENT.finditer(text)]
    if not accents:
        return text
    letters = np.array([k for k, c in enumerate(text) if c.isalpha()], dtype=np.int64)
    if not len(letters):
        return text
    boxes = np.array([textpage.get_charbox(int(k)) for k in letters], dtype=np.float64)  # left, bottom, right, top
    middle, height = (boxes[:, 1] + boxes[:, 3]) / 2, boxes[:, 3] - boxes[:, 1]
    out, taken = list(text), set()
    for k in accents:
        left, bottom, right, top = textpage.get_charbox(k)
        x, y = (left + right) / 2, (bottom + top) / 2
        mark, below = SPACING_ACCENTS[text[k]]
        near = (boxes[:, 0] <= x) & (x <= boxes[:, 2]) & (height > 0)
        if below:
            near &= (y < middle) & (boxes[:, 1] - top < 0.6 * height)
        else:
            near &= (y > middle) & (bottom - boxes[:, 3] < 0.6 * height)
        found = np.flatnonzero(near)
        if not len(found):
            continue
        letter = int(letters[found[np.argmin(np.abs(middle[found] - y))]])
        composed = unicodedata.normalize("NFC", (text[letter] if below else DOTLESS.get(text[letter], text[letter])) + mark)
        if letter in taken or len(composed) != 1:
            continue
        out[letter], out[k] = composed, PAD
        taken.add(letter)
    return "".join(out)


class Chars:
    """A PDFium text page: its text, and character or line boxes (top-left origin, points).

    Boxes are read lazily: per line, PDFium's text rectangles (a few calls a line);
    per character only where needed (vertical layers), since one call per character is
    what costs time in Python. With ``fonts``, glyphs PDFium read as their code are named
    by their font (pipeline.extraction.fonts).
    """

    def __init__(self, textpage, frame: PageFrame, fonts: PageFonts | None = None):
        self.textpage = textpage
        self.frame = frame
        self.n = textpage.count_chars()
        text = textpage.get_text_range() if self.n else ""
        # Indices must match PDFium's characters (the boxes are read by index). The range is
        # shorter where a character lies outside the BMP (two UTF-16 units, two indices) or has
        # no Unicode value (U+0000, dropped): then the text is read one index at a time.
        text = attach_accents(textpage, text if len(text) == self.n else text_by_index(textpage, self.n))
        # A glyph read as its code whose font names it (a ligature: several letters) keeps its
        # first letter at its index, for the per-index readers; span_text gives it whole.
        self.named = name_glyphs(textpage, text, fonts) if fonts is not None else {}
        if frame.hides:
            text = self._without_hidden(text)
            self.named = {k: named for k, named in self.named.items() if text[k] != PAD}
        if self.named:
            letters = list(text)
            for k, named in self.named.items():
                letters[k] = named[0]
            text = "".join(letters)
        self.text = text
        no_ink = hyphens.PDFIUM_MARKS + PAD
        self.ink = np.fromiter((not c.isspace() and c not in no_ink for c in self.text), dtype=bool,
                               count=len(self.text))

    def _without_hidden(self, text: str) -> str:
        """``text`` with what lies outside the visible area held by PAD (no character), a space
        after a hidden glyph too; line ends stay. PDFium joins text at one height across the
        page's edge into one line ("Hidden back cover. Visible front"). A PDFium call a glyph,
        only on such pages."""
        letters, hidden = list(text), False
        for k, letter in enumerate(letters):
            if letter in "\r\n":
                hidden = False
                continue
            if not letter.isspace() and letter != PAD:
                hidden = not self.frame.shows(*self.textpage.get_charbox(k))
            if hidden:
                letters[k] = PAD
        return "".join(letters)

    def span_text(self, start: int, end: int) -> str:
        """The text of characters [start, end), each named glyph whole."""
        if not self.named:
            return self.text[start:end]
        return "".join(self.named.get(k, self.text[k]) for k in range(start, end))

    def char_boxes(self, idx: np.ndarray, loose: bool = False) -> np.ndarray:
        """Glyph boxes, or with ``loose`` the font's cells (one column's cells share their x range)."""
        return np.array([self.frame.top_left(*self.textpage.get_charbox(int(i), loose=loose)) for i in idx],
                        dtype=np.float64).reshape(-1, 4)

    def span_box(self, start: int, end: int) -> tuple[float, float, float, float]:
        rects = [self.frame.top_left(*rect) for rect in map(self.textpage.get_rect,
                                                           range(self.textpage.count_rects(start, end - start)))
                 if self.frame.shows(*rect)]
        return (min(r[0] for r in rects), min(r[1] for r in rects), max(r[2] for r in rects),
                max(r[3] for r in rects)) if rects else (0.0, 0.0, 0.0, 0.0)


def page_chars(page, fonts: PageFonts | None = None) -> Chars:
    """The page's characters, read the way its text stands (``PageFrame``)."""
    frame = PageFrame.of(page)
    textpage = page.get_textpage()
    turn = upright_turn(textpage, frame.rotation)
    if turn != frame.rotation:
        # PDFium orders a line's pieces and the lines as the page is shown (a table's row shown
        # upside down came out "les fi development same any libfoo-dev"): the text is read with
        # the page shown as it stands, then the page is shown as it was
        textpage.close()
        page.set_rotation(turn)
        try:
            textpage = page.get_textpage()
        finally:
            page.set_rotation(frame.rotation)
    return Chars(textpage, replace(frame, turn=turn), fonts)


def clean_text(text: str) -> str:
    """A span's text as written: PDFium marks a hyphen it took for a line-end break as U+FFFE
    (U+0002 in some builds) and joins the lines; the mark stays for the document's words to
    decide (``hyphens.join_broken_words``). A U+00AD a producer wrote for a hyphen it drew
    (Arabo-Latin) is that hyphen."""
    return text.replace("\x02", hyphens.MARK).replace("\u00ad", "-").replace(PAD, "").replace("\x00", "")


def _line_spans(chars: Chars) -> list[tuple[int, int]]:
    """[start, end) character ranges of PDFium's lines (it ends each with CR LF)."""
    spans, start = [], 0
    for match in LINE_BREAK.finditer(chars.text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(chars.text)))
    return [(a, b) for a, b in spans if chars.ink[a:b].any()]


def horizontal_blocks(chars: Chars, tables: list[tuple[tuple[float, float, float, float], str]]) -> list[Block]:
    """Lines grouped into paragraph blocks by vertical gaps and column jumps; tables whole."""
    def inside_table(box: tuple[float, float, float, float]) -> bool:
        return any(x0 - 1 <= box[0] and box[2] <= x1 + 1 and top - 1 <= box[1] and box[3] <= bottom + 1
                   for (x0, top, x1, bottom), _ in tables)

    blocks: list[Block] = []
    current: list[tuple[str, tuple[float, float, float, float]]] = []
    looks: dict[int, watermarks.Look] = {}  # line start -> how the line is drawn
    lines = []
    for line_start, line_end in _line_spans(chars):
        for a, b, drawn in _drawn_alike(chars, line_start, line_end):
            box = chars.span_box(a, b)
            looks[a] = drawn
            if chars.frame.turn and box[3] - box[1] > TALL_LINE * drawn.size:
                lines += _on_their_baselines(chars, a, b, looks)
            else:
                lines.append((a, b, box))
    marks = _watermark_lines(lines, looks)

    def flush() -> None:
        if current:
            boxes = [b for _, b in current]
            blocks.append(Block(text="\n".join(t for t, _ in current),
                                bbox=(min(b[0] for b in boxes), min(b[1] for b in boxes),
                                      max(b[2] for b in boxes), max(b[3] for b in boxes)),
                                method="text_layer"))
            current.clear()

    for a, b, box in lines:
        if inside_table(box):
            continue
        text = clean_text(chars.span_text(a, b)).strip()
        if a in marks:  # a watermark is a block of its own, whatever it crosses
            flush()
            blocks.append(Block(text=text, bbox=box, method="text_layer", watermark=marks[a]))
            continue
        if current:
            prev = current[-1][1]
            height = max(prev[3] - prev[1], 1.0)
            jumped = box[1] < prev[1] - 0.5 * height or box[0] > prev[2] or box[2] < prev[0]
            if jumped or box[1] - prev[3] > 0.8 * height:
                flush()
        current.append((text, box))
    flush()
    return insert_by_position(blocks, [Block(text=text, bbox=bbox, kind="table", method="text_layer")
                                       for bbox, text in tables])


def _on_their_baselines(chars: Chars, start: int, end: int,
                        looks: dict[int, watermarks.Look]) -> list[tuple[int, int, tuple[float, float, float, float]]]:
    """A PDFium line of text drawn turned, cut where it goes on at another height (no glyph of
    one part beside a glyph of the next): PDFium joins text objects drawn turned (a CAD
    drawing's labels and its table's rows, each an object of its own) into one line wherever
    they lie; upright, it breaks them. A word it joined across a line end (its hyphen removed)
    stays whole, and so does text set down a column across the others ("Fold here" on a
    booklet). A glyph box a character, only for a line taller than TALL_LINE of its text."""
    ink = np.flatnonzero(chars.ink[start:end]) + start
    boxes = chars.char_boxes(ink)
    parts, first, run = [], start, boxes[0]
    for previous, index, last, box in zip(ink, ink[1:], boxes, boxes[1:]):
        joined = any(mark in chars.text[previous + 1:index] for mark in hyphens.PDFIUM_MARKS)  # its removed hyphen
        below = box[0] < last[2] and last[0] < box[2]  # a glyph under the last: text set down a column
        if (box[1] >= run[3] or box[3] <= run[1]) and not joined and not below:
            parts.append((first, int(index), tuple(float(v) for v in run)))
            looks[int(index)] = looks[first]
            first, run = int(index), box
        else:
            run = np.r_[np.minimum(run[:2], box[:2]), np.maximum(run[2:], box[2:])]
    return [*parts, (first, end, tuple(float(v) for v in run))]


def _drawn_alike(chars: Chars, start: int, end: int) -> list[tuple[int, int, watermarks.Look]]:
    """The line cut where a watermark's rendering starts or ends: PDFium appends a watermark
    drawn after the text to the last line it crosses ("... the Derived Program. CONFIDENTIAL").
    The first and last visible characters are read; only when one of them is drawn turned or
    light and the other is not, the run at the end drawn like the last is found."""
    ink = np.flatnonzero(chars.ink[start:end]) + start
    first, last = watermarks.look(chars.textpage, int(ink[0])), watermarks.look(chars.textpage, int(ink[-1]))
    if watermarks.suspect(first) == watermarks.suspect(last):
        return [(start, end, first)]
    cut = len(ink) - 1  # the run at the end drawn like the last character starts at ink[cut]
    while cut > 0 and watermarks.look(chars.textpage, int(ink[cut - 1])) == last:
        cut -= 1
    return [(start, int(ink[cut]), first), (int(ink[cut]), end, last)]


def _watermark_lines(lines: list[tuple[int, int, tuple[float, float, float, float]]],
                     looks: dict[int, watermarks.Look]) -> dict[int, str]:
    """Start offset -> evidence, for the lines the rendering marks as watermarks."""
    median = float(np.median([looks[a].size for a, _, _ in lines])) if lines else 0.0
    marks = {}
    for a, _, box in lines:
        over_text = any(other is not box and box[0] < other[2] and other[0] < box[2] and box[1] < other[3] and
                        other[1] < box[3] for _, _, other in lines)
        found = watermarks.evidence(looks[a], median, over_text)
        if found:
            marks[a] = found
    return marks


def insert_by_position(blocks: list[Block], extra: list[Block]) -> list[Block]:
    """Put tables and OCRed regions before the first text block below them, keeping the
    text layer's own (content-stream) reading order, which a sort would break on
    multi-column pages."""
    out = list(blocks)
    for block in sorted(extra, key=lambda b: b.bbox[1]):
        at = next((i for i, b in enumerate(out) if b.kind == "text" and b.method == "text_layer"
                   and b.bbox[1] > block.bbox[1]), len(out))
        out.insert(at, block)
    return out
