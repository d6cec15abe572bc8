"""A sample class built from the course's sources alone: for each assignment, the full solution, the blank release
that solutions/ generates, and the typical mistakes scripted for it (with the points each graded cell must give
them)."""

from __future__ import annotations

import copy
import runpy
from pathlib import Path

import nbformat

from grader.course import assignment_names, mistakes_file, solutions
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook
from grader.release import fresh_release
from grader.scripted import solution_answers


def submission(release: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The released notebook with these solution cells filled in (by grade_id); the rest untouched."""
    notebook = copy.deepcopy(release)
    for _, cell, meta in nbgrader_cells(notebook):
        if meta.get("solution") and meta["grade_id"] in answers:
            cell.source = answers[meta["grade_id"]]
    return notebook


def scripted_assignments() -> list[str]:
    """Assignments that have scripted mistakes (solutions/<assignment>/mistakes.py)."""
    return [name for name in assignment_names() if mistakes_file(name).is_file()]


def scripted_students(assignment: str) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, float]]]:
    """The typical mistakes written for an assignment (ANSWERS: student -> {solution grade_id: cell source}), and
    the points each must earn (EXPECTED: student -> {test grade_id: points})."""
    module = runpy.run_path(str(mistakes_file(assignment)))
    return module["ANSWERS"], module["EXPECTED"]


def sample_class(assignment: str) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, float]]]:
    """The sample class: every scripted student, the full solution and the blank release; their answers (student ->
    {solution grade_id: source}) and the points each test cell must give them."""
    [source_path] = assignment_notebooks(solutions() / assignment)
    source = read_notebook(source_path)
    points = {
        meta["grade_id"]: float(meta["points"])
        for _, _, meta in nbgrader_cells(source)
        if meta.get("grade") and not meta.get("solution")
    }
    answers, expected = scripted_students(assignment)
    students = {"full": solution_answers(source), "blank": {}, **answers}
    expectations = {"full": points, "blank": dict.fromkeys(points, 0.0)}
    expectations.update({name: {g: float(p) for g, p in cells.items()} for name, cells in expected.items()})
    return students, expectations


def write_class(assignment: str, submitted: Path) -> dict[str, dict[str, float]]:
    """Write every sample student's submission in nbgrader's layout; return the points each test cell must give."""
    [source_path] = assignment_notebooks(solutions() / assignment)
    release = fresh_release(assignment)[source_path.name]  # not exercises/: a student may have worked in it
    students, expectations = sample_class(assignment)
    for student, student_answers in students.items():
        folder = submitted / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(submission(release, student_answers), folder / source_path.name)
    return expectations
