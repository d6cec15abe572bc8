"""Hide the answer to every prediction until the student asks for it: each markdown cell that asks "Before running:"
ends with ANSWER, a closed `<details class="answer">`; while it is closed, the course's JupyterLab extension
(jupyter_config/labextensions/nn-module-course/static/course.css) does not show the outputs of the code cell right
after it, however the notebook is run. No other cell carries it, and no code cell is collapsed (JupyterLab's own
collapsed outputs reopen on every run and show the output's first line).

    python3 scripts/hide_answers.py chapters/*.ipynb

`make outputs` runs it after executing the chapters; tests/test_chapter_conventions.py checks the result.
"""

from __future__ import annotations

import sys

import nbformat

PREDICTION = "Before running:"
ANSWER = '<details class="answer"><summary>Show the answer</summary>It is the output of the next cell.</details>'


def hide_answers(path: str) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and (PREDICTION in cell.source or ANSWER in cell.source):
            text = cell.source.replace(ANSWER, "").rstrip()
            cell.source = f"{text}\n\n{ANSWER}" if PREDICTION in text else text
        elif cell.cell_type == "code":
            cell.metadata.pop("collapsed", None)
            cell.metadata.get("jupyter", {}).pop("outputs_hidden", None)
            if cell.metadata.get("jupyter") == {}:
                del cell.metadata["jupyter"]
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        hide_answers(argument)
