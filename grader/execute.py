"""Run a notebook top to bottom the way nbgrader does, and read each graded cell's score."""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import ClearOutput, Execute
from nbgrader.utils import determine_grade
from traitlets.config import Config

from grader.notebooks import nbgrader_cells


@dataclass(frozen=True)
class CellScore:
    """The outcome of one graded cell after execution."""

    cell: int
    grade_id: str
    score: float
    max_score: float
    error: str

    @property
    def passed(self) -> bool:
        return self.score == self.max_score


@contextmanager
def nbgrader_environment(**variables: str) -> Iterator[None]:
    """Set environment variables nbgrader's notebooks read, and restore them afterwards (threads see them too).

    nbgrader's own utils.setenv cannot be used: its restore step looks up the value instead of the key, so it
    always deletes the variables.
    """
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def validating() -> contextlib.AbstractContextManager[None]:
    """The environment nbgrader's Validate gives notebooks."""
    return nbgrader_environment(NBGRADER_VALIDATING="1", NBGRADER_EXECUTION="validate")


def execute(notebook: NotebookNode, folder: Path, config: Config) -> NotebookNode:
    """A copy of `notebook` with fresh outputs, executed with nbgrader's settings in `folder`."""
    notebook = copy.deepcopy(notebook)
    resources = {"metadata": {"path": str(folder)}}
    for step in (ClearOutput, Execute):
        notebook, resources = step(config=config).preprocess(notebook, resources)
    return notebook


def graded_scores(notebook: NotebookNode) -> list[CellScore]:
    """Scores of the automatically graded cells of an executed notebook, in notebook order."""
    scores = []
    for number, cell, meta in nbgrader_cells(notebook):
        if not meta.get("grade") or meta.get("solution") or cell.cell_type != "code":
            continue
        score, max_score = determine_grade(cell)
        scores.append(CellScore(number, meta["grade_id"], float(score), float(max_score), _error_line(cell)))
    return scores


def _error_line(cell: NotebookNode) -> str:
    """The last line of the error (or stderr text) that cost the cell its points."""
    for output in cell.outputs:
        if output.output_type == "error":
            return f"{output.ename}: {output.evalue}".strip().splitlines()[-1][:200]
        if output.output_type == "stream" and output.name == "stderr":
            return ("stderr: " + output.text.strip().splitlines()[-1])[:200] if output.text.strip() else "stderr"
    return ""
