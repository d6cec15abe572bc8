"""Grades out of nbgrader's gradebook: per student, per assignment, per graded cell."""

from __future__ import annotations

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
