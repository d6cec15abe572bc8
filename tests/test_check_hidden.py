"""`grader check --hidden`: someone studying alone with solutions/ gets each part's points and every broken rule as
grading and its feedback give them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from grader.check import PartResult, check_hidden
from grader.course import default_db_url
from grader.feedback import failure_message, graded_parts, result_words
from grader.gradebook import cell_scores
from grader.hidden_tests import BEGIN
from grader.sandbox import start_sandbox
from grader.trusted import TrustedChecker
from tests.conftest import GradedClass, grader_process

ASSIGNMENT = "ex01_slots"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"


@dataclass
class Graded:
    work: Path
    expected: dict[str, dict[str, float]]  # mistakes.py: student -> {grade_id: points}
    autograded: dict[str, dict[str, float]]  # the gradebook after `autograde`
    checked: dict[str, list[PartResult]]  # check_hidden of the same notebooks


@pytest.fixture(scope="module")
def graded(graded_classes: Callable[[str], GradedClass], tmp_path_factory: pytest.TempPathFactory) -> Graded:
    """Every scripted student of the assignment (full, blank and each typical mistake), autograded (the session's
    class, which tests/test_autograde.py grades too), and checked with hidden tests."""
    graded_class = graded_classes(ASSIGNMENT)
    work, expected = graded_class.work_dir, graded_class.expected
    with start_sandbox(tmp_path_factory.mktemp("check_hidden"), workers=2) as sandbox:
        checker = TrustedChecker(ASSIGNMENT, sandbox)
        checked = {s: check_hidden(work / "submitted" / s / ASSIGNMENT / NOTEBOOK, checker) for s in expected}
    scores = cell_scores(default_db_url(work))
    return Graded(work, expected, {s: scores[s][ASSIGNMENT] for s in expected}, checked)


def test_check_hidden_gives_every_scripted_student_the_points_of_autograde(graded: Graded) -> None:
    assert len(graded.expected) > 10  # full, blank and the scripted mistakes
    for student, results in graded.checked.items():
        points = {r.grade_id: r.score for r in results}
        assert points == graded.autograded[student] == graded.expected[student], student
    assert {sum(r.score for r in results) for results in graded.checked.values()} != {12.0}, "some must lose points"


def test_check_hidden_says_of_each_part_what_the_feedback_says(graded: Graded) -> None:
    """Label, points and what failed in each graded test cell, as grader.feedback reads them from the autograded
    notebook and the gradebook."""
    for student, results in graded.checked.items():
        autograded = nbformat.read(graded.work / "autograded" / student / ASSIGNMENT / NOTEBOOK, 4)
        scores = graded.autograded[student]
        feedback = []
        for cell, label, _ in graded_parts(autograded.cells, BEGIN):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if label and grade_id in scores:
                points = float(cell.metadata.nbgrader.points)
                said = result_words(scores[grade_id], points, failure_message(cell))
                feedback.append(PartResult(grade_id, label, scores[grade_id], points, said))
        assert results == feedback, student
    failed = [r for r in graded.checked["flag_tables_as_hook_tables"] if r.score < r.points]
    assert [r.label for r in failed] == ["Part 1: which group does each slot belong to? \N{EM DASH} hidden tests"]
    assert failed[0].said.startswith("rule 2 (each of the seventeen slots in its group, whatever it holds) is broken: ")


def test_check_hidden_from_the_terminal(graded: Graded) -> None:
    notebook = graded.work / "submitted" / "flag_tables_as_hook_tables" / ASSIGNMENT / NOTEBOOK
    run = grader_process("check", str(notebook), "--hidden")
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert "Part 1: which group does each slot belong to? \N{EM DASH} hidden tests: 3.2 / 4 points" in lines
    assert "Part 2: a copy that shares the parameters \N{EM DASH} hidden tests: 4 / 4 points" in lines
    assert lines[-1] == "with hidden tests: 11.2 of 12 points, as grading gives them"
    full = grader_process("check", str(graded.work / "submitted" / "full" / ASSIGNMENT / NOTEBOOK), "--hidden")
    assert full.returncode == 0 and full.stdout.splitlines()[-1].startswith("with hidden tests: 12 of 12"), full.stdout


# Part 2's solution with two independent mistakes: its registries deep-copied (rule 4), user containers copied (7).
TWO_BUGS = (
    """            elif name in containers:
                value = type(value)(value)""",
    """            elif name in ("_parameters", "_buffers"):
                value = __import__("copy").deepcopy(value)
            elif name in containers or isinstance(value, (dict, set, list)):
                value = type(value)(value)""",
)


def test_two_independent_mistakes_are_both_reported_in_one_round(graded: Graded, tmp_path: Path) -> None:
    notebook = nbformat.read(graded.work / "submitted" / "full" / ASSIGNMENT / NOTEBOOK, 4)
    [cell] = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "copy_sharing_parameters"]
    assert cell.source.count(TWO_BUGS[0]) == 1
    cell.source = cell.source.replace(*TWO_BUGS)
    nbformat.write(notebook, tmp_path / NOTEBOOK)
    run = grader_process("check", str(tmp_path / NOTEBOOK), "--hidden")
    lines = run.stdout.splitlines()
    heading = "Part 2: a copy that shares the parameters \N{EM DASH} hidden tests: 3 / 4 points"  # 6 of 8 rules
    said = lines[lines.index(heading) + 1 :]
    broken = [line.strip().split(" (")[0] for line in said if " is broken: in " in line]
    assert broken == ["rule 4", "rule 7"], run.stdout
    assert "    rules 1, 2, 3, 5, 6 and 8 hold: 3 of 4 points (0.5 a rule)" in said


def test_check_hidden_refuses_a_notebook_that_lost_a_graded_cell(graded: Graded, tmp_path: Path) -> None:
    """nbgrader cannot grade it (grading gives it nothing): check says so rather than count the cells left."""
    notebook = nbformat.read(graded.work / "submitted" / "full" / ASSIGNMENT / NOTEBOOK, 4)
    notebook.cells = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_copy_hidden"]
    lost = tmp_path / NOTEBOOK
    nbformat.write(notebook, lost)
    run = grader_process("check", str(lost), "--hidden")
    assert run.returncode == 1
    assert run.stderr.strip() == f"error: {lost}: graded cell test_copy_hidden is missing; grading would fail"
