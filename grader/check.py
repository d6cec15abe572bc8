"""`python -m grader check NOTEBOOK`: the terminal twin of JupyterLab's Validate button, part by part."""

from __future__ import annotations

from pathlib import Path

from grader.course import CourseError, nbgrader_config, relative
from grader.notebooks import nbgrader_cells, read_notebook
from grader.tables import format_table


def check(path: Path):
    """Execute a student's notebook as nbgrader's Validate does and score each graded test cell."""
    from grader.execute import execute, graded_scores, validating

    notebook = read_notebook(path)
    if not any(meta.get("grade") for _, _, meta in nbgrader_cells(notebook)):
        raise CourseError(f"{relative(path)}: no graded test cell; is this an exercise notebook?")
    with validating():
        return graded_scores(execute(notebook, path.resolve().parent, nbgrader_config()))


def check_table(scores) -> str:
    rows = [("test cell", "points", "result", "")]
    rows += [(s.grade_id, f"{s.score:g} / {s.max_score:g}", "pass" if s.passed else "FAIL", s.error) for s in scores]
    earned, total = sum(s.score for s in scores), sum(s.max_score for s in scores)
    verdict = f"visible tests: {earned:g} of {total:g} points (hidden tests are added when it is graded)"
    return format_table(rows) + "\n" + verdict
