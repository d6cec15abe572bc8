"""Bad course input gets one clear error line naming the file, and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tests.conftest import grader

NOTEBOOK = Path("solutions/extoy/extoy.ipynb")


def _break_json(path: Path) -> None:
    path.write_text(path.read_text()[:-20], encoding="utf-8")


def _duplicate_grade_id(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[2].metadata.nbgrader["grade_id"] = "answer"
    nbformat.write(notebook, path)


def _drop_points(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    del notebook.cells[2].metadata.nbgrader["points"]
    nbformat.write(notebook, path)


def _nbformat3(path: Path) -> None:
    path.write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [], "cells": []}))


def _empty(path: Path) -> None:
    path.write_text("")


def _no_notebook(path: Path) -> None:
    path.unlink()


CASES = {
    "invalid JSON": (_break_json, str(NOTEBOOK), "not valid JSON (line"),
    "duplicate grade ids": (_duplicate_grade_id, str(NOTEBOOK), "grade_id 'answer' is used by cells 2 and 3"),
    "graded cell without points": (_drop_points, str(NOTEBOOK), "cell 3 (test_answer) is graded but has no points"),
    "nbformat 3": (_nbformat3, str(NOTEBOOK), "nbformat 3 notebook; nbformat 4 is required"),
    "empty file": (_empty, str(NOTEBOOK), "the file is empty"),
    "folder without notebook": (_no_notebook, "solutions/extoy", "assignment folder has no notebook"),
}


# Every case through `release --check`; the other commands share the same checks, so two cases each suffice.
RUNS = [("release --check", case) for case in CASES] + [
    (command, case) for command in ("release", "validate") for case in ("invalid JSON", "graded cell without points")
]


@pytest.mark.parametrize(("command", "case"), RUNS)
def test_bad_input_is_one_line_naming_the_file(toy_course: Path, command: str, case: str) -> None:
    damage, named_file, problem = CASES[case]
    damage(toy_course / NOTEBOOK)
    run = grader(*command.split(), root=toy_course)
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert lines == [f"error: {named_file}: {lines[0].split(': ', 2)[2]}"], run.stderr
    assert problem in lines[0]


def test_unknown_assignment_is_named(toy_course: Path) -> None:
    run = grader("release", "ex99_nothing", root=toy_course)
    assert run.returncode != 0
    assert run.stderr.strip() == "error: solutions: no assignment folder named ex99_nothing"
