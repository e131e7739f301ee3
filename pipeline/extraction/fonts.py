"""The text of glyphs PDFium reads as their bare character code.

A simple font without a ToUnicode map is decoded by the glyph names of its encoding. PDFium
knows the standard names but not the Adobe Glyph List's ligature names ("f_i", "f_f_l",
"Q_u", as the Libertine and Biolinum fonts of LaTeX's libertine package name them): for those
it gives the character code, a control character in the text ("de\\x1bnition", "So\\x1cware").
pdfminer decodes such a name by its parts, so the font is read with it, on the few pages
that hold such a character.

PDFium also drops a block of a ToUnicode map whose declared count is not its number of
entries ("25 beginbfchar" over 24, as pdfcpu writes the maps of its font subsets) and reads
that block's glyphs as the character of their code: real letters, "人閖" for "人間", that no
check of the text can tell. pdfminer and poppler read such a block; so the ToUnicode maps of
a page's fonts are read here too (once a font per document), and a character read from a
dropped block is given the text its map says.
"""

from __future__ import annotations

import ctypes
import logging
import re
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

# A glyph read as its code: a C0 control other than tab, line ends, and U+0002 (PDFium's own
# mark for a hyphen at a line end).
CODED = re.compile(r"[\x01\x03-\x08\x0b\x0c\x0e-\x1f]")
SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")  # "KIUSYG+LinLibertineT": fonts are matched without it


def font_name(textpage, index: int) -> str:
    """The base name of the font PDFium drew character ``index`` with, less a subset tag (PDFium
    gives it for some fonts, not others)."""
    import pypdfium2.raw as pdfium_c

    flags = ctypes.c_int()
    size = pdfium_c.FPDFText_GetFontInfo(textpage, index, None, 0, ctypes.byref(flags))
    if not size:
        return ""
    buffer = ctypes.create_string_buffer(size)
    pdfium_c.FPDFText_GetFontInfo(textpage, index, buffer, size, ctypes.byref(flags))
    return SUBSET_TAG.sub("", buffer.value.decode("utf-8", "replace"))


# A ToUnicode map's blocks, and the tokens of their entries: a hex string, an array, a name
CMAP_BLOCK = re.compile(rb"(\d+)\s+begin(bfchar|bfrange)\b(.*?)end\2", re.S)
CMAP_TOKEN = re.compile(rb"<[0-9A-Fa-f\s]*>|\[[^\]]*\]|/[^\s<>\[\]()/%]+")
SURROGATE = re.compile("[\ud800-\udfff]")  # a two-byte code PDFium reads as half of a pair
MAX_RANGE = 0x10000  # a bfrange over more codes than a two-byte font has is not read


def _hex(token: bytes) -> bytes:
    return bytes.fromhex(re.sub(rb"\s", b"", token[1:-1]).decode("ascii"))


def _entries(kind: bytes, entry: list[bytes]) -> dict[int, str]:
    """code -> text of one bfchar (source, destination) or bfrange (low, high, destination or
    array) entry; a name as destination, or a malformed entry, gives nothing."""
    try:
        if kind == b"bfchar":
            source, target = entry
            return {int.from_bytes(_hex(source), "big"): _hex(target).decode("utf-16-be")} if target[:1] == b"<" else {}
        low, high = (int.from_bytes(_hex(token), "big") for token in entry[:2])
        if not 0 <= high - low < MAX_RANGE:
            return {}
        if entry[2][:1] == b"[":
            targets = [_hex(token) for token in CMAP_TOKEN.findall(entry[2][1:-1])]
            return {low + k: target.decode("utf-16-be") for k, target in enumerate(targets[:high - low + 1])}
        target = _hex(entry[2])
        first = int.from_bytes(target, "big")  # the last byte counts up through the range
        return {low + k: (first + k).to_bytes(len(target), "big").decode("utf-16-be", "replace")
                for k in range(high - low + 1)}
    except (ValueError, OverflowError):
        return {}


def dropped_codes(cmap: bytes) -> tuple[dict[int, str], set[str]]:
    """The codes of a ToUnicode map that PDFium reads as their own character, with the text the
    map gives them: those of a block whose declared count is not its number of entries (PDFium
    drops it, pdfminer and poppler read it), less any a block PDFium reads maps too; and the
    texts of the blocks PDFium reads."""
    read: dict[int, str] = {}
    dropped: dict[int, str] = {}
    for count, kind, body in CMAP_BLOCK.findall(cmap):
        tokens = CMAP_TOKEN.findall(body)
        width = 2 if kind == b"bfchar" else 3
        entries = [tokens[i:i + width] for i in range(0, len(tokens) - width + 1, width)]
        mapping: dict[int, str] = {}
        for entry in entries:
            mapping.update(_entries(kind, entry))
        (dropped if int(count) != len(entries) or len(tokens) % width else read).update(mapping)
    return {code: text for code, text in dropped.items() if code not in read}, set(read.values())


MAX_FORM_DEPTH = 8  # forms drawn inside forms: a stamp on a page imported into another


class PageFonts:
    """The fonts of one page, its resources' and those of the forms it draws (a stamp, an
    imported page), by base name (subset tag dropped), read by pdfminer from the pdfplumber
    page ``open_page`` returns, on first use. ``maps_read`` is the document's record of its fonts'
    ToUnicode maps (``dropped_codes`` by font object), shared by its pages."""

    def __init__(self, open_page: Callable[[], Any],
                 maps_read: dict[int, tuple[dict[int, str], set[str]] | None] | None = None):
        self._open_page = open_page
        self._maps_read = {} if maps_read is None else maps_read
        self._specs: list[tuple[str, int | None, dict]] | None = None
        self._fonts: dict[str, list[Any]] | None = None
        self._misread: dict[str, dict[str, str]] | None = None

    def _font_specs(self) -> list[tuple[str, int | None, dict]]:
        """(base name, object number, font dictionary) of each font the page can draw with."""
        if self._specs is not None:
            return self._specs
        from pdfminer.pdftypes import PDFObjRef, PDFStream, dict_value, resolve1
        from pdfminer.psparser import literal_name

        specs: dict[int | str, tuple[str, int | None, dict]] = {}
        forms: set[int] = set()

        def walk(resources: Any, depth: int) -> None:
            resources = dict_value(resources)
            for key, ref in dict_value(resources.get("Font", {})).items():
                try:
                    spec = dict_value(ref)
                    if "BaseFont" not in spec:
                        continue  # a Type3 font: its glyph names say nothing ("a72")
                    objid = ref.objid if isinstance(ref, PDFObjRef) else None
                    specs[objid if objid is not None else f"{depth}/{key}"] = (
                        SUBSET_TAG.sub("", literal_name(spec["BaseFont"])), objid, spec)
                except Exception as exc:  # a font pdfminer cannot read leaves its glyphs as they are
                    log.debug("font not read: %s: %s", type(exc).__name__, exc)
            if depth >= MAX_FORM_DEPTH:
                return
            for ref in dict_value(resources.get("XObject", {})).values():
                if isinstance(ref, PDFObjRef):
                    if ref.objid in forms:
                        continue
                    forms.add(ref.objid)
                    # pdfminer reads a stream's bytes with its dictionary and keeps what it
                    # resolves for the document's life: a scan's page images would all stay
                    caching, ref.doc.caching = ref.doc.caching, False
                    try:
                        xobject = resolve1(ref)
                    finally:
                        ref.doc.caching = caching
                else:
                    xobject = ref
                if (isinstance(xobject, PDFStream) and "Resources" in xobject.attrs
                        and literal_name(xobject.attrs.get("Subtype")) == "Form"):
                    walk(xobject.attrs["Resources"], depth + 1)

        try:
            walk(self._open_page().page_obj.resources, 0)
        except Exception as exc:  # pdfminer cannot read the page PDFium read: the glyphs stay as they are
            log.debug("page fonts not read: %s: %s", type(exc).__name__, exc)
        self._specs = list(specs.values())
        return self._specs

    def _load(self) -> dict[str, list[Any]]:
        from pdfminer.pdfinterp import PDFResourceManager

        fonts: dict[str, list[Any]] = {}
        manager = PDFResourceManager()
        for name, objid, spec in self._font_specs():
            try:
                fonts.setdefault(name, []).append(manager.get_font(objid, spec))
            except Exception as exc:  # a font pdfminer cannot read leaves its glyphs as they are
                log.debug("font not read: %s: %s", type(exc).__name__, exc)
        return fonts

    def text(self, base_name: str, code: int) -> str | None:
        """The text the fonts of that name give the code, where they agree on one."""
        if self._fonts is None:
            self._fonts = self._load()
        found = set()
        for font in self._fonts.get(base_name, []):
            try:
                found.add(font.to_unichr(code))
            except Exception:  # pdfminer's PDFUnicodeNotDefined: the name says nothing either
                continue
        return found.pop() if len(found) == 1 else None

    def _map_read(self, objid: int | None, spec: dict) -> tuple[dict[int, str], set[str]] | None:
        """``dropped_codes`` of the font's ToUnicode map; None without one (PDFium reads the
        font by its encoding)."""
        if objid is not None and objid in self._maps_read:
            return self._maps_read[objid]
        from pdfminer.pdftypes import PDFStream, resolve1

        found = None
        try:
            stream = resolve1(spec.get("ToUnicode"))
            if isinstance(stream, PDFStream):
                found = dropped_codes(stream.get_data())
        except Exception as exc:  # a map pdfminer cannot decode: PDFium's reading stands
            log.debug("ToUnicode map not read: %s: %s", type(exc).__name__, exc)
        if objid is not None:
            self._maps_read[objid] = found
        return found

    def misread(self) -> dict[str, dict[str, str | None]]:
        """By base name: the character PDFium reads for a glyph of a dropped ToUnicode block ->
        the text the map gives it; None where that character may also be right (a font of that
        name gives it from a block PDFium reads: a glyph id of a Latin or Greek subset is often
        a letter's code point too) or the name's fonts disagree on it: its text is then read
        where it is drawn (``texts_at``). A name shared with a font without a ToUnicode map is
        left out."""
        if self._misread is not None:
            return self._misread
        by_name: dict[str, list[tuple[dict[int, str], set[str]] | None]] = {}
        for name, objid, spec in self._font_specs():
            by_name.setdefault(name, []).append(self._map_read(objid, spec))
        self._misread = {}
        for name, maps in by_name.items():
            if any(found is None for found in maps):
                continue
            readable = set().union(*(found[1] for found in maps))
            fixes: dict[str, str | None] = {}
            for dropped, _ in maps:
                for code, text in dropped.items():
                    if code <= 0x10FFFF:
                        char = chr(code)
                        fixes[char] = None if char in readable or fixes.get(char, text) != text else text
            if fixes:
                self._misread[name] = fixes
        return self._misread

    def texts_at(self, textpage, glyphs: list[tuple[int, str]]) -> dict[int, str]:
        """Index -> the text pdfminer reads (pdfplumber's characters of the page) for the glyph
        drawn at that character's origin with a font of the base name given, where it reads
        one; nothing on a rotated page (pdfminer's space turns with it)."""
        import pypdfium2.raw as pdfium_c

        drawn: dict[tuple[int, int, str], list[tuple[float, float, str]]] = {}
        try:
            page = self._open_page()
            if page.rotation % 360:
                return {}
            left, bottom = page.page_obj.mediabox[:2]  # pdfminer's origin
            for char in page.chars:
                x, y = char["matrix"][4:]
                drawn.setdefault((round(x), round(y), SUBSET_TAG.sub("", char["fontname"])), []).append(
                    (x, y, char["text"]))
        except Exception as exc:  # pdfminer cannot read the page PDFium read: PDFium's reading stands
            log.debug("page characters not read: %s: %s", type(exc).__name__, exc)
            return {}
        found = {}
        x, y = ctypes.c_double(), ctypes.c_double()
        for index, name in glyphs:
            if not pdfium_c.FPDFText_GetCharOrigin(textpage, index, ctypes.byref(x), ctypes.byref(y)):
                continue
            at = (x.value - left, y.value - bottom)
            texts = {text for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                     for gx, gy, text in drawn.get((round(at[0]) + dx, round(at[1]) + dy, name), ())
                     if abs(gx - at[0]) < 0.1 and abs(gy - at[1]) < 0.1}
            if len(texts) == 1:
                found[index] = texts.pop()
        return found


def name_glyphs(textpage, text: str, fonts: PageFonts) -> dict[int, str]:
    """Index -> text, for each character of ``text`` that PDFium read as its code and its font
    names with printable text (a ligature's letters), or read from a dropped ToUnicode block."""
    import pypdfium2.raw as pdfium_c

    named = name_coded_glyphs(textpage, text, fonts) if CODED.search(text) else {}
    misread = fonts.misread()
    suspects = set().union(*misread.values())
    if any(SURROGATE.match(char) for char in suspects):
        suspects.add("\ufffd")
    by_position: list[tuple[int, str]] = []
    for index, char in enumerate(text if suspects else ""):
        if char in suspects and index not in named:
            if char == "\ufffd":  # a code in the surrogate range, read as half a pair
                char = chr(pdfium_c.FPDFText_GetUnicode(textpage, index))
            name = font_name(textpage, index)
            fixes = misread.get(name, {})
            if char in fixes and fixes[char] is None:
                by_position.append((index, name))
            elif fixes.get(char):
                named[index] = fixes[char]
    if by_position:
        named.update((index, found) for index, found in fonts.texts_at(textpage, by_position).items()
                     if found != text[index])
    return {index: found for index, found in named.items() if found.isprintable() and not found.isspace()}


def name_coded_glyphs(textpage, text: str, fonts: PageFonts) -> dict[int, str]:
    """Index -> text, for each character of ``text`` read as its code that its font names
    with printable text (a ligature's letters)."""
    named = {}
    for match in CODED.finditer(text):
        found = fonts.text(font_name(textpage, match.start()), ord(match.group()))
        if found and found.isprintable() and not found.isspace():
            named[match.start()] = found
    return named
