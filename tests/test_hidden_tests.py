"""Hidden-test blocks: a fixed call of the exercise's checks, written by `release`, checked by `release --check`, run
by stock nbgrader as plain notebook code that names the failing case against the solution's observations computed
on this machine."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.course import default_db_url
from grader.gradebook import cell_scores
from grader.hidden_tests import BEGIN, END
from tests.conftest import REPO, grader

SOURCE = Path("solutions/extoy/extoy.ipynb")
BLOCK = f"""{BEGIN}
# The hidden tests of solutions/extoy/checks.py, written by `python -m grader release`.
from grader.hidden_tests import run_hidden_tests
run_hidden_tests('extoy', 'test_answer', globals())
{END}"""


def _released(course: Path) -> nbformat.NotebookNode:
    run = grader("release", root=course)
    assert run.returncode == 0, run.stderr
    return nbformat.read(course / SOURCE, as_version=4)


def _hidden_block(notebook: nbformat.NotebookNode) -> str:
    source = notebook.cells[2].source
    return source[source.index(BEGIN) : source.index(END) + len(END)]


def test_release_writes_a_short_block_that_names_the_checks(toy_course_with_checks: Path) -> None:
    notebook = _released(toy_course_with_checks)
    assert _hidden_block(notebook) == BLOCK  # the hand-written block is replaced; nothing derived is stored
    stored = json.loads((toy_course_with_checks / "work/references/extoy.json").read_text())
    # the solution's observations, computed by the trusted check in the sandbox, kept only in the work folder
    assert stored["observations"]["test_answer"] == {
        "rule 1: the class of what answer() returns": "int",
        "rule 2: what answer() returns": ["returns", 42],
    }


def test_the_checks_and_mistakes_are_never_released(toy_course_with_checks: Path) -> None:
    _released(toy_course_with_checks)
    released = sorted(p.name for p in (toy_course_with_checks / "exercises/extoy").iterdir())
    assert released == ["extoy.ipynb"]
    run = grader("release", "--check", root=toy_course_with_checks)
    assert run.returncode == 0, run.stdout + run.stderr


def _run_block(course: Path, answer, monkeypatch: pytest.MonkeyPatch) -> object:
    """The block as the notebook runs it: what its last line gives (the cell's value, nbgrader's partial credit)."""
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(course))
    namespace = {"answer": answer}
    *lines, last = BLOCK.splitlines()[:-1]  # END is a comment
    exec("\n".join(lines), namespace)
    return eval(last, namespace)


WRONG_TYPE = 'rule 1 (an int) is broken: in the case "the class of what answer() returns"\n  expected: "int"\n'


def test_the_block_gives_nothing_when_every_rule_holds_and_fails_when_none_does(
    toy_course_with_checks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _released(toy_course_with_checks)
    assert _run_block(toy_course_with_checks, lambda: 42, monkeypatch) is None  # nbgrader: every point
    with pytest.raises(AssertionError) as failure:
        _run_block(toy_course_with_checks, lambda: "42", monkeypatch)
    message = str(failure.value)  # every broken rule at once, each with its first differing case
    assert message.startswith(WRONG_TYPE + '  got:      "str"\nrule 2 (the answer to everything) is broken: ')
    assert message.endswith("no rule holds: 0 of 3 points (1.5 a rule)")


def test_the_block_gives_the_points_of_the_rules_that_hold_and_prints_the_others(
    toy_course_with_checks: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    _released(toy_course_with_checks)
    assert _run_block(toy_course_with_checks, lambda: 41, monkeypatch) == 1.5  # the cell's value: partial credit
    assert capsys.readouterr().out == (
        'rule 2 (the answer to everything) is broken: in the case "what answer() returns"\n'
        '  expected: ["returns", 42]\n  got:      ["returns", 41] (they first differ at entry 2)\n'
        "rule 1 holds: 1.5 of 3 points (1.5 a rule)\n"
    )


def test_check_names_a_hand_edited_hidden_block(toy_course_with_checks: Path) -> None:
    notebook = _released(toy_course_with_checks)
    notebook.cells[2].source = notebook.cells[2].source.replace("'test_answer'", "'test_other'", 1)
    nbformat.write(notebook, toy_course_with_checks / SOURCE)
    run = grader("release", "--check", root=toy_course_with_checks)
    assert run.returncode == 1
    assert (
        "solutions/extoy/extoy.ipynb: cell 3 (test_answer) hidden-test block differs from what `release` writes; "
        "run `python -m grader release extoy`"
    ) in run.stdout


def test_changed_checks_change_no_notebook_and_are_compared_at_once(
    toy_course_with_checks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _released(toy_course_with_checks)
    checks = toy_course_with_checks / "solutions/extoy/checks.py"
    another = '        fixed(2, "what answer() returns, again", lambda: attempt(answer)),\n    )'
    checks.write_text(checks.read_text().replace("\n    )", "\n" + another, 1))
    run = grader("release", "--check", root=toy_course_with_checks)
    assert run.returncode == 0, run.stdout  # the notebooks do not depend on the checks' text
    assert nbformat.read(toy_course_with_checks / SOURCE, as_version=4) == before
    # the stored observations are stale: computed again, with the new case
    assert _run_block(toy_course_with_checks, lambda: 41, monkeypatch) == 1.5
    stored = json.loads((toy_course_with_checks / "work/references/extoy.json").read_text())
    assert "rule 2: what answer() returns, again" in stored["observations"]["test_answer"]


def test_a_float_within_the_tolerance_passes_and_one_beyond_it_names_the_tolerance(
    toy_course_with_checks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = toy_course_with_checks / "solutions/extoy/checks.py"
    checks.write_text(checks.read_text().replace("lambda: type(answer()).__name__", "lambda: answer() / 7"))
    _released(toy_course_with_checks)
    assert _run_block(toy_course_with_checks, lambda: 42 * (1 + 1e-6), monkeypatch) is None  # another CPU's bits
    with pytest.raises(AssertionError) as failure:
        _run_block(toy_course_with_checks, lambda: 42.1, monkeypatch)
    assert str(failure.value).startswith(
        'rule 1 (an int) is broken: in the case "the class of what answer() returns"\n'
        "  expected: 6.0\n  got:      6.014285714285714 (they differ beyond the tolerance, relative 0.001, "
        "absolute 0.0001)\n"
    )


def test_editing_observing_leaves_every_notebook_as_it_is(tmp_path: Path) -> None:
    """A docstring changed in grader/observing.py: `release` of the whole course leaves `git status` clean."""
    copy_root = tmp_path / "course"
    for folder in ("grader", "solutions", "exercises"):
        shutil.copytree(REPO / folder, copy_root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("nbgrader_config.py", ".gitignore"):
        shutil.copy(REPO / name, copy_root / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(copy_root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "course"], check=True)
    observing = copy_root / "grader/observing.py"
    observing.write_text(observing.read_text().replace('"""Helpers for', '"""Helpers (reworded) for', 1))
    env = dict(os.environ, GRADER_COURSE_ROOT=str(copy_root), PYTHONPATH=str(copy_root))
    done = subprocess.run(
        [sys.executable, "-m", "grader", "release"], cwd=copy_root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    status = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=True).stdout
    assert status.splitlines() == [" M grader/observing.py"]


def test_hidden_tests_run_once_and_the_trusted_verdict_is_the_cells_output(
    toy_course_with_checks: Path, tmp_path: Path
) -> None:
    course = toy_course_with_checks
    checks = course / "solutions/extoy/checks.py"
    observed = '    answer = ns.get("answer")'
    checks.write_text(checks.read_text().replace(observed, f'    print("observer ran")\n{observed}'))
    _released(course)
    release = nbformat.read(course / "exercises/extoy/extoy.ipynb", as_version=4)
    # 42.0 passes the visible line (42.0 == 42) and breaks rule 1 (the type), not rule 2 (42.0 is 42)
    for student, body in (("right", "return 42"), ("wrong", "return 42.0")):
        notebook = copy.deepcopy(release)
        notebook.cells[1].source = f"def answer():\n    {body}"
        (tmp_path / "in" / student / "extoy").mkdir(parents=True)
        nbformat.write(notebook, tmp_path / "in" / student / "extoy" / "extoy.ipynb")
    run = grader("autograde", str(tmp_path / "in"), "--work", str(tmp_path / "work"), root=course)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == "graded 2 submission(s), 0 with errors, 0 flagged"
    cells = {
        student: nbformat.read(tmp_path / f"work/autograded/{student}/extoy/extoy.ipynb", as_version=4).cells[2]
        for student in ("right", "wrong")
    }
    for cell in cells.values():  # the notebook's child never ran the observer: only the trusted check did
        assert "observer ran" not in json.dumps(cell.outputs)
    assert [o.output_type for o in cells["right"].outputs] == []
    printed, value = cells["wrong"].outputs  # as the hidden block gives it: the broken rule, then the points
    assert (printed.name, printed.text) == (
        "stdout",
        WRONG_TYPE + '  got:      "float"\nrule 2 holds: 1.5 of 3 points (1.5 a rule)\n',
    )
    assert value.data == {"text/plain": "1.5"}
    assert cell_scores(default_db_url(tmp_path / "work")) == {
        "right": {"extoy": {"test_answer": 3.0}},
        "wrong": {"extoy": {"test_answer": 1.5}},
    }


def test_a_solution_that_raises_never_becomes_the_expected_observations(toy_course_with_checks: Path) -> None:
    source = toy_course_with_checks / SOURCE
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[1].source += "\nimport a_module_that_is_not_there"
    nbformat.write(notebook, source)
    run = grader("release", root=toy_course_with_checks)
    assert run.returncode == 1
    assert (
        "solutions/extoy/checks.py fails on the solution: code cell 1 failed "
        "(ModuleNotFoundError: No module named 'a_module_that_is_not_there')"
    ) in run.stderr


def test_no_source_notebook_holds_anything_derived() -> None:
    """Every hidden-test block of the real course is the fixed call, a few lines; nothing packed or encoded."""
    blocks = 0
    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if BEGIN in cell.source:
                block = cell.source[cell.source.index(BEGIN) : cell.source.index(END) + len(END)]
                assert len(block.splitlines()) == 5 and "run_hidden_tests(" in block, f"{path.name}: {block[:200]}"
                assert len(cell.source.splitlines()) <= 20, f"{path.name}: a hidden-test cell of many lines"
                blocks += 1
    assert blocks >= 16
