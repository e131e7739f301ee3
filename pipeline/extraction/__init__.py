"""The mechanics of the extract stage (pipeline.stages.extract), by the kind of content:

- ``pdf``: opening and checking a PDF with PDFium; text-layer blocks (horizontal
  paragraphs, vertical CJK columns right to left).
- ``hyphens``: line-end hyphens, a broken word joined or a compound's hyphen kept, decided
  once the document is read by the words it writes elsewhere.
- ``tables``: pdfplumber tables on pages with vector rulings.
- ``scans``: scanned pages and scanned regions, rendered to grayscale and OCRed with
  pipeline.ocr.
"""
