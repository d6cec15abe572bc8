"""`python -m grader new exNN_name`: a new exercise that releases and passes the rules test as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.sandbox import start_sandbox
from tests import test_clauses as clauses  # a module, so pytest does not collect its tests here again
from tests.conftest import grader

NAME = "ex09_first_steps"


def test_new_refuses_a_bad_name_and_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "solutions").mkdir()
    bad = grader("new", "ex9_x", root=tmp_path)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1
    assert "'ex9_x': an exercise is named exNN_name" in bad.stderr
    assert grader("new", NAME, root=tmp_path).returncode == 0
    again = grader("new", NAME, root=tmp_path)
    assert again.returncode == 1
    assert again.stderr == f"error: solutions/{NAME}: already exists; `new` never overwrites an exercise\n"


def test_a_new_exercise_releases_and_passes_the_rules_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "solutions").mkdir()
    (tmp_path / "exercises").mkdir()
    made = grader("new", NAME, root=tmp_path)
    assert made.returncode == 0, made.stderr
    released = grader("release", NAME, root=tmp_path)  # fills the hidden-test block, as an instructor would
    assert released.returncode == 0, released.stdout + released.stderr
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(tmp_path))
    clauses.test_every_part_numbers_its_rules_and_the_checks_name_them(NAME)
    with start_sandbox(tmp_path / "work", 1) as sandbox:
        clauses.test_every_rule_has_fixed_cases_and_a_mistake_that_breaks_it_alone(
            NAME, sandbox, clauses.observer(sandbox)
        )
