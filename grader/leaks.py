"""The lines a release must never contain: solution blocks and hidden-test blocks of the source notebooks."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from grader.course import relative
from grader.notebooks import HIDDEN_TESTS, describe_cell, parse_notebook, read_notebook

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

    A line that also appears in a public part of any source notebook (instructions, visible tests, imports, a cell's
    grade id as a quoted string) is public already and is not counted.
    """
    public, secrets = _source_lines(sources)
    return [s for line, s in secrets.items() if len(line) >= MIN_SECRET_LENGTH and line not in public]


def public_source_lines(sources: list[Path]) -> set[str]:
    """Every line of the public parts of these source notebooks (what a release shows of them)."""
    return _source_lines(sources)[0]


def whole_file_secrets(paths: list[Path], public: set[str]) -> list[Secret]:
    """Every distinctive line of these files (an exercise's checks, its scripted mistakes), unless it is in `public`."""
    secrets: dict[str, Secret] = {}
    for path in paths:
        name = relative(path)
        for line in {raw.strip() for raw in path.read_text(encoding="utf-8").splitlines()}:
            if len(line) >= MIN_SECRET_LENGTH and line not in public:
                secrets.setdefault(line, Secret(line, name))
    return list(secrets.values())


def _source_lines(sources: list[Path]) -> tuple[set[str], dict[str, Secret]]:
    """The lines of the public parts of these source notebooks, and those of their secret blocks."""
    public: set[str] = set()
    secrets: dict[str, Secret] = {}
    for path in sources:
        name = relative(path)  # once per file: it resolves the path
        for number, cell in enumerate(read_notebook(path).cells, start=1):
            meta = cell.get("metadata", {}).get("nbgrader", {})
            whole_cell_secret = meta.get("solution") and "### BEGIN SOLUTION" not in cell.source
            if type(meta.get("grade_id")) is str:  # a release shows every cell's grade id: quoted, it is public
                public.update(json.dumps(meta["grade_id"]) + end for end in ("", ",", ":"))
            closing, kind = None, None
            for raw in cell.source.splitlines():
                line = raw.strip()
                if closing is None and line in BLOCKS:
                    closing, kind = BLOCKS[line]
                elif closing is not None and line == closing:
                    closing, kind = None, None
                elif closing is not None or whole_cell_secret:
                    if line not in secrets:
                        origin = f"{name} {describe_cell(number, meta)} {kind or 'solution cell'}"
                        secrets[line] = Secret(line, origin)
                else:
                    public.add(line)
    return public, secrets


def find_leaks(secrets: list[Secret], release: Path) -> list[str]:
    """One message per secret line found in any file under `release`, naming the file and cell."""
    files = sorted(p for p in release.rglob("*") if p.is_file())
    return leaks_in(secrets, ((relative(path), path.name, path.read_bytes()) for path in files))


def leaks_in(secrets: list[Secret], files: Iterable[tuple[str, str, bytes]]) -> list[str]:
    """One message per secret line found in any of these files: (where to say it is, its file name, its bytes)."""
    wanted = {s.line: s for s in secrets}
    leaks = []
    for where, name, content in files:
        for place, text in texts(where, name, content):
            for line in {raw.strip() for raw in text.splitlines()} & wanted.keys():
                leaks.append(f"{where}: {place} leaks a line of {wanted[line].origin}: {line!r}")
    return leaks


def texts(where: str, name: str, content: bytes) -> list[tuple[str, str]]:
    """(where, text) pieces of a file: each cell's source and outputs of a notebook, or the whole file."""
    text = content.decode("utf-8", errors="replace")
    if not name.endswith(".ipynb"):
        return [("file", text)]
    notebook = parse_notebook(where, text)
    pieces = []
    for number, cell in enumerate(notebook.cells, start=1):
        place = describe_cell(number, cell.get("metadata", {}).get("nbgrader"))
        pieces.append((place, cell.source))
        for output in cell.get("outputs", []):
            pieces.append((f"{place} output", _output_text(output)))
    return pieces


def _output_text(output: NotebookNode) -> str:
    parts = [output.get("text", "")] + list(output.get("data", {}).values()) + output.get("traceback", [])
    return "\n".join(part if isinstance(part, str) else json.dumps(part) for part in parts)
