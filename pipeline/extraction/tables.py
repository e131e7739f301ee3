"""Tables on a text-layer page: a PDFium count of the vector rulings of a table
(``ruling_crossings``), and pdfplumber's table finder (``page_tables``), which keeps rows and
cells whole. The finder runs only on a page with such rulings, and not on a grid of more
than MAX_CROSSINGS crossings, which is read as text lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the language stage reads CELL_SEPARATOR without the PDF readers in its image
    from pipeline.extraction.frame import Box
    from pipeline.extraction.pdf import Chars

CELL_SEPARATOR = " | "  # between the cells of a table block's row (the language stage reads them apart)


# pdfplumber's cell search compares every crossing of rulings with every other: 26,000
# crossings take 10 s, the 66,000 of a 256 x 256 font table over a minute (docs/extraction.md).
MAX_CROSSINGS = 20_000


def ruling_crossings(page) -> int:
    """How many crossings the page's thin horizontal and vertical vector lines make at most
    (their distinct rows times their distinct columns, to the point); 0 when they are too
    few to rule a table."""
    import pypdfium2.raw as pdfium_c

    across: set[int] = set()
    down: set[int] = set()
    n_across = n_down = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        x0, y0, x1, y1 = obj.get_bounds()
        w, h = x1 - x0, y1 - y0
        if h < 2 and w > 10:
            n_across += 1
            across.add(round(y0))
        elif w < 2 and h > 5:
            n_down += 1
            down.add(round(x0))
    return len(across) * len(down) if n_across >= 3 and n_down >= 2 else 0


def page_tables(plumber_page, chars: Chars) -> list[tuple[Box, str]]:
    """The page's tables, each its box in the read frame (``chars.frame``) and its text: a row a
    line, its cells apart by CELL_SEPARATOR."""
    tables = []
    if chars.frame.hides:  # what the CropBox leaves out is not read (pipeline.extraction.frame)
        x0, top, x1, bottom = chars.frame.plumber_area
        page_x0, page_top, page_x1, page_bottom = plumber_page.bbox  # pdfplumber crops inside it alone
        plumber_page = plumber_page.crop((max(x0, page_x0), max(top, page_top), min(x1, page_x1),
                                          min(bottom, page_bottom)))
    for table in plumber_page.find_tables():
        table = _with_open_sides(plumber_page, table, chars.frame.reading_turn in (90, 270))
        # None is no cell: the place a cell spanning several columns covers (a form's field
        # boxes cut its rows into dozens of column positions); "" is an empty cell, kept.
        grid = _rows_as_read(table, chars) if chars.frame.reading_turn else table.extract()
        rows = [CELL_SEPARATOR.join(cell.replace("\n", " ") for cell in row if cell is not None) for row in grid]
        text = "\n".join(r for r in rows if r.strip(" |"))
        if text:
            tables.append((chars.frame.from_plumber(tuple(float(v) for v in table.bbox)), text))
    return tables


def _rows_as_read(table, chars: Chars) -> list[list[str]]:
    """The cells of a table whose text stands turned on the page as shown (a landscape table
    set sideways), in rows as its text reads, each read by PDFium: pdfplumber reads characters
    the way the page is shown, which gives such a table's rows as columns and its words
    backwards or a letter a line."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for cell in table.cells:
        left, bottom, right, top = chars.frame.plumber_user(cell)
        x0, row_top, _, _ = chars.frame.top_left(left, bottom, right, top)
        text = chars.textpage.get_text_bounded(left, bottom, right, top)
        rows.setdefault(round(row_top, 1), []).append((x0, " ".join(text.split())))
    return [[text for _, text in sorted(row)] for _, row in sorted(rows.items())]


def _with_open_sides(plumber_page, table, sideways: bool = False):
    """The whole table where its outer columns have no vertical rules.

    Tables ruled only between columns (DocBook/dblatex output: full-width horizontal
    rules, vertical ones inside) are found by pdfplumber without their first and last
    columns; their rows then came out twice, as text lines and as a partial table (on
    the Debian manuals' table pages). The horizontal rules crossing the
    table show its real width: the table is found again in that box, with vertical
    lines at its two ends. On a page that shows the table ``sideways`` (its text turned a
    quarter), the rules across it run down the page as shown, and the lines go at its ends there.
    """
    x0, top, x1, bottom = table.bbox
    if sideways:
        rules = [(e["top"], e["bottom"]) for e in plumber_page.vertical_edges
                 if x0 - 1 <= e["x0"] <= x1 + 1 and e["top"] < bottom and e["bottom"] > top]
        near, far = top, bottom
    else:
        rules = [(e["x0"], e["x1"]) for e in plumber_page.horizontal_edges
                 if top - 1 <= e["top"] <= bottom + 1 and e["x0"] < x1 and e["x1"] > x0]
        near, far = x0, x1
    start, end = min([near] + [r[0] for r in rules]), max([far] + [r[1] for r in rules])
    if start > near - 2 and end < far + 2:
        return table
    if sideways:
        box, lines = (x0, start, x1, end), {"explicit_horizontal_lines": [start, end]}
    else:
        box, lines = (start, top, end, bottom), {"explicit_vertical_lines": [start, end]}
    # pdfplumber refuses a crop reaching past the page (rules drawn off the page's edge, a
    # MediaBox not at 0,0: debian-reference.de.pdf): the crop stays inside the page.
    page_x0, page_top, page_x1, page_bottom = plumber_page.bbox
    region = plumber_page.crop((max(box[0] - 1, page_x0), max(box[1] - 1, page_top),
                                min(box[2] + 1, page_x1), min(box[3] + 1, page_bottom)))
    found = region.find_tables(table_settings=lines)
    return max(found, key=lambda t: (t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]), default=table)
