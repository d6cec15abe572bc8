"""Grades out of nbgrader's gradebook: per student, per assignment, per graded cell; and why a submission is flagged."""

from __future__ import annotations

import re
from dataclasses import dataclass

from nbgrader.api import Gradebook, MissingEntry

from grader.course import nbgrader_config


@dataclass(frozen=True)
class CellGrade:
    """One graded cell as the gradebook holds it: the automatic score (the grader's) and a manual score (a teaching
    assistant's, in the Formgrader), each None until given."""

    auto: float | None
    manual: float | None

    @property
    def score(self) -> float | None:
        """What nbgrader counts: the manual score where there is one."""
        return self.manual if self.manual is not None else self.auto


# How every reason the grader gives for a flag begins, in its comments on a submission's cells.
FLAGGED = "Flagged by the grader"

# {student: {assignment: {grade_id: ...}}}
CellGrades = dict[str, dict[str, dict[str, CellGrade]]]
CellScores = dict[str, dict[str, dict[str, float]]]


def add_student(gradebook: Gradebook, student: str) -> None:
    """Record a student, named by their id where no name was given: the Formgrader lists students as "last name,
    first name" and shows one without a name as "None, None". A name entered in the Formgrader is kept."""
    record = gradebook.update_or_create_student(student)
    if record.last_name is None and record.first_name is None:
        record.last_name, record.first_name = student, ""
        gradebook.db.commit()


def course_id() -> str:
    return nbgrader_config().CourseDirectory.course_id


def cell_scores(db_url: str, assignments: list[str] | None = None) -> CellScores:
    """Every recorded score of every automatically or manually graded cell."""
    return {
        student: {
            assignment: {name: cell.score for name, cell in cells.items() if cell.score is not None}
            for assignment, cells in per_assignment.items()
        }
        for student, per_assignment in cell_grades(db_url, assignments).items()
    }


def cell_grades(db_url: str, assignments: list[str] | None = None) -> CellGrades:
    """Every graded cell of every recorded submission, its automatic and manual score apart."""
    grades: CellGrades = {}
    with Gradebook(db_url, course_id()) as gradebook:
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            for submission in assignment.submissions:
                cells = grades.setdefault(submission.student.id, {}).setdefault(assignment.name, {})
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        cells[grade.name] = CellGrade(_number(grade.auto_score), _number(grade.manual_score))
    return grades


def _number(score: object) -> float | None:
    return None if score is None else float(score)


def changed_outside(graded: dict[str, float], cells: dict[str, CellGrade]) -> list[str]:
    """Each cell whose automatic score in the gradebook is not what the grader recorded (`graded`: grade_id ->
    points; a cell it did not score counts as 0), described. A manual score is never a change: it is kept."""
    return [
        f"{name}: {cell.auto or 0.0:g} in the gradebook, {graded.get(name, 0.0):g} when graded"
        for name, cell in sorted(cells.items())
        if (cell.auto or 0.0) != graded.get(name, 0.0)
    ]


def graded_by_hand(cells: dict[str, CellGrade]) -> list[str]:
    """Each cell a teaching assistant scored by hand, with the automatic score it replaces."""
    return [
        f"{name}: {cell.manual:g}" + (f" (auto {cell.auto:g})" if cell.auto is not None else "")
        for name, cell in sorted(cells.items())
        if cell.manual is not None
    ]


def max_scores(db_url: str) -> dict[str, dict[str, float]]:
    """The points of every graded cell, per assignment: {assignment: {grade_id: max_score}}."""
    with Gradebook(db_url, course_id()) as gradebook:
        return {
            assignment.name: {
                cell.name: float(cell.max_score) for notebook in assignment.notebooks for cell in notebook.grade_cells
            }
            for assignment in gradebook.assignments
        }


def submission_totals(db_url: str, assignment: str) -> dict[str, tuple[float, float]]:
    """{student: (score, max_score)} for every submission of `assignment` recorded in the gradebook."""
    with Gradebook(db_url, course_id()) as gradebook:
        try:
            submissions = gradebook.assignment_submissions(assignment)
        except MissingEntry:
            return {}
        return {s.student.id: (float(s.score), float(s.max_score)) for s in submissions}


def flag_reasons(db_url: str, assignment: str) -> dict[str, list[str]]:
    """{student: every reason the grader gave, whole} for each flagged submission of `assignment`. A flag without a
    reason of the grader's (set by hand in the Formgrader, say) is listed with none."""
    flagged: dict[str, list[str]] = {}
    with Gradebook(db_url, course_id()) as gradebook:
        try:
            submissions = gradebook.assignment_submissions(assignment)
        except MissingEntry:
            return {}
        for submission in submissions:
            for notebook in submission.notebooks:
                if notebook.flagged:
                    reasons = flagged.setdefault(submission.student.id, [])
                    for comment in notebook.comments:
                        reasons += _flag_entries(comment.auto_comment or "")
    return flagged


def _flag_entries(comment: str) -> list[str]:
    """The grader's reasons in a comment, each with its continuation lines."""
    return [entry for entry in re.split(rf"\n(?={FLAGGED})", comment) if entry.startswith(FLAGGED)]
