"""A synthetic class goes through stock nbgrader autograde; every graded cell scores exactly as expected."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from grader.autograde import autograde
from grader.course import default_db_url
from grader.gradebook import cell_scores
from tests.conftest import REPO, grader
from tests.synthetic_class import write_class

ASSIGNMENTS = sorted(p.stem for p in (REPO / "tests" / "answers").glob("ex*.py"))


def test_every_assignment_has_scripted_students() -> None:
    solutions = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    assert solutions and ASSIGNMENTS == solutions


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_class_scores_exactly_as_expected(assignment: str, tmp_path: Path) -> None:
    expected = write_class(assignment, REPO, tmp_path / "submitted")
    assert len(expected) >= 3
    autograde(assignment, tmp_path)
    recorded = {
        student: per_assignment[assignment] for student, per_assignment in cell_scores(default_db_url(tmp_path)).items()
    }
    assert recorded == expected

    out = tmp_path / "grades.csv"
    run = grader("export", "--work", str(tmp_path), "--out", str(out))
    assert run.returncode == 0, run.stderr
    rows = {row["student"]: row for row in csv.DictReader(out.open())}
    assert set(rows) == set(expected)
    for student, cells in expected.items():
        assert rows[student]["assignment"] == assignment
        assert float(rows[student]["score"]) == sum(cells.values())
        assert {grade_id: float(rows[student][grade_id]) for grade_id in cells} == cells
