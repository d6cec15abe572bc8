"""Every chapter follows the course template, and its outputs were produced by the pinned torch.

The header states the torch version the outputs came from; if the installed torch differs (an upgrade), this fails
until every chapter is re-run (`make outputs`) and its prose re-read, so stale claims cannot slip through.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import torch

CHAPTERS = sorted((Path(__file__).resolve().parent.parent / "chapters").glob("[0-9][0-9]_*.ipynb"))
INSTALLED = torch.__version__.split("+")[0]


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_there_are_chapters() -> None:
    assert [p.name[:2] for p in CHAPTERS] == [f"{n:02d}" for n in range(1, len(CHAPTERS) + 1)]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_header_states_the_installed_torch(path: Path) -> None:
    header = _read(path).cells[0]
    assert header.cell_type == "markdown" and header.source.startswith(f"# Chapter {int(path.name[:2])}:")
    assert "What you will learn" in header.source
    stated = re.findall(r"Run on torch (\d+\.\d+\.\d+)", header.source)
    assert stated == [INSTALLED], f"{path.name} says it was run on torch {stated}; installed is {INSTALLED}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_stored_outputs_come_from_the_installed_torch(path: Path) -> None:
    first_code = next(cell for cell in _read(path).cells if cell.cell_type == "code")
    printed = "".join(output.get("text", "") for output in first_code.outputs).split()
    assert "torch.__version__" in first_code.source
    assert torch.__version__ in printed, f"{path.name}'s stored outputs were made with torch {printed}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_ends_with_key_points_and_its_exercise(path: Path) -> None:
    cells = _read(path).cells
    tail = "\n".join(cell.source for cell in cells[-3:] if cell.cell_type == "markdown")
    assert "Key points" in tail
    number = path.name[:2]
    # The student's copy in workspace/ (filled from exercises/ by `make lab`), never the tracked release.
    exercise = re.search(rf"workspace/(ex{number}_\w+/ex{number}_\w+\.ipynb)", tail)
    assert exercise, f"{path.name} does not point to its exercise in workspace/"
    released = path.parent.parent / "exercises" / exercise.group(1)
    assert released.is_file(), f"{path.name} points to {exercise.group()}, but there is no {released.name} released"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_outputs_are_clean(path: Path) -> None:
    for number, cell in enumerate(_read(path).cells, start=1):
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        for output in cell.outputs:
            if output.output_type == "error":
                assert "raises-exception" in tags, f"{path.name} cell {number} raises without the tag"
            text = output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
            assert not re.search(r" at 0x[0-9a-f]{6,}", text), f"{path.name} cell {number} prints a memory address"
        assert cell.execution_count is not None, f"{path.name} cell {number} was not executed"


PREDICTION = "Before running:"
# What JupyterLab itself writes for a cell whose outputs are collapsed (it keeps the two keys in step).
OUTPUTS_HIDDEN = {"collapsed": True, "jupyter": {"outputs_hidden": True}}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_prediction_outputs_open_collapsed(path: Path) -> None:
    """The cell after each "Before running:" question opens with its committed outputs collapsed; no other does."""
    cells = _read(path).cells
    predictions = {
        number + 1 for number, cell in enumerate(cells) if cell.cell_type == "markdown" and PREDICTION in cell.source
    }
    assert predictions, f"{path.name} asks no prediction"
    for number, cell in enumerate(cells):
        hidden = {key: cell.metadata[key] for key in OUTPUTS_HIDDEN if key in cell.metadata}
        where = f"{path.name} cell {number + 1}"
        if number in predictions:
            assert cell.cell_type == "code" and cell.outputs, f"{where}: a prediction must be followed by code output"
            assert hidden == OUTPUTS_HIDDEN, f"{where} answers a prediction: its metadata needs {OUTPUTS_HIDDEN}"
        else:
            assert not hidden, f"{where} hides its outputs but answers no prediction"
