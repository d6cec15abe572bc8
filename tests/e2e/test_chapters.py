"""A student runs every chapter in JupyterLab: Restart Kernel and Run All Cells, then reads it top to bottom."""

from __future__ import annotations

import subprocess

import nbformat
import pytest

from tests.conftest import representatives
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.jlab import (
    answers_on_screen,
    notebook_problems,
    notebook_report,
    open_notebook,
    predictions,
    restart_and_run_all,
    screenshot,
)
from tests.e2e.lab_server import REPO, Lab

CHAPTERS = sorted(path.relative_to(REPO).as_posix() for path in REPO.glob("chapters/*.ipynb"))
# Run All in the browser is the same flow for every chapter (strict nbval runs each chapter's cells, and proves its
# raises-exception tags, in `make test`; the test below opens every chapter and checks its diagrams). Chapter 2 has
# every kind of cell the run meets: tagged cells that raise, a figure (image/png), a diagram; chapter 1 is run in
# the browser and saved by the workspace test at the end. `make test-all`: all eight.
RUN_IN_MAKE_TEST = ("chapters/02_where_an_assignment_lands.ipynb",)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_opens_with_its_diagrams_drawn_and_its_answers_hidden(page, lab: Lab, chapter: str) -> None:
    """What differs from chapter to chapter in the browser, without running it: each mermaid diagram renders, the
    committed outputs read as a clean run (counts 1..N, only tagged cells raise, each error shown), each prediction's
    answer is hidden and every other output shows."""
    open_notebook(page, chapter, kernel_idle=False)
    report = notebook_report(page, chapter)
    assert any(cell["type"] == "markdown" and cell["mermaid"] for cell in report["cells"]), f"{chapter}: no diagram"
    assert notebook_problems(report) == []
    assert answers_on_screen(page, chapter, predictions(REPO / chapter)) == ([], [])


@pytest.mark.parametrize("chapter", representatives(CHAPTERS, RUN_IN_MAKE_TEST))
def test_chapter_runs_clean_in_jupyterlab(page, lab: Lab, chapter: str) -> None:
    open_notebook(page, chapter)
    restart_and_run_all(page, chapter)
    report = notebook_report(page, chapter)
    screenshot(page, SCREENSHOTS / f"{chapter.split('/')[-1].removesuffix('.ipynb')}.png")
    assert notebook_problems(report) == []
    # every prediction's answer is still hidden after Run All (until "Show the answer"); every other output shows
    assert answers_on_screen(page, chapter, predictions(REPO / chapter)) == ([], [])
    code_cells = [cell for cell in report["cells"] if cell["type"] == "code"]
    assert code_cells and all(cell["execution_count"] for cell in code_cells if cell["source"].strip())
    # The browser never saved the chapter (autosave is off; the run's outputs stay in the browser).
    assert page.writes.under("chapters") == []


def test_a_chapter_run_and_saved_in_the_workspace_leaves_git_clean(page, lab: Lab) -> None:
    """The README's way: the chapter's copy in workspace/ (filled by `make lab`), Restart Kernel and Run All Cells,
    then saved (as autosave would): the copy is written, no tracked file changes."""
    before = git_status()
    path = f"workspace/{CHAPTERS[0].split('/')[-1]}"
    copy = (REPO / path).read_bytes()
    try:
        open_notebook(page, path)
        restart_and_run_all(page, path)
        page.evaluate("(path) => window.e2eNotebook(path).context.save()", path)
        assert page.writes.under("workspace") == [("PUT", path)]
        saved = nbformat.read(REPO / path, 4)
        assert [c.execution_count for c in saved.cells if c.cell_type == "code"][:3] == [1, 2, 3], "the run is saved"
        assert git_status() == before
    finally:
        (REPO / path).write_bytes(copy)  # the student's copy as `make lab` made it


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True, check=True).stdout
