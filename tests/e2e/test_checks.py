"""The chapter checks catch what they are meant to: a broken mermaid block, a cell that raises without its tag.

Tiny notebooks keep this fast; they are run through exactly the steps a chapter goes through.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from tests.e2e.jlab import notebook_problems, notebook_report, open_notebook, restart_and_run_all
from tests.e2e.lab_server import REPO, Lab

DIAGRAM = "Registries in `__dict__`:\n\n```mermaid\nflowchart LR\n  M[module] --> P[_parameters]\n```\n"
BROKEN_DIAGRAM = "Registries in `__dict__`:\n\n```mermaid\nflowchart LR\n  M[module] --> --> ((P\n```\n"


def write_notebook(folder: Path, name: str, cells: list) -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    notebook.cells = cells
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / name)
    return (folder / name).relative_to(REPO).as_posix()


def code(source: str, *tags: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})


def test_a_clean_notebook_passes(page, lab: Lab, work_dir: Path) -> None:
    path = write_notebook(
        work_dir / "checks",
        "clean.ipynb",
        [
            nbformat.v4.new_markdown_cell(DIAGRAM),
            code("import sys\nprint('a warning on stderr is not an error', file=sys.stderr)"),
            code("{}['missing']", "raises-exception"),
            code(""),
            code("print('still running after the tagged cell')"),
        ],
    )
    open_notebook(page, path)
    restart_and_run_all(page, path)
    report = notebook_report(page, path)
    assert notebook_problems(report) == []
    assert [cell["execution_count"] for cell in report["cells"][1:]] == [1, 2, None, 3]


def test_a_broken_diagram_and_an_untagged_exception_are_reported(page, lab: Lab, work_dir: Path) -> None:
    path = write_notebook(
        work_dir / "checks",
        "broken.ipynb",
        [
            nbformat.v4.new_markdown_cell(BROKEN_DIAGRAM),
            code("x = 1", "raises-exception"),
            code("{}['missing']"),  # a chapter cell whose raises-exception tag was removed
            code("print('never reached')"),
        ],
    )
    open_notebook(page, path)
    restart_and_run_all(page, path)
    problems = notebook_problems(notebook_report(page, path))
    assert problems[0].startswith(f"{path} cell 0: mermaid block did not render: ") and "Parse error" in problems[0]
    assert problems[1:] == [
        f"{path} cell 1: tagged raises-exception but raised nothing",
        f"{path} cell 2: raised KeyError: 'missing' (no raises-exception tag)",
        f"{path} cell 3: did not run",
    ], problems


def test_a_missing_diagram_is_reported() -> None:
    """Mermaid that never rendered at all (no `.jp-RenderedMermaid`) and unordered counts count as failures too."""
    report = {
        "path": "x.ipynb",
        "cells": [
            {"index": 0, "type": "markdown", "source": DIAGRAM, "tags": [], "rendered": True, "mermaid": []},
            {"index": 1, "type": "markdown", "source": DIAGRAM, "tags": [], "rendered": False, "mermaid": []},
            {
                "index": 2,
                "type": "code",
                "source": "1",
                "tags": [],
                "execution_count": 2,
                "outputs": [],
                "stderr_nodes": 0,
            },
        ],
    }
    assert notebook_problems(report) == [
        "x.ipynb cell 0: 1 mermaid block(s), 0 rendered as SVG",
        "x.ipynb cell 1: markdown cell with a mermaid block is not rendered",
        "x.ipynb: execution counts [2] are not 1..N top to bottom in a fresh kernel",
    ]
