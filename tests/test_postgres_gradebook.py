"""A PostgreSQL gradebook, on a real server (tests.postgres_server): autograde, resume, feedback and report with
`--db postgresql://...`, the Formgrader on the same gradebook, and a teaching assistant grading by hand in a second
process while autograde runs."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from grader.gradebook import cell_scores
from grader.nbgrader_setup import ready_nbgrader
from grader.sample_class import write_class
from tests.conftest import REPO, grader, grader_process
from tests.e2e.lab_server import running_lab
from tests.postgres_server import Postgres

ASSIGNMENT = "ex01_slots"


def small_class(folder: Path, size: int) -> dict[str, dict[str, float]]:
    """The first `size` students of the sample class (in nbgrader's layout under `folder`), with their points."""
    expected = write_class(ASSIGNMENT, folder)
    for student in sorted(expected)[size:]:
        shutil.rmtree(folder / student)
        del expected[student]
    return expected


def test_autograde_resume_feedback_report_and_formgrader_on_postgres(
    postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres.new_database("course")
    expected = small_class(tmp_path / "in", 5)
    first = sorted(expected)[:3]
    early = tmp_path / "early"  # the submissions in by the deadline; the rest come in later
    for student in first:
        shutil.copytree(tmp_path / "in" / student, early / student)
    work = tmp_path / "work"
    options = ("--work", str(work), "--db", url, "--workers", "2")
    run = grader("autograde", str(early), *options)
    assert run.returncode == 0, run.stderr
    run = grader_process("autograde", str(tmp_path / "in"), *options)
    assert run.returncode == 0, run.stderr
    assert f"{ASSIGNMENT}: 3 submission(s) already graded with the same files" in run.stderr
    assert f"{ASSIGNMENT} [{'#' * 30}] 2/2 " in run.stderr  # only the two new ones were graded
    assert run.stdout.splitlines()[-1] == "graded 5 submission(s), 0 with errors, 0 flagged"
    assert not (work / "gradebook.db").exists(), "nothing may go to the default SQLite gradebook"
    assert {student: cells[ASSIGNMENT] for student, cells in cell_scores(url).items()} == expected

    run = grader("feedback", "--work", str(work), "--db", url)
    assert run.returncode == 0, run.stderr
    pages = sorted(work.glob(f"feedback/*/{ASSIGNMENT}/*.html"))
    assert sorted(page.parent.parent.name for page in pages) == sorted(expected)

    run = grader("report", "--work", str(work), "--db", url, "--out", str(tmp_path / "report"))
    assert run.returncode == 0, run.stderr
    rows = {row["student"]: row for row in csv.DictReader((tmp_path / "report" / "grades.csv").open())}
    assert {student: float(row["score"]) for student, row in rows.items()} == {
        student: sum(cells.values()) for student, cells in expected.items()
    }
    assert {row["status"] for row in rows.values()} == {"ok"}

    # The Formgrader (`make lab` with GRADER_DB_URL) reads the same gradebook, and a score given there lands in it.
    monkeypatch.setenv("GRADER_DB_URL", url)
    (tmp_path / "runtime").mkdir()
    with running_lab(tmp_path / "runtime") as lab:
        listed = lab.json(f"/formgrader/api/submissions/{ASSIGNMENT}")
        assert {s["student"]: s["score"] for s in listed} == {s: sum(c.values()) for s, c in expected.items()}
        student = first[0]
        ready_nbgrader()
        with Gradebook(url) as gradebook:
            grade = gradebook.find_submission(ASSIGNMENT, student).notebooks[0].grades[0]
            grade_id, name = grade.id, grade.name
        assert lab.json(f"/formgrader/api/grade/{grade_id}")["auto_score"] == expected[student][name]
        status, _ = lab.request(f"/formgrader/api/grade/{grade_id}", "PUT", {"manual_score": 0.5})
        assert status == 200
    assert cell_scores(url)[student][ASSIGNMENT][name] == 0.5


def test_manual_grades_written_while_autograde_runs_are_all_kept(postgres: Postgres, tmp_path: Path) -> None:
    url = postgres.new_database("busy")
    expected = small_class(tmp_path / "in", 6)
    by_hand = sorted(expected)[:2]  # graded first, then graded by hand while the others are autograded
    early = tmp_path / "early"
    for student in by_hand:
        shutil.copytree(tmp_path / "in" / student, early / student)
    work = tmp_path / "work"
    options = ("--work", str(work), "--db", url, "--workers", "2")
    assert grader("autograde", str(early), *options).returncode == 0

    stop, result = tmp_path / "stop", tmp_path / "manual.json"
    assistant = subprocess.Popen(
        [sys.executable, "-m", "tests.manual_grading", url, ASSIGNMENT, str(stop), str(result), *by_hand],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    try:
        started = stop.with_suffix(".started")
        for _ in range(600):  # its imports take a while on a busy machine; autograde starts once it grades
            if started.exists() or assistant.poll() is not None:
                break
            time.sleep(0.1)
        run = grader("autograde", str(tmp_path / "in"), *options)
    finally:
        stop.touch()
        assistant.wait(timeout=120)
    assert assistant.returncode == 0
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "graded 6 submission(s), 0 with errors, 0 flagged"
    manual = json.loads(result.read_text())
    assert manual["rounds"] >= 3, "the assistant must have been grading all through the autograde run"

    ready_nbgrader()
    with Gradebook(url) as gradebook:
        for student in sorted(expected):
            [notebook] = gradebook.find_submission(ASSIGNMENT, student).notebooks
            grades = {grade.name: grade for grade in notebook.grades}
            automatic = {name: grade.auto_score for name, grade in grades.items() if grade.auto_score is not None}
            assert automatic == expected[student], student  # the autograder's side
            if student in by_hand:  # the assistant's side: the last score written to every cell is there
                assert {name: grade.manual_score for name, grade in grades.items()} == manual["written"][student]
                comments = {comment.manual_comment for comment in notebook.comments}
                assert comments == {f"round {manual['rounds']}"}
            else:
                assert all(grade.manual_score is None for grade in grades.values())
        assert len(gradebook.assignment_submissions(ASSIGNMENT)) == len(expected)
