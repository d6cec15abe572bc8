"""Synthetic students for an assignment: the full solution, the untouched release, and scripted answers."""

from __future__ import annotations

import copy
import importlib
from pathlib import Path

import nbformat

from grader.notebooks import nbgrader_cells

MARKERS = {"### BEGIN SOLUTION", "### END SOLUTION"}


def solution_answers(source: nbformat.NotebookNode) -> dict[str, str]:
    """What a perfect student types: each solution cell of the source with the marker lines dropped."""
    return {
        meta["grade_id"]: "\n".join(line for line in cell.source.splitlines() if line.strip() not in MARKERS)
        for _, cell, meta in nbgrader_cells(source)
        if meta.get("solution")
    }


def submission(release: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The released notebook with these solution cells filled in (by grade_id); the rest untouched."""
    notebook = copy.deepcopy(release)
    for _, cell, meta in nbgrader_cells(notebook):
        if meta.get("solution") and meta["grade_id"] in answers:
            cell.source = answers[meta["grade_id"]]
    return notebook


def scripted_students(assignment: str) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, float]]]:
    """The typical mistakes written for an assignment in tests/answers/, and the points each must earn."""
    module = importlib.import_module(f"tests.answers.{assignment}")
    return module.ANSWERS, module.EXPECTED


def write_class(assignment: str, course: Path, submitted: Path) -> dict[str, dict[str, float]]:
    """Write every synthetic student's submission; return the expected points per student and test cell."""
    [source_path] = sorted((course / "solutions" / assignment).glob("*.ipynb"))
    source = nbformat.read(source_path, as_version=4)
    release = nbformat.read(course / "exercises" / assignment / source_path.name, as_version=4)
    points = {
        meta["grade_id"]: float(meta["points"])
        for _, _, meta in nbgrader_cells(source)
        if meta.get("grade") and not meta.get("solution")
    }
    answers, expected = scripted_students(assignment)
    students = {"full": solution_answers(source), "blank": {}, **answers}
    expectations = {"full": points, "blank": dict.fromkeys(points, 0.0)}
    expectations.update({name: {g: float(p) for g, p in cells.items()} for name, cells in expected.items()})
    for student, student_answers in students.items():
        folder = submitted / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(submission(release, student_answers), folder / source_path.name)
    return expectations
