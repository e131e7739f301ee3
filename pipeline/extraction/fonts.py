"""The text of glyphs PDFium reads as their bare character code.

A simple font without a ToUnicode map is decoded by the glyph names of its encoding. PDFium
knows the standard names but not the Adobe Glyph List's ligature names ("f_i", "f_f_l",
"Q_u", as the Libertine and Biolinum fonts of LaTeX's libertine package name them): for those
it gives the character code, a control character in the text ("de\\x1bnition", "So\\x1cware").
pdfminer decodes such a name by its parts, so the font is read with it, on the few pages
that hold such a character.
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
SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")  # "KIUSYG+LinLibertineT": PDFium names the font without it


def font_name(textpage, index: int) -> str:
    """The base name of the font PDFium drew character ``index`` with."""
    import pypdfium2.raw as pdfium_c

    flags = ctypes.c_int()
    size = pdfium_c.FPDFText_GetFontInfo(textpage, index, None, 0, ctypes.byref(flags))
    if not size:
        return ""
    buffer = ctypes.create_string_buffer(size)
    pdfium_c.FPDFText_GetFontInfo(textpage, index, buffer, size, ctypes.byref(flags))
    return buffer.value.decode("utf-8", "replace")


class PageFonts:
    """The fonts of one page's resources by base name (subset tag dropped), read by pdfminer
    from the page ``open_page`` returns, on first use."""

    def __init__(self, open_page: Callable[[], Any]):
        self._open_page = open_page
        self._fonts: dict[str, list[Any]] | None = None

    def _load(self) -> dict[str, list[Any]]:
        from pdfminer.pdfinterp import PDFResourceManager
        from pdfminer.pdftypes import PDFObjRef, dict_value
        from pdfminer.psparser import literal_name

        fonts: dict[str, list[Any]] = {}
        try:
            resources = dict_value(self._open_page().resources.get("Font", {}))
        except Exception as exc:  # pdfminer cannot read the page PDFium read: the glyphs stay as they are
            log.debug("page fonts not read: %s: %s", type(exc).__name__, exc)
            return fonts
        manager = PDFResourceManager()
        for ref in resources.values():
            try:
                spec = dict_value(ref)
                if "BaseFont" not in spec:
                    continue  # a Type3 font: its glyph names say nothing ("a72")
                font = manager.get_font(ref.objid if isinstance(ref, PDFObjRef) else None, spec)
                fonts.setdefault(SUBSET_TAG.sub("", literal_name(spec["BaseFont"])), []).append(font)
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


def name_coded_glyphs(textpage, text: str, fonts: PageFonts) -> dict[int, str]:
    """Index -> text, for each character of ``text`` read as its code that its font names
    with printable text (a ligature's letters)."""
    named = {}
    for match in CODED.finditer(text):
        found = fonts.text(font_name(textpage, match.start()), ord(match.group()))
        if found and found.isprintable() and not found.isspace():
            named[match.start()] = found
    return named
