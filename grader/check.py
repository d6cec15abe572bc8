"""`python -m grader check NOTEBOOK`: the terminal twin of JupyterLab's Validate button, part by part.

Only visible tests are scored: a test cell with a hidden-test block in the course's source notebook gets its points
when the work is graded, so it is listed as "runs when graded", never as passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course import CourseError, nbgrader_config, relative, solutions
from grader.notebooks import hidden_test_ids, nbgrader_cells, read_notebook
from grader.tables import format_table

if TYPE_CHECKING:
    from grader.execute import CellScore


@dataclass(frozen=True)
class Checked:
    """The graded test cells of a checked notebook, and which of them hold hidden tests."""

    scores: list[CellScore]
    hidden: frozenset[str]

    @property
    def visible(self) -> list[CellScore]:
        return [s for s in self.scores if s.grade_id not in self.hidden]

    @property
    def passed(self) -> bool:
        """Every visible test passes, and no hidden cell fails already on its visible lines."""
        return all(s.passed for s in self.scores)


def check(path: Path) -> Checked:
    """Execute a student's notebook as nbgrader's Validate does and score each visible graded test cell."""
    notebook = read_notebook(path)
    if not any(meta.get("grade") for _, _, meta in nbgrader_cells(notebook)):
        raise CourseError(f"{relative(path)}: no graded test cell; is this an exercise notebook?")
    source = read_notebook(_source_of(path))
    from grader.execute import execute, graded_scores, validating  # nbgrader loads slowly; input checked first

    with validating():
        scores = graded_scores(execute(notebook, path.resolve().parent, nbgrader_config()))
    # A cell whose grade_id the source does not know is not a visible test of this exercise: it is not scored.
    known = {meta.get("grade_id") for _, _, meta in nbgrader_cells(source)}
    unknown = {s.grade_id for s in scores if s.grade_id not in known}
    return Checked(scores, frozenset(hidden_test_ids(source) | unknown))


def _source_of(path: Path) -> Path:
    """The source notebook in solutions/ of the same name: the exercise the student's notebook was released from."""
    sources = sorted(solutions().glob(f"*/{path.name}"))
    if not sources:
        raise CourseError(f"{relative(path)}: not an exercise of this course (no solutions/*/{path.name})")
    return sources[0]


def check_table(checked: Checked) -> str:
    """A row per graded test cell: visible ones with their points, hidden ones as running when graded."""
    rows = [("test cell", "points", "result", "")]
    for s in checked.scores:
        if s.grade_id in checked.hidden:
            note = f"fails already: {s.error}" if not s.passed else ""
            rows.append((s.grade_id, f"- / {s.max_score:g}", "runs when graded", note))
        else:
            rows.append((s.grade_id, f"{s.score:g} / {s.max_score:g}", "pass" if s.passed else "FAIL", s.error))
    earned = sum(s.score for s in checked.visible)
    total = sum(s.max_score for s in checked.visible)
    hidden = sum(s.max_score for s in checked.scores if s.grade_id in checked.hidden)
    verdict = f"visible tests: {earned:g} of {total:g} points; {hidden:g} more points are decided by hidden tests"
    return format_table(rows) + "\n" + verdict + " when the exercise is graded"
