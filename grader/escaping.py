"""Student-controlled text made safe to show an instructor: in a terminal, a log, a spreadsheet."""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def printable(text: str) -> str:
    """`text` with every unprintable character (newlines, tabs, ANSI escapes, bidi overrides) written as its Python
    escape, e.g. '\\x1b'; printable text, backslashes included, is left as it is, so escaping twice changes nothing."""
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in str(text))


def spreadsheet_cell(text: str) -> str:
    """A CSV field a spreadsheet shows as text: printable, and never read as a formula (a leading ' is added)."""
    text = printable(text)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text
