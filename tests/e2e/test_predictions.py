"""A student meets a prediction in a chapter: the answer below it opens collapsed, and a click or a run shows it."""

from __future__ import annotations

import nbformat
import pytest

from tests.e2e.jlab import open_notebook
from tests.e2e.lab_server import REPO, Lab

CHAPTERS = sorted(path.relative_to(REPO).as_posix() for path in REPO.glob("chapters/*.ipynb"))

_SHOWN = """(path) => window.e2eNotebook(path).content.widgets.map((cell) => cell.model.type !== 'code' ? null : {
  hidden: cell.outputHidden,
  visible: [...cell.node.querySelectorAll('.jp-OutputArea-output')].some((node) => node.offsetHeight > 0),
})"""


def predictions(chapter: str) -> list[int]:
    """Indexes of the code cells right after a "Before running:" question."""
    cells = nbformat.read(REPO / chapter, 4).cells
    return [i + 1 for i, cell in enumerate(cells) if cell.cell_type == "markdown" and "Before running:" in cell.source]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_prediction_answers_open_collapsed(page, lab: Lab, chapter: str) -> None:
    open_notebook(page, chapter)
    page.wait_for_timeout(1_000)  # the kernel's language_info reaches the model
    shown = page.evaluate(_SHOWN, chapter)
    hidden = [i for i, cell in enumerate(shown) if cell and cell["hidden"]]
    assert hidden == predictions(chapter)
    assert not any(shown[i]["visible"] for i in hidden), "a collapsed answer is on screen"
    with_outputs = [i for i, cell in enumerate(nbformat.read(REPO / chapter, 4).cells) if cell.get("outputs")]
    assert all(shown[i]["visible"] for i in with_outputs if i not in hidden), "an output that is no answer is hidden"
    assert page.evaluate("(path) => window.e2eNotebook(path).context.model.dirty", chapter) is False


_RUN_CELL = """([path, index]) => {
  const panel = window.e2eNotebook(path);
  panel.content.activeCellIndex = index;
  return window.jupyterapp.commands.execute('notebook:run-cell');
}"""
_RAN = """([path, index]) => {
  const model = window.e2eNotebook(path).content.widgets[index].model;
  return model.executionState === 'idle' && model.executionCount !== null && model.outputs.length > 0;
}"""


def test_a_click_or_a_run_shows_the_answer(page, lab: Lab) -> None:
    chapter = CHAPTERS[0]
    first, second = predictions(chapter)[:2]
    open_notebook(page, chapter)
    page.locator(".jp-Notebook .jp-Cell").nth(second).locator(".jp-OutputPlaceholder").click()  # the collapsed "..."
    assert page.evaluate(_SHOWN, chapter)[second] == {"hidden": False, "visible": True}

    page.evaluate("(path) => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')", chapter)
    for index in (1, first):  # the chapter's imports, then the first prediction
        page.evaluate(_RUN_CELL, [chapter, index])
        page.wait_for_function(_RAN, arg=[chapter, index], timeout=60_000, polling=250)
    assert page.evaluate(_SHOWN, chapter)[first] == {"hidden": False, "visible": True}
