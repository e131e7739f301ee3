"""Text a page shows from its annotations rather than its content: the values of a filled
form's text fields and choice fields, and FreeText annotations (a typewriter box).

PDFium's text page reads only the page's content, so a filled form (a supplier questionnaire,
an application) lost what was filled in. Each value becomes a block at its field's place
(inserted in reading position like a table), on pages read from their text layer. An OCRed
page reads them from the render instead: with the document's form environment initialised
(``pipeline.extraction.pdf.pdfium_document``) PDFium draws the fields. Not read: check boxes and radio buttons (a
state, not text), signature fields (their appearance only), comments (Text/Popup notes:
remarks about the document, not in it), and hidden annotations.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator, Sequence

from pipeline.contracts import Block
from pipeline.extraction.frame import Box
from pipeline.extraction.pdf import Chars


def utf16_string(call, *args) -> str:
    """A PDFium string getter's value (UTF-16LE, NUL-terminated, asked for its size first)."""
    size = call(*args, None, 0)
    if size <= 2:
        return ""
    buffer = (ctypes.c_ushort * (size // 2))()
    call(*args, buffer, size)
    return bytes(buffer)[:size - 2].decode("utf-16-le", "replace")


def page_annotations(page) -> Iterator:
    """The page's annotation handles in order, each closed once the loop moves on (or stops)."""
    import pypdfium2.raw as pdfium_c

    for index in range(pdfium_c.FPDFPage_GetAnnotCount(page)):
        annot = pdfium_c.FPDFPage_GetAnnot(page, index)
        try:
            yield annot
        finally:
            pdfium_c.FPDFPage_CloseAnnot(annot)


def annotation_blocks(page, chars: Chars, form, skip: Sequence[Box] = ()) -> list[Block]:
    """Blocks of the page's form values (``form``: the document's form handle, None without
    forms) and FreeText annotations, top-left boxes in points. A value the page's content
    (``chars``) already shows in the field's box (a form printed with its values), an
    annotation inside one of ``skip`` (regions OCRed from the render, which draws it) and one
    outside what the page shows (its frame) are left out."""
    import pypdfium2.raw as pdfium_c

    blocks = []
    text_fields = (pdfium_c.FPDF_FORMFIELD_TEXTFIELD, pdfium_c.FPDF_FORMFIELD_COMBOBOX,
                   pdfium_c.FPDF_FORMFIELD_LISTBOX)
    for annot in page_annotations(page):
        kind = pdfium_c.FPDFAnnot_GetSubtype(annot)
        if pdfium_c.FPDFAnnot_GetFlags(annot) & (pdfium_c.FPDF_ANNOT_FLAG_HIDDEN | pdfium_c.FPDF_ANNOT_FLAG_NOVIEW):
            continue
        if kind == pdfium_c.FPDF_ANNOT_WIDGET and form is not None:
            if pdfium_c.FPDFAnnot_GetFormFieldType(form, annot) not in text_fields:
                continue
            text = utf16_string(pdfium_c.FPDFAnnot_GetFormFieldValue, form, annot)
        elif kind == pdfium_c.FPDF_ANNOT_WIDGET:
            # Fields left without the form that held them (no AcroForm): the widget's own
            # value, where it is text (a button's is a name, a signature's a dictionary).
            if pdfium_c.FPDFAnnot_GetValueType(annot, b"V") != pdfium_c.FPDF_OBJECT_STRING:
                continue
            text = utf16_string(pdfium_c.FPDFAnnot_GetStringValue, annot, b"V")
        elif kind == pdfium_c.FPDF_ANNOT_FREETEXT:
            text = utf16_string(pdfium_c.FPDFAnnot_GetStringValue, annot, b"Contents")
        else:
            continue
        text = "\n".join(line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                         if line.strip())
        if not text:
            continue
        rect = pdfium_c.FS_RECTF()
        pdfium_c.FPDFAnnot_GetRect(annot, ctypes.byref(rect))
        left, right = min(rect.left, rect.right), max(rect.left, rect.right)
        bottom, top = min(rect.bottom, rect.top), max(rect.bottom, rect.top)
        if not chars.frame.shows(left, bottom, right, top):
            continue
        box = chars.frame.top_left(left, bottom, right, top)
        if any(x0 <= box[0] and box[2] <= x1 and y0 <= box[1] and box[3] <= y1 for x0, y0, x1, y1 in skip):
            continue
        shown = chars.textpage.get_text_bounded(left, bottom, right, top)
        if "".join(text.split()) in "".join(shown.split()):
            continue
        blocks.append(Block(text=text, bbox=box, method="text_layer"))
    return blocks
