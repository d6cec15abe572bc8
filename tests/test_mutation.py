"""The mutation harness (benchmarks/mutation.py): mutmut's mutants of a solution cell, their identifiers, the
equivalence lists, and the kill by the hidden tests (one small exercise, one sandbox: a few seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.mutation import LIST_NAME, Harness, answer_and_region, cell_mutants, read_list, solution_mutants
from grader.course import assignment_names, solutions
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook
from grader.sandbox import Limits, Sandbox
from tests.conftest import grader

CELL = '''def scale(values, factor=2):
    """Each value times factor, "as a list"."""
    ### BEGIN SOLUTION
    out = []  # a new list
    for value in values:
        out.append(value * factor)
    return out
    ### END SOLUTION
'''


def test_only_the_solution_region_is_mutated_never_a_docstring_or_the_signature() -> None:
    answer, region = answer_and_region(CELL)
    assert "### BEGIN SOLUTION" not in answer and answer.splitlines()[2] == "    out = []  # a new list"
    assert region == {3, 4, 5, 6}
    mutants = cell_mutants("scale", CELL)
    assert mutants and all(3 <= mutant.line <= 6 for mutant in mutants)
    assert ("scale", 1, "out.append(value * factor)", "out.append(value / factor)") in {m.key for m in mutants}
    # without markers: the function bodies, still without the docstring
    _, region = answer_and_region(CELL.replace("    ### BEGIN SOLUTION\n", "").replace("    ### END SOLUTION\n", ""))
    assert region == {3, 4, 5, 6}


def test_identifiers_ignore_line_numbers_comments_and_spacing_but_count_repeated_lines() -> None:
    keys = [m.key for m in cell_mutants("scale", CELL)]
    shifted = CELL.replace("    out = []  # a new list", "    # moved down\n    out  =  []  # another comment")
    assert [m.key for m in cell_mutants("scale", shifted)] == keys
    twice = CELL.replace("    return out\n", "    out.append(value * factor)\n    return out\n")
    occurrences = {m.occurrence for m in cell_mutants("scale", twice) if m.original == "out.append(value * factor)"}
    assert occurrences == {1, 2}


LISTED = [name for name in assignment_names() if (solutions() / name / LIST_NAME).is_file()]


@pytest.mark.parametrize("assignment", LISTED)
def test_every_listed_equivalent_mutant_is_one_mutmut_makes(assignment: str) -> None:
    listed, problems = read_list(assignment)
    assert not problems
    [path] = assignment_notebooks(solutions() / assignment)
    made = {mutant.key for mutant in solution_mutants(read_notebook(path))}
    assert set(listed) <= made, f"stale entries: {sorted(set(listed) - made)}"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    with Sandbox(tmp_path_factory.mktemp("mutation"), limits=Limits(cell_seconds=60)) as running:
        yield running


def test_the_hidden_tests_kill_a_wrong_mutant_and_let_the_solution_survive(sandbox: Sandbox) -> None:
    harness = Harness("ex08_calls_and_swaps", sandbox)
    assert harness.hidden == ["test_apply_once_hidden", "test_call_with_hidden"]
    [wrong] = [m for m in harness.mutants() if m.key == ("apply_once", 1, "visited = set()", "visited = None")]
    outcome = harness.outcome(wrong)
    assert (outcome.status, outcome.cell) == ("killed", "test_apply_once_hidden") and outcome.why
    assert harness.judge("apply_once", harness.answers["apply_once"]) == ("survived", "", "")
    assert harness.judge("apply_once", "def apply_once(model, fn)\n    return model")[0] == "invalid"
    solution_cells = [meta["grade_id"] for _, _, meta in nbgrader_cells(harness.source) if meta.get("solution")]
    assert solution_cells == ["call_with", "apply_once"]


def test_the_equivalence_list_is_never_released(toy_course: Path) -> None:
    (toy_course / "solutions/extoy" / LIST_NAME).write_text("answer\t1\treturn 6 * 7\treturn 7 * 6\tthe same product\n")
    run = grader("release", root=toy_course)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (toy_course / "exercises/extoy").iterdir()) == ["extoy.ipynb"]
