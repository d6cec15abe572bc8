"""`python -m grader demo`: a sample class built, autograded, given feedback and reported, in one command."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from grader.sample_class import write_class
from tests.conftest import grader


def test_demo_grades_a_sample_class_end_to_end(
    course_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One assignment keeps this test short; the autograde tests grade every assignment's scripted class.
    monkeypatch.setattr("grader.demo.scripted_assignments", lambda: ["ex03_training"])
    expected = write_class("ex03_training", tmp_path / "expected")  # the full solution, a blank, the mistakes
    run = grader("demo", "--workers", "2", root=course_copy)
    assert run.returncode == 0, run.stdout + run.stderr
    demo = course_copy / "work" / "demo"
    lines = run.stdout.splitlines()
    assert (
        lines[0] == f"sample class: {len(expected)} submissions in work/demo/incoming (full solutions, blanks, "
        "typical mistakes)"
    )
    assert f"graded {len(expected)} submission(s), 0 with errors, 0 flagged" in lines
    assert f"feedback: {len(expected)} HTML page(s) under work/demo/feedback" in lines
    assert lines[-6:] == [
        "report:   work/demo/grades.csv",
        "report:   work/demo/summary.png",
        "report:   work/demo/common_mistakes.csv",
        "report:   work/demo/common_mistakes.png",
        "gradebook: work/demo/gradebook.db",
        "formgrader: make lab WORK=work/demo",
    ]
    with (demo / "grades.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert {row["student"]: float(row["score"]) for row in rows} == {
        student: sum(points.values()) for student, points in expected.items()
    }
    assert {row["status"] for row in rows} == {"ok"}
    assert (demo / "summary.png").read_bytes().startswith(b"\x89PNG")
    assert len(list((demo / "feedback").glob("*/ex03_training/*.html"))) == len(expected)
    # The class's common mistakes: each part the scripted mistakes lose points on, every student who lost some
    # counted at least once there (once for each rule broken).
    with (demo / "common_mistakes.csv").open() as file:
        mistakes = list(csv.DictReader(file))
    full = expected["full"]
    lost = Counter(part for points in expected.values() for part, got in points.items() if got < full[part])
    counted = Counter()
    for row in mistakes:
        assert row["assignment"] == "ex03_training"
        assert row["share"] == f"{100 * int(row['students']) / len(expected):.1f}"
        counted[row["part"]] += int(row["students"])
    assert lost and set(counted) == set(lost) and all(counted[part] >= students for part, students in lost.items())
    assert (demo / "common_mistakes.png").read_bytes().startswith(b"\x89PNG")
