"""A student meets a prediction in a chapter: the answer (the output of the cell below the question) is hidden until
the student clicks "Show the answer"; a raising cell's answer then reads as text. (After Restart Kernel and Run All
Cells, every chapter's answers are still hidden: tests/e2e/test_chapters.py.)"""

from __future__ import annotations

import nbformat

from tests.e2e.jlab import answers_on_screen, open_notebook, predictions
from tests.e2e.lab_server import REPO, Lab

CHAPTER = "chapters/01_what_the_object_holds.ipynb"  # one of its answers is an exception's traceback


def test_an_answer_shows_when_the_student_asks(page, lab: Lab) -> None:
    asked = predictions(REPO / CHAPTER)
    open_notebook(page, CHAPTER)
    assert answers_on_screen(page, CHAPTER, asked) == ([], [])
    assert page.evaluate("(path) => window.e2eNotebook(path).context.model.dirty", CHAPTER) is False

    cells = nbformat.read(REPO / CHAPTER, 4).cells
    raising = next(i for i in asked if "raises-exception" in cells[i].metadata.get("tags", []))
    page.locator(".jp-Notebook .jp-Cell").nth(raising - 1).locator("details.answer > summary").click()
    assert answers_on_screen(page, CHAPTER, asked) == ([raising], []), "only the answer asked for is shown"
    answer = page.locator(".jp-Notebook .jp-Cell").nth(raising).locator(".jp-OutputArea-output").first.inner_text()
    assert "Error" in answer and "\x1b[" not in answer and "[0;" not in answer, answer
