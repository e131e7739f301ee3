"""Tables of contents: told apart from the headings they list, so that no TOC line opens a
clause. A TOC line is an entry with a dot leader and a page number ("§ 6 Erwerb der
Mitgliedschaft . . . . 3", "第一章 総則……1"), or, in a run of at least ``MIN_RUN`` such lines,
a heading of a registered form followed by a page number ("4.9.2 debian/rules and
Rules-Requires-Root 27"). The structure stage keeps them as a TOC element outside the clause
tree.
"""

from __future__ import annotations

import re

from pipeline.text.clauses import match_line

# A leader of three or more dots (spaced or not, or ellipses) closing with a page number; the
# lookbehinds start it only at the leader's first dot, so a long leader is read once.
DOT_LEADER_PAGE = re.compile(r"(?<![.·…])(?<![.·…] )(?:[.·…] ?){3,}+\s*+\d{1,4}\s*+$")
TRAILING_PAGE = re.compile(r"(?<=[^\s\d])\s++\d{1,4}$")
MIN_RUN = 3  # headings with page numbers but no leaders count only in a run this long


def toc_lines(lines: list[str], lang: str) -> set[int]:
    """Indexes of the TOC lines among ``lines`` (a document's non-blank lines, in order)."""
    leader = [bool(DOT_LEADER_PAGE.search(line)) for line in lines]
    numbered = []
    for line in lines:
        found = match_line(TRAILING_PAGE.sub("", line), lang) if TRAILING_PAGE.search(line) else None
        numbered.append(bool(found and found.title))
    found: set[int] = {i for i, is_leader in enumerate(leader) if is_leader}
    run: list[int] = []
    for i, is_entry in enumerate([*numbered, False]):
        if is_entry or (i < len(leader) and leader[i]):
            run.append(i)
            continue
        if len(run) >= MIN_RUN:
            found.update(run)
        run = []
    return found
