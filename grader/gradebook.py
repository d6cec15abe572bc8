"""Grades out of nbgrader's gradebook: per student, per assignment, per graded cell."""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from grader.course import nbgrader_config

# {student: {assignment: {grade_id: score}}}
CellScores = dict[str, dict[str, dict[str, float]]]


def course_id() -> str:
    return nbgrader_config().CourseDirectory.course_id


def cell_scores(db_url: str, assignments: list[str] | None = None) -> CellScores:
    """Every recorded score of every automatically or manually graded cell."""
    scores: CellScores = {}
    with Gradebook(db_url, course_id()) as gradebook:
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            for student in gradebook.students:
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    continue
                cells = scores.setdefault(student.id, {}).setdefault(assignment.name, {})
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        if grade.score is not None:
                            cells[grade.name] = float(grade.score)
    return scores


def write_csv(scores: CellScores, path: Path) -> int:
    """One row per student and assignment with the total and each cell's score; returns the row count."""
    grade_ids = sorted({g for per_assignment in scores.values() for cells in per_assignment.values() for g in cells})
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "assignment", "score", *grade_ids])
        for student in sorted(scores):
            for assignment, cells in sorted(scores[student].items()):
                writer.writerow(
                    [
                        student,
                        assignment,
                        f"{sum(cells.values()):g}",
                        *(f"{cells[g]:g}" if g in cells else "" for g in grade_ids),
                    ]
                )
                rows += 1
    return rows
