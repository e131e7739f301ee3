"""Plain-text tables for the CLI's reports."""

from __future__ import annotations

from typing import Any


def table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> str:
    def cell(row: dict[str, Any], key: str) -> str:
        value = row.get(key)
        return "-" if value is None else str(value)

    widths = [max([len(title)] + [len(cell(r, key)) for r in rows]) for key, title in columns]
    lines = ["  ".join(title.ljust(w) for (_, title), w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(cell(r, key).ljust(w) for (key, _), w in zip(columns, widths)) for r in rows]
    return "\n".join(lines)
