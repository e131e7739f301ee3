"""Where a per-document stage is inside its document, for the deadline's report.

A stage calls ``mark_page(n)`` as it starts page n. In a stage worker
(pipeline.batch.isolation) the number goes to memory the parent reads when it kills the
worker, so a ``stage_timeout`` can name the page; in-process it is only kept here.
"""

from __future__ import annotations

from typing import Any

_current: Any = None  # a multiprocessing.Value("i") in a stage worker


def attach(shared: Any) -> None:
    global _current
    _current = shared


def mark_page(page_no: int) -> None:
    if _current is not None:
        _current.value = page_no
