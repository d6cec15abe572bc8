"""Run a notebook top to bottom the way nbgrader does, and read each graded cell's score."""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from jupyter_client import AsyncKernelManager
from nbformat import NotebookNode
from nbgrader.preprocessors import ClearOutput, Execute
from nbgrader.utils import determine_grade
from traitlets import default
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


class PrivateSocketKernelManager(AsyncKernelManager):
    """A kernel reached over Unix sockets in a folder of its own, not over TCP ports.

    Over TCP, jupyter_client picks free ports and the kernel binds them a moment later; a port another process
    takes meanwhile kills the kernel at start ("Kernel didn't respond in 60 seconds"), which happens when several
    kernels start at once. Jupyter's own ipc default is one shared name in the working folder, which mixes up
    kernels started together; a private folder per kernel does not.
    """

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc"

    @default("ip")
    def _ip_default(self) -> str:
        self._socket_folder = tempfile.mkdtemp(prefix="grader-kernel-")
        return os.path.join(self._socket_folder, "socket")

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart and getattr(self, "_socket_folder", None):
            shutil.rmtree(self._socket_folder, ignore_errors=True)


def execute(notebook: NotebookNode, folder: Path, config: Config) -> NotebookNode:
    """A copy of `notebook` with fresh outputs, executed with nbgrader's settings in `folder`."""
    notebook = copy.deepcopy(notebook)
    resources = {"metadata": {"path": str(folder)}}
    notebook, resources = ClearOutput(config=config).preprocess(notebook, resources)
    kernels = {"kernel_manager_class": PrivateSocketKernelManager} if os.name == "posix" else {}
    notebook, resources = Execute(config=config, **kernels).preprocess(notebook, resources)
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
