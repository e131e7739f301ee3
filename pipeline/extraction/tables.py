"""Tables on a text-layer page: a PDFium count of the vector rulings of a table
(``ruling_crossings``), and pdfplumber's table finder (``page_tables``), which keeps rows and
cells whole. The finder runs only on a page with such rulings, and not on a grid of more
than MAX_CROSSINGS crossings, which is read as text lines.
"""

from __future__ import annotations

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


def page_tables(plumber_page) -> list[tuple[tuple[float, float, float, float], str]]:
    tables = []
    for table in plumber_page.find_tables():
        table = _with_open_sides(plumber_page, table)
        # None is no cell: the place a cell spanning several columns covers (a form's field
        # boxes cut its rows into dozens of column positions); "" is an empty cell, kept.
        rows = [CELL_SEPARATOR.join(cell.replace("\n", " ") for cell in row if cell is not None)
                for row in table.extract()]
        text = "\n".join(r for r in rows if r.strip(" |"))
        if text:
            tables.append((tuple(float(v) for v in table.bbox), text))
    return tables  # type: ignore[return-value]


def _with_open_sides(plumber_page, table):
    """The whole table where its outer columns have no vertical rules.

    Tables ruled only between columns (DocBook/dblatex output: full-width horizontal
    rules, vertical ones inside) are found by pdfplumber without their first and last
    columns; their rows then came out twice, as text lines and as a partial table (on
    the Debian manuals' table pages). The horizontal rules crossing the
    table show its real width: the table is found again in that box, with vertical
    lines at its two ends.
    """
    x0, top, x1, bottom = table.bbox
    rules = [e for e in plumber_page.horizontal_edges
             if top - 1 <= e["top"] <= bottom + 1 and e["x0"] < x1 and e["x1"] > x0]
    left, right = min([x0] + [e["x0"] for e in rules]), max([x1] + [e["x1"] for e in rules])
    if left > x0 - 2 and right < x1 + 2:
        return table
    # pdfplumber refuses a crop reaching past the page (rules drawn off the page's edge, a
    # MediaBox not at 0,0: debian-reference.de.pdf): the crop stays inside the page.
    page_x0, page_top, page_x1, page_bottom = plumber_page.bbox
    region = plumber_page.crop((max(left - 1, page_x0), max(top - 1, page_top),
                                min(right + 1, page_x1), min(bottom + 1, page_bottom)))
    found = region.find_tables(table_settings={"explicit_vertical_lines": [left, right]})
    return max(found, key=lambda t: (t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]), default=table)
