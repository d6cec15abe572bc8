"""Open the answer to every prediction collapsed: the code cell after each "Before running:" question carries the
metadata JupyterLab writes for collapsed outputs, and no other code cell does.

    python3 scripts/collapse_predictions.py chapters/*.ipynb

`make outputs` runs it after executing the chapters; tests/test_chapter_conventions.py checks the result.
"""

from __future__ import annotations

import sys

import nbformat

PREDICTION = "Before running:"


def collapse_predictions(path: str) -> None:
    notebook = nbformat.read(path, as_version=4)
    asked = False
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            asked = PREDICTION in cell.source
            continue
        if cell.cell_type == "code":
            if asked:
                cell.metadata["collapsed"] = True
                cell.metadata.setdefault("jupyter", {})["outputs_hidden"] = True
            else:
                cell.metadata.pop("collapsed", None)
                cell.metadata.get("jupyter", {}).pop("outputs_hidden", None)
                if cell.metadata.get("jupyter") == {}:
                    del cell.metadata["jupyter"]
            asked = False
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        collapse_predictions(argument)
