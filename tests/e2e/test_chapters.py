"""A student runs every chapter in JupyterLab: Restart Kernel and Run All Cells, then reads it top to bottom."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.jlab import notebook_problems, notebook_report, open_notebook, restart_and_run_all, screenshot
from tests.e2e.lab_server import REPO, Lab

CHAPTERS = sorted(path.relative_to(REPO).as_posix() for path in REPO.glob("chapters/*.ipynb"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_clean_in_jupyterlab(page, lab: Lab, chapter: str) -> None:
    open_notebook(page, chapter)
    restart_and_run_all(page, chapter)
    report = notebook_report(page, chapter)
    screenshot(page, SCREENSHOTS / f"{chapter.split('/')[-1].removesuffix('.ipynb')}.png")
    assert notebook_problems(report) == []
    code_cells = [cell for cell in report["cells"] if cell["type"] == "code"]
    assert code_cells and all(cell["execution_count"] for cell in code_cells if cell["source"].strip())
    # The browser never saved the chapter (autosave is off; the run's outputs stay in the browser).
    assert page.writes.under("chapters") == []
