"""The lines a release must never contain: solution blocks and hidden-test blocks of the source notebooks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from grader.course import relative
from grader.notebooks import HIDDEN_TESTS, describe_cell, read_notebook

BLOCKS = {
    "### BEGIN SOLUTION": ("### END SOLUTION", "solution block"),
    HIDDEN_TESTS: ("### END HIDDEN TESTS", "hidden-test block"),
}
# Shorter lines ("pass", "return x", "else:") are too common to mean anything when they reappear.
MIN_SECRET_LENGTH = 12


@dataclass(frozen=True)
class Secret:
    """One line that must stay in solutions/, and where it comes from."""

    line: str
    origin: str


def secret_lines(sources: list[Path]) -> list[Secret]:
    """Distinctive lines inside the secret blocks of the course's source notebooks.

    A line that also appears in a public part of any source notebook (instructions, visible tests, imports) is
    public already and is not counted.
    """
    public: set[str] = set()
    secrets: dict[str, Secret] = {}
    for path in sources:
        for number, cell in enumerate(read_notebook(path).cells, start=1):
            meta = cell.get("metadata", {}).get("nbgrader", {})
            whole_cell_secret = meta.get("solution") and "### BEGIN SOLUTION" not in cell.source
            closing, kind = None, None
            for raw in cell.source.splitlines():
                line = raw.strip()
                if closing is None and line in BLOCKS:
                    closing, kind = BLOCKS[line]
                elif closing is not None and line == closing:
                    closing, kind = None, None
                elif closing is not None or whole_cell_secret:
                    origin = f"{relative(path)} {describe_cell(number, meta)} {kind or 'solution cell'}"
                    secrets.setdefault(line, Secret(line, origin))
                else:
                    public.add(line)
    return [s for line, s in secrets.items() if len(line) >= MIN_SECRET_LENGTH and line not in public]


def find_leaks(secrets: list[Secret], release: Path) -> list[str]:
    """One message per secret line found in any file under `release`, naming the file and cell."""
    wanted = {s.line: s for s in secrets}
    leaks = []
    for path in sorted(p for p in release.rglob("*") if p.is_file()):
        for place, text in _texts(path):
            for line in {raw.strip() for raw in text.splitlines()} & wanted.keys():
                leaks.append(f"{relative(path)}: {place} leaks a line of {wanted[line].origin}: {line!r}")
    return leaks


def _texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) pieces of a released file: each cell's source and outputs, or the whole file."""
    if path.suffix != ".ipynb":
        return [("file", path.read_text(encoding="utf-8", errors="replace"))]
    notebook = read_notebook(path)
    pieces = []
    for number, cell in enumerate(notebook.cells, start=1):
        where = describe_cell(number, cell.get("metadata", {}).get("nbgrader"))
        pieces.append((where, cell.source))
        for output in cell.get("outputs", []):
            pieces.append((f"{where} output", _output_text(output)))
    return pieces


def _output_text(output: NotebookNode) -> str:
    parts = [output.get("text", "")] + list(output.get("data", {}).values()) + output.get("traceback", [])
    return "\n".join(part if isinstance(part, str) else json.dumps(part) for part in parts)
