"""Every chapter renders the same wherever it is opened (JupyterLab, nbconvert, a code host) and keeps its core path
apart from its deep dives."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

CHAPTERS = sorted((Path(__file__).resolve().parent.parent / "chapters").glob("[0-9][0-9]_*.ipynb"))


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_stream_outputs_are_not_split(path: Path) -> None:
    """`make outputs` merges consecutive stream outputs; two in a row would split a line in some renderers."""
    for number, cell in enumerate(_read(path).cells, start=1):
        outputs = cell.get("outputs", [])
        for first, second in zip(outputs, outputs[1:], strict=False):
            split = first.output_type == second.output_type == "stream" and first.name == second.name
            assert not split, f"{path.name} cell {number} has two {first.name} outputs in a row: run make outputs"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_exercise_pointer_is_a_relative_link(path: Path) -> None:
    tail = "\n".join(cell.source for cell in _read(path).cells[-3:] if cell.cell_type == "markdown")
    number = path.name[:2]
    # The student's copy in workspace/ (git-ignored, filled by `make lab`) is there once its release is.
    links = re.findall(rf"\]\(\.\./workspace/(ex{number}_\w+/ex{number}_\w+\.ipynb)\)", tail)
    assert links, f"{path.name} does not link to its exercise with a relative markdown link"
    texts = re.findall(r"\[([^\]]*)\]\(\.\./workspace/", tail)
    assert not [text for text in texts if "`" in text], f"{path.name}: the link to its exercise reads as inline code"
    released = path.parent.parent / "exercises"
    assert all((released / link).is_file() for link in links), f"{path.name} links to a missing exercise"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_deep_dives_are_marked_optional(path: Path) -> None:
    headings = [
        line
        for cell in _read(path).cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    ]
    for heading in headings:
        if "deep dive" in heading.lower():
            assert "Deep dive (optional):" in heading, (
                f"{path.name}: write deep-dive headings as '## Deep dive (optional): ...', got {heading!r}"
            )
