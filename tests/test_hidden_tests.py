"""Hidden-test blocks generated from an exercise's checks: written by `release`, checked by `release --check`, and
run by stock nbgrader as plain notebook code that names the failing case."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from grader.hidden_tests import BEGIN, END
from tests.conftest import grader

SOURCE = Path("solutions/extoy/extoy.ipynb")


def _released(course: Path) -> nbformat.NotebookNode:
    run = grader("release", root=course)
    assert run.returncode == 0, run.stderr
    return nbformat.read(course / SOURCE, as_version=4)


def _hidden_block(notebook: nbformat.NotebookNode) -> str:
    source = notebook.cells[2].source
    return source[source.index(BEGIN) : source.index(END) + len(END)]


def test_release_writes_the_hidden_block_from_the_checks(toy_course_with_checks: Path) -> None:
    block = _hidden_block(_released(toy_course_with_checks))
    assert "hidden check on the type" not in block  # the hand-written block is replaced
    assert "from solutions/extoy/checks.py" in block
    assert "def observe_answer(ns: dict) -> list:" in block
    # the solution's observations, as the trusted check computes them in the sandbox
    assert "'[\"type\", \"int\"],'" in block and "'[\"returns\", 42]'" in block


def test_the_checks_and_mistakes_are_never_released(toy_course_with_checks: Path) -> None:
    _released(toy_course_with_checks)
    released = sorted(p.name for p in (toy_course_with_checks / "exercises/extoy").iterdir())
    assert released == ["extoy.ipynb"]
    run = grader("release", "--check", root=toy_course_with_checks)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda: 42, None),
        (lambda: "42", 'case 1 of 2, item 2 differs\n  expected: "int"\n  got:      "str"'),
        (lambda: 41, "case 2 of 2, item 2 differs\n  expected: 42\n  got:      41"),
    ],
)
def test_the_generated_block_names_the_failing_case(toy_course_with_checks: Path, answer, message) -> None:
    block = _hidden_block(_released(toy_course_with_checks))
    namespace = {"answer": answer}
    if message is None:
        exec(block, namespace)
        assert set(namespace) == {"answer", "__builtins__"}  # it leaves nothing behind in the student's namespace
        return
    with pytest.raises(AssertionError) as failure:
        exec(block, namespace)
    assert str(failure.value) == message


def test_check_names_a_hand_edited_hidden_block(toy_course_with_checks: Path) -> None:
    notebook = _released(toy_course_with_checks)
    notebook.cells[2].source = notebook.cells[2].source.replace("ns.get(", "ns.pop(", 1)
    nbformat.write(notebook, toy_course_with_checks / SOURCE)
    run = grader("release", "--check", root=toy_course_with_checks)
    assert run.returncode == 1
    assert (
        "solutions/extoy/extoy.ipynb: cell 3 (test_answer) hidden tests differ from what the checks generate; "
        "run `python -m grader release extoy`"
    ) in run.stdout


def test_check_names_hidden_blocks_left_behind_by_changed_checks(toy_course_with_checks: Path) -> None:
    _released(toy_course_with_checks)
    checks = toy_course_with_checks / "solutions/extoy/checks.py"
    checks.write_text(checks.read_text().replace("attempt(answer)]", "attempt(answer), attempt(answer)]"))
    run = grader("release", "--check", root=toy_course_with_checks)
    assert run.returncode == 1
    assert "cell 3 (test_answer) hidden tests differ from what the checks generate" in run.stdout
    block = _hidden_block(_released(toy_course_with_checks))
    assert "'[\"returns\", 42],'" in block  # regenerated: the new observation is expected too
