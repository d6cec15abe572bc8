"""`python -m grader autograde` as an instructor runs it: from a zip, killed mid-batch and resumed; and `check`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import psutil

from grader.course import default_db_url
from grader.gradebook import cell_scores
from grader.sample_class import scripted_students, solution_answers, submission, write_class
from tests.conftest import REPO, grader_process

ASSIGNMENT = "ex01_slots"
SOURCE = REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
RELEASE = REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def test_a_zip_from_the_lms_is_graded_with_a_summary(tmp_path: Path) -> None:
    write_class(ASSIGNMENT, tmp_path / "class")
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        # LMS names: <student id>_<submission id>_<original file name>
        for student, sample in (("ana", "full"), ("ben", "blank"), ("cy", "copy_with_copy_copy")):
            notebook = tmp_path / "class" / sample / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            zipped.write(notebook, f"{student}_1001_{ASSIGNMENT}.ipynb")
    run = grader_process("autograde", str(archive), "--assignment", ASSIGNMENT, "--work", str(tmp_path / "work"))
    assert run.returncode == 0, run.stderr
    table = [line.split() for line in run.stdout.splitlines()]
    assert table[0] == ["student", "assignment", "score", "status"]
    copied = sum(scripted_students(ASSIGNMENT)[1]["copy_with_copy_copy"].values())
    assert table[1:4] == [
        ["ana", ASSIGNMENT, "12", "/", "12", "ok"],
        ["ben", ASSIGNMENT, "0", "/", "12", "ok"],
        ["cy", ASSIGNMENT, f"{copied:g}", "/", "12", "ok"],
    ]
    assert run.stdout.splitlines()[-1] == "graded 3 submission(s), 0 with errors, 0 flagged"
    progress = [line for line in run.stderr.splitlines() if line.startswith(f"{ASSIGNMENT} [")]
    assert progress[-1].startswith(f"{ASSIGNMENT} [{'#' * 30}] 3/3 ") and "failures 0" in progress[-1]


def test_a_broken_submission_gets_an_error_and_the_batch_completes(tmp_path: Path) -> None:
    incoming = tmp_path / "in"
    for student, text in (("ok1", None), ("broken", '{"cells": ['), ("empty", "")):
        folder = incoming / student / ASSIGNMENT
        folder.mkdir(parents=True)
        if text is None:
            nbformat.write(
                submission(nbformat.read(RELEASE, 4), solution_answers(nbformat.read(SOURCE, 4))), folder / RELEASE.name
            )
        else:
            (folder / RELEASE.name).write_text(text)
    run = grader_process("autograde", str(incoming), "--work", str(tmp_path / "work"))
    assert run.returncode == 0, run.stderr
    rows = {line.split()[0]: line for line in run.stdout.splitlines()[1:-1]}
    assert rows["ok1"].split()[2:6] == ["12", "/", "12", "ok"]
    assert rows["broken"].endswith("error: not valid JSON (line 1, column 12: Expecting value)")
    assert rows["empty"].endswith("error: not a notebook (the file is empty)")
    assert run.stdout.splitlines()[-1] == "graded 3 submission(s), 2 with errors, 0 flagged"


def test_a_broken_resubmission_leaves_no_earlier_grade_counting(tmp_path: Path) -> None:
    folder, work = tmp_path / "in" / "ana" / ASSIGNMENT, tmp_path / "work"
    folder.mkdir(parents=True)
    nbformat.write(
        submission(nbformat.read(RELEASE, 4), solution_answers(nbformat.read(SOURCE, 4))), folder / RELEASE.name
    )
    assert grader_process("autograde", str(tmp_path / "in"), "--work", str(work)).returncode == 0
    assert sum(cell_scores(default_db_url(work))["ana"][ASSIGNMENT].values()) == 12
    (folder / RELEASE.name).rename(folder / "renamed.ipynb")  # taken in, then found to lack the assignment's notebook
    run = grader_process("autograde", str(tmp_path / "in"), "--work", str(work))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[1].split()[2:6] == ["0", "/", "12", "error:"]
    assert set(cell_scores(default_db_url(work))["ana"][ASSIGNMENT].values()) == {0.0}
    again = grader_process("autograde", str(tmp_path / "in"), "--work", str(work))
    assert "1 submission(s) already graded with the same files" in again.stderr, again.stderr


def _gradebook_rows(work: Path) -> tuple[int, int]:
    with sqlite3.connect(work / "gradebook.db") as db:
        submissions = db.execute("select count(*) from submitted_assignment").fetchone()[0]
        grades = db.execute("select count(*) from grade").fetchone()[0]
    return submissions, grades


def test_a_killed_run_resumes_without_losing_or_duplicating_a_grade(tmp_path: Path) -> None:
    expected = write_class(ASSIGNMENT, tmp_path / "in")
    for student in sorted(expected)[8:]:  # eight students are enough to interrupt after three
        shutil.rmtree(tmp_path / "in" / student)
        del expected[student]
    work = tmp_path / "work"
    ledger = work / "grading_status" / ASSIGNMENT
    command = [sys.executable, "-m", "grader", "autograde", str(tmp_path / "in"), "--work", str(work), "--workers", "1"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    first = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 300
    while len(list(ledger.glob("*.json"))) < 3:
        assert first.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < deadline, "no submission was graded within 300 s"
        time.sleep(0.2)
    family = psutil.Process(first.pid).children(recursive=True)  # the sandbox's warm server and its children
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    gone, alive = psutil.wait_procs(family, timeout=15)
    assert not alive, f"processes outlived the killed run: {alive}"

    graded_before = {p.stem: p.stat().st_mtime_ns for p in ledger.glob("*.json")}
    assert 3 <= len(graded_before) < len(expected)
    second = grader_process("autograde", str(tmp_path / "in"), "--work", str(work), "--workers", "2")
    assert second.returncode == 0, second.stderr
    assert f"{ASSIGNMENT}: {len(graded_before)} submission(s) already graded with the same files" in second.stderr
    assert {p.stem: p.stat().st_mtime_ns for p in ledger.glob("*.json") if p.stem in graded_before} == graded_before

    statuses = {p.stem: json.loads(p.read_text())["status"] for p in ledger.glob("*.json")}
    assert statuses == dict.fromkeys(expected, "ok"), "what the killed run left behind must not hurt the next"
    scores = {student: cells[ASSIGNMENT] for student, cells in cell_scores(default_db_url(work)).items()}
    assert scores == expected
    cells_per_student = len(next(iter(expected.values())))
    assert _gradebook_rows(work) == (len(expected), len(expected) * cells_per_student)


def test_check_is_the_terminal_validate_button(tmp_path: Path) -> None:
    run = grader_process("check", str(RELEASE))
    assert run.returncode == 1
    rows = {line.split()[0]: line for line in run.stdout.splitlines()[1:-1]}
    assert set(rows) == {f"test_{part}_{kind}" for part in ("classify_slots", "copy") for kind in ("visible", "hidden")}
    for grade_id, line in rows.items():
        expected = "runs when graded" if grade_id.endswith("_hidden") else "FAIL"
        assert expected in line and " pass " not in line, run.stdout
    assert run.stdout.splitlines()[-1].startswith("visible tests: 0 of 4 points; 8 more points are decided by hidden")
    solved = tmp_path / RELEASE.name
    nbformat.write(submission(nbformat.read(RELEASE, 4), solution_answers(nbformat.read(SOURCE, 4))), solved)
    run = grader_process("check", str(solved))
    assert run.returncode == 0, run.stdout
    assert run.stdout.splitlines()[-1].startswith("visible tests: 4 of 4 points; 8 more points")


def test_a_sandbox_that_dies_mid_run_costs_no_student_anything(tmp_path: Path) -> None:
    """The warm server is killed as the first grade comes in: it is restarted, every submission it failed is graded
    again in the same run, and every student gets exactly the points of an undisturbed run."""
    from grader.autograde import autograde, plan
    from grader.sandbox import start_sandbox

    work = tmp_path / "work"
    expected = write_class(ASSIGNMENT, work / "submitted")
    killed = []

    def kill_once(_outcome: object) -> None:
        if not killed:
            killed.append(sandbox.generation)
            sandbox._process.kill()  # bubblewrap, and with it the warm server and every child

    with start_sandbox(work, workers=2) as sandbox:
        outcomes = autograde(plan(ASSIGNMENT, work), work, workers=2, on_outcome=kill_once, sandbox=sandbox)
        assert killed == [1] and sandbox.generation == 2, "the dead server must have been replaced, once"
    assert {o.student: o.status for o in outcomes} == dict.fromkeys(expected, "ok")
    assert {o.student: o.score for o in outcomes} == {s: sum(cells.values()) for s, cells in expected.items()}
    scores = cell_scores(default_db_url(work))
    assert {student: scores[student][ASSIGNMENT] for student in expected} == expected


def test_check_never_counts_a_hidden_cell_as_earned(tmp_path: Path) -> None:
    """A wrong classify_slots whose visible lines pass and a stub copy: check scores the 2 visible points only; the
    hidden cell's share of the rules that hold is decided when graded."""
    answers, expected = scripted_students(ASSIGNMENT)
    student = "classify_crashes_half_initialised"
    assert expected[student]["test_classify_slots_visible"] == 2  # what grading gives it
    assert 0 < expected[student]["test_classify_slots_hidden"] < 4
    wrong = tmp_path / RELEASE.name
    nbformat.write(submission(nbformat.read(RELEASE, 4), answers[student]), wrong)
    run = grader_process("check", str(wrong))
    assert run.returncode == 1
    rows = {line.split()[0]: line.split(None, 4)[1:] for line in run.stdout.splitlines()[1:-1]}
    assert rows["test_classify_slots_visible"][:3] == ["2", "/", "2"]
    assert "pass" in rows["test_classify_slots_visible"][3]
    assert rows["test_classify_slots_hidden"][:3] == ["-", "/", "4"]
    assert rows["test_classify_slots_hidden"][3].startswith("runs when graded")
    assert run.stdout.splitlines()[-1].startswith("visible tests: 2 of 4 points;")


def test_check_knows_a_renamed_copy_by_its_cells_and_refuses_a_notebook_that_is_no_exercise(tmp_path: Path) -> None:
    renamed = tmp_path / f"{ASSIGNMENT} (1).ipynb"
    nbformat.write(nbformat.read(RELEASE, 4), renamed)
    run = grader_process("check", str(renamed))
    assert run.returncode == 1 and run.stdout.splitlines()[-1].startswith("visible tests: 0 of 4 points"), run.stderr
    stranger = tmp_path / "mine.ipynb"
    notebook = nbformat.read(RELEASE, 4)
    for cell in notebook.cells:
        cell.metadata.pop("nbgrader", None)
    notebook.cells.append(
        nbformat.v4.new_code_cell(
            "assert True", metadata={"nbgrader": {"grade": True, "grade_id": "mine", "points": 1}}
        )
    )
    nbformat.write(notebook, stranger)
    run = grader_process("check", str(stranger))
    assert run.returncode == 1
    said = run.stderr.strip()
    assert said.startswith(f"error: {stranger}: not an exercise of this course: its name is no exercise's (")
    assert f"{ASSIGNMENT}.ipynb" in said and said.endswith("and it holds the graded cells of none of them")


def test_help_says_which_commands_are_the_students() -> None:
    run = grader_process("--help")
    assert run.returncode == 0 and "instructor's command line" not in run.stdout
    said = " ".join(run.stdout.split())
    assert "Students: `check` runs an exercise's tests, `workspace` copies new exercises" in said


def test_check_takes_a_folder_with_one_exercise_notebook_and_says_what_to_pass_otherwise(tmp_path: Path) -> None:
    folder = tmp_path / "workspace" / ASSIGNMENT
    folder.mkdir(parents=True)
    shutil.copyfile(RELEASE, folder / RELEASE.name)
    nbformat.write(nbformat.v4.new_notebook(), folder / "scratch.ipynb")  # not an exercise: never a candidate
    run = grader_process("check", str(folder))
    assert run.returncode == 1 and run.stdout.splitlines()[-1].startswith("visible tests: 0 of 4 points"), run.stderr
    other = tmp_path / "workspace" / "ex02_routing" / "ex02_routing.ipynb"
    other.parent.mkdir()
    shutil.copyfile(REPO / "exercises" / "ex02_routing" / other.name, other)
    run = grader_process("check", str(tmp_path / "workspace"))
    assert run.returncode == 1 and "Is a directory" not in run.stderr
    assert run.stderr.strip() == (
        f"error: {tmp_path / 'workspace'}: a folder with no exercise notebook; check one notebook, e.g. "
        f"`python -m grader check {folder / RELEASE.name}` or "
        f"`python -m grader check {other}`"
    )
