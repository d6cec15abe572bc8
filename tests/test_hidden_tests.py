"""Hidden-test blocks generated from an exercise's checks: written by `release`, checked by `release --check`, and
run by stock nbgrader as plain notebook code that names the failing case."""

from __future__ import annotations

import ast
import base64
import copy
import json
import zlib
from pathlib import Path

import nbformat
import pytest

from grader.course import default_db_url
from grader.gradebook import cell_scores
from grader.hidden_tests import BEGIN, END
from tests.conftest import REPO, grader

SOURCE = Path("solutions/extoy/extoy.ipynb")


def _released(course: Path) -> nbformat.NotebookNode:
    run = grader("release", root=course)
    assert run.returncode == 0, run.stderr
    return nbformat.read(course / SOURCE, as_version=4)


def _hidden_block(notebook: nbformat.NotebookNode) -> str:
    source = notebook.cells[2].source
    return source[source.index(BEGIN) : source.index(END) + len(END)]


def _packed(block: str) -> list:
    """What a hidden block carries, unpacked: [the helpers' text, the checks' text, the solution's observations]."""
    lines = block[block.index("b85decode(") : block.index(")))")].splitlines()[1:]
    text = "".join(ast.literal_eval(line.strip()) for line in lines if line.strip())
    return json.loads(zlib.decompress(base64.b85decode(text)))


def test_release_writes_the_hidden_block_from_the_checks(toy_course_with_checks: Path) -> None:
    block = _hidden_block(_released(toy_course_with_checks))
    assert "hidden check on the type" not in block  # the hand-written block is replaced
    assert "from solutions/extoy/checks.py" in block
    helpers, checks, expected = _packed(block)
    assert helpers == (REPO / "grader/observing.py").read_text(encoding="utf-8")
    assert checks == (toy_course_with_checks / "solutions/extoy/checks.py").read_text(encoding="utf-8")
    assert "def observe_answer(ns: dict) -> list:" in checks
    # the solution's observations, as the trusted check computes them in the sandbox
    assert ["type", "int"] in expected and ["returns", 42] in expected, expected


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
    notebook.cells[2].source = notebook.cells[2].source.replace("helpers.agrees(", "not helpers.agrees(", 1)
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
    assert _packed(block)[2].count(["returns", 42]) == 2  # regenerated: the new observation is expected too


def test_hidden_tests_run_once_and_the_trusted_verdict_is_the_cells_output(
    toy_course_with_checks: Path, tmp_path: Path
) -> None:
    course = toy_course_with_checks
    checks = course / "solutions/extoy/checks.py"
    observed = '    answer = ns.get("answer")'
    checks.write_text(checks.read_text().replace(observed, f'    print("observer ran")\n{observed}'))
    _released(course)
    release = nbformat.read(course / "exercises/extoy/extoy.ipynb", as_version=4)
    # 42.0 passes the visible line (42.0 == 42) and fails the hidden tests (the type)
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
    [error] = cells["wrong"].outputs
    assert (error.ename, error.evalue) == (
        "AssertionError",
        'case 1 of 2, item 2 differs\n  expected: "int"\n  got:      "float"',
    )
    assert cell_scores(default_db_url(tmp_path / "work")) == {
        "right": {"extoy": {"test_answer": 3.0}},
        "wrong": {"extoy": {"test_answer": 0.0}},
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
