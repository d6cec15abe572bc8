"""`python -m grader demo`: a sample class built, autograded, given feedback and reported, in one command; it shows
every view something: a partial answer with a pasted image, parts not attempted, two cheats flagged."""

from __future__ import annotations

import csv
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from grader.common_mistakes import MISTAKE, NOT_ATTEMPTED
from grader.notebooks import in_parts, read_notebook
from grader.sample_class import scripted_students, write_class
from grader.showcase import IMAGE, write_showcase
from tests.conftest import REPO, grader

ASSIGNMENT = "ex03_training"


def _not_attempted(answers: dict[str, dict[str, str]]) -> dict[str, set[str]]:
    """Each student's test cells of the parts they typed nothing into (their solution cells not among `answers`)."""
    source = read_notebook(REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    parts: dict[str, tuple[set[str], set[str]]] = {}
    for cell, part in in_parts(source.cells):
        meta = cell.metadata.get("nbgrader") or {}
        if meta.get("solution") or meta.get("grade"):
            parts.setdefault(part, (set(), set()))[0 if meta.get("solution") else 1].add(meta["grade_id"])
    return {
        student: {test for solved, tests in parts.values() if not solved & set(typed) for test in tests}
        for student, typed in answers.items()
    }


def test_demo_grades_a_sample_class_end_to_end(
    course_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One assignment keeps this test short; the autograde tests grade every assignment's scripted class.
    monkeypatch.setattr("grader.demo.scripted_assignments", lambda: [ASSIGNMENT])
    expected = write_class(ASSIGNMENT, tmp_path / "expected")  # the full solution, a blank, the mistakes
    expected |= write_showcase(ASSIGNMENT, tmp_path / "expected")  # a partial answer, two cheats
    run = grader("demo", "--workers", "2", root=course_copy)
    assert run.returncode == 0, run.stdout + run.stderr
    demo = course_copy / "work" / "demo"
    lines = run.stdout.splitlines()
    assert lines[0] == (
        f"sample class: {len(expected)} submissions in work/demo/incoming (full solutions, blanks, typical mistakes; "
        f"in {ASSIGNMENT} also a partial answer with a pasted image and two cheats)"
    )
    assert f"graded {len(expected)} submission(s), 0 with errors, 2 flagged" in lines
    assert f"feedback: {len(expected)} HTML page(s) under work/demo/feedback" in lines
    assert lines[-6:] == [
        "report:   work/demo/grades.csv",
        "report:   work/demo/summary.png",
        "report:   work/demo/common_mistakes.csv",
        f"report:   work/demo/common_mistakes/{ASSIGNMENT}.png",
        "gradebook: work/demo/gradebook.db",
        "formgrader: make lab WORK=work/demo",
    ]
    with (demo / "grades.csv").open() as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    assert {student: float(row["score"]) for student, row in rows.items()} == {
        student: pytest.approx(sum(points.values()), abs=1e-9) for student, points in expected.items()
    }  # a sum of hundredths
    cheats = {student: row["status"] for student, row in rows.items() if row["status"] != "ok"}
    assert sorted(cheats) == ["cheat_edited_test", "cheat_silenced_tests"]
    assert "test cell 'test_module_modes_visible' was edited" in cheats["cheat_edited_test"]
    assert "the notebook's tests gave 2, the trusted check 0" in cheats["cheat_silenced_tests"]
    # The pasted image is on the partial answer's feedback page, inline.
    assert len(list((demo / "feedback").glob(f"*/{ASSIGNMENT}/*.html"))) == len(expected)
    [page] = (demo / "feedback" / "partial" / ASSIGNMENT).glob("*.html")
    assert 'src="data:image/png;base64,' in page.read_text() and IMAGE not in page.read_text()
    # The report: each part left as released is not attempted, every other cell that earned nothing a mistake.
    answers, _ = scripted_students(ASSIGNMENT)
    first = {"module_modes": ""}  # part 1's solution cell: the partial answer's, where the cheat silences the rest
    untouched = _not_attempted(
        answers | {"blank": {}, "partial": first, "cheat_edited_test": {}, "cheat_silenced_tests": first}
    )
    with (demo / "common_mistakes.csv").open() as file:
        entries = list(csv.DictReader(file))
    counted = Counter()
    for entry in entries:
        assert entry["share"] == f"{100 * int(entry['students']) / len(expected):.1f}"
        counted[entry["cell"], entry["kind"]] += int(entry["students"])
    full = expected["full"]
    lost = Counter(
        (cell, NOT_ATTEMPTED if cell in untouched.get(student, set()) else MISTAKE)
        for student, points in expected.items()
        for cell, got in points.items()
        if got < full[cell]
    )
    # A part left as released is counted once; a mistake once for each rule it breaks (at least once).
    assert set(counted) == set(lost) and {kind for _, kind in lost} == {MISTAKE, NOT_ATTEMPTED}
    assert all(counted[key] == n if key[1] == NOT_ATTEMPTED else counted[key] >= n for key, n in lost.items())
    assert (demo / "common_mistakes" / f"{ASSIGNMENT}.png").read_bytes().startswith(b"\x89PNG")
    # Closed properly: the gradebook alone, no SQLite -wal or -shm left; every student named by their id.
    assert sorted(p.name for p in demo.glob("gradebook.db*")) == ["gradebook.db"]
    with sqlite3.connect(demo / "gradebook.db") as gradebook:
        names = dict(gradebook.execute("SELECT id, last_name FROM student").fetchall())
    assert names == {student: student for student in expected}
