"""Plain-text tables for the terminal."""

from __future__ import annotations


def format_table(rows: list[tuple[str, ...]]) -> str:
    """Left-aligned columns; the last column (a free-text note) is not padded."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        ("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=False)) + "  " + row[-1]).rstrip()
        for row in rows
    )
