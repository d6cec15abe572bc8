"""Prove every source notebook passes all its graded cells and every released one fails them all."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course import CourseError, assignment_names, exercises, nbgrader_config, relative
from grader.notebooks import read_notebook
from grader.release import check_sources
from grader.tables import format_table

if TYPE_CHECKING:
    from grader.execute import CellScore


@dataclass(frozen=True)
class Check:
    """One graded cell of one notebook, with the outcome validation expects of it."""

    path: Path
    expected: str  # "pass" in solutions/, "fail" in exercises/
    score: CellScore

    @property
    def got(self) -> str:
        return "pass" if self.score.passed else "fail"

    @property
    def ok(self) -> bool:
        return self.got == self.expected


def validate(assignments: list[str], workers: int = 2) -> list[Check]:
    """Execute each source notebook and its release; one Check per graded cell."""
    jobs = []
    for name in assignment_names(assignments):
        for source in check_sources(name):
            released = exercises() / name / source.name
            if not released.is_file():
                raise CourseError(f"{relative(released)}: missing; run `python -m grader release {name}`")
            jobs += [(source, "pass"), (released, "fail")]
    config = nbgrader_config()
    from grader.execute import execute, graded_scores, validating  # nbgrader loads slowly; input checked first

    def check_notebook(path: Path, expected: str) -> list[Check]:
        scores = graded_scores(execute(read_notebook(path), path.parent, config))
        if not scores:
            raise CourseError(f"{relative(path)}: no automatically graded test cell")
        return [Check(path, expected, score) for score in scores]

    # Set once for all threads: notebooks may ask whether they run under nbgrader validation.
    with validating(), ThreadPoolExecutor(max(1, workers)) as pool:
        runs = pool.map(lambda job: check_notebook(*job), jobs)
        return [check for run in runs for check in run]


def table(checks: list[Check]) -> str:
    """A per-cell table for the terminal, with the reason beside each cell that went the wrong way."""
    rows = [("notebook", "cell", "grade_id", "points", "expected", "got", "")]
    for check in checks:
        note = "ok" if check.ok else f"WRONG {check.score.error}".rstrip()
        rows.append(
            (
                relative(check.path),
                str(check.score.cell),
                check.score.grade_id,
                f"{check.score.max_score:g}",
                check.expected,
                check.got,
                note,
            )
        )
    return format_table(rows)
