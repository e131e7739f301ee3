"""OCR of rasterised pages. Import from the module that holds what you need:

- ``page``: ``ocr_page``, the page's OCR from start to end (orientation, the engine per
  script and direction, merging the reads of vertical Chinese), and its results
  (``PageOcr``, ``OcrBlock``).
- ``noise``: scan damage removed before layout (uneven paper, salt-and-pepper, specks
  judged against the page's glyph size); a page of noise holds no text.
- ``geometry``: binarising, quarter turns and box mapping, writing direction, deskew,
  regions written the other way (``islands``), and ``Line``.
- ``layout``: text frames, lines (columns) and paragraph starts by projection profiles,
  and the line crops the recogniser reads.
- ``engines``: the line recognisers (``recogniser``: PP-OCR via rapidocr, or PaddleOCR)
  and Tesseract (version, OSD orientation, vertical models per tier).
"""
