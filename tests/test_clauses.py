"""Every clause of every part's contract is covered by a fixed case of its hidden test, and proven to be; every part's
input space by generated cases.

For each hidden test cell: the part's contract (the last markdown cell before the part's solution cell) numbers its
rules 1..n at the top level; the exercise's checks name the same clauses (`CLAUSES`); the solution's observation has
at least one fixed case per clause (labelled "clause k: ..."), all before the seeded cases; and for each clause, the
scripted answer that `mistakes.py` says breaks that clause alone (`BREAKS`) fails at least one case of that clause,
passes every fixed case of the part's other clauses, and earns the cell no points. The checks declare the dimensions
of each part's input space (`SPACES`), every value of which some generated case of the solution's observation reaches
(grader.coverage); and each answer that `mistakes.py` says only generated cases catch (`GENERATED_ONLY`) passes every
fixed and seeded case, fails a generated one, and earns the cell no points.
"""

from __future__ import annotations

import re
import runpy

import pytest

from grader import observing
from grader.course import checks_file, mistakes_file, solutions
from grader.coverage import coverage
from grader.notebooks import assignment_notebooks, hidden_test_ids, read_notebook
from grader.release import fresh_release
from grader.sample_class import scripted_assignments, scripted_students, submission
from grader.sandbox import start_sandbox
from grader.trusted import TrustedChecker, cells_to_run

ASSIGNMENTS = scripted_assignments()
NUMBERED = re.compile(r"^(\d+)\. ", re.MULTILINE)  # a top-level item of a numbered list, as markdown writes it


def _source(assignment: str):
    [path] = assignment_notebooks(solutions() / assignment)  # the course GRADER_COURSE_ROOT names, if any
    return path, read_notebook(path)


def _hidden_cells(assignment: str) -> list[str]:
    return sorted(hidden_test_ids(_source(assignment)[1]))


def contract_numbers(notebook, grade_id: str) -> list[int]:
    """The numbers of the top-level numbered items of the contract of the part `grade_id` tests: the last markdown
    cell before the part's first solution cell (the part starts after the graded test cell before its solution)."""
    cells = notebook.cells

    def meta(number: int) -> dict:
        return cells[number].get("metadata", {}).get("nbgrader", {})

    test = next(n for n in range(len(cells)) if meta(n).get("grade_id") == grade_id)
    last_solution = max(n for n in range(test) if meta(n).get("solution"))
    start = 1 + max(
        (n for n in range(last_solution) if meta(n).get("grade") and not meta(n).get("solution")), default=-1
    )
    solution = next(n for n in range(start, test) if meta(n).get("solution"))
    contract = next(c for c in reversed(cells[start:solution]) if c.cell_type == "markdown")
    return [int(number) for number in NUMBERED.findall(contract.source)]


def _checks(assignment: str) -> dict:
    return runpy.run_path(str(checks_file(assignment)))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_part_numbers_its_clauses_and_the_checks_name_them(assignment: str) -> None:
    clauses = _checks(assignment).get("CLAUSES")
    assert type(clauses) is dict, f"{checks_file(assignment)} has no CLAUSES"
    hidden = _hidden_cells(assignment)
    assert sorted(clauses) == sorted(hidden)
    _, notebook = _source(assignment)
    for grade_id in hidden:
        numbers = contract_numbers(notebook, grade_id)
        assert numbers == list(range(1, len(numbers) + 1)) and numbers, f"{grade_id}: the contract numbers {numbers}"
        assert sorted(clauses[grade_id]) == numbers, f"{grade_id}: CLAUSES names {sorted(clauses[grade_id])}"
        assert all(type(text) is str and text for text in clauses[grade_id].values())


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    with start_sandbox(tmp_path_factory.mktemp("clauses"), 1) as running:
        yield running


_checkers: dict[str, TrustedChecker] = {}


def _checker(assignment: str, sandbox) -> TrustedChecker:
    """The assignment's trusted checker in this module's sandbox, its solution observed once for all the tests."""
    if assignment not in _checkers:
        _checkers[assignment] = TrustedChecker(assignment, sandbox)
    return _checkers[assignment]


def _scripted(assignment: str, sandbox) -> tuple:
    """The assignment's checker, the solution's observations, a fresh release and the scripted students' answers and
    points."""
    checker = _checker(assignment, sandbox)
    path, _ = _source(assignment)
    answers, expected = scripted_students(assignment)
    return checker, checker.reference(), fresh_release(assignment)[path.name], answers, expected


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_clause_has_fixed_cases_and_a_mistake_that_breaks_it_alone(assignment: str, sandbox) -> None:
    clauses = _checks(assignment)["CLAUSES"]
    breaks = runpy.run_path(str(mistakes_file(assignment))).get("BREAKS")
    assert type(breaks) is dict, f"{mistakes_file(assignment)} has no BREAKS"
    checker, reference, release, answers, expected = _scripted(assignment, sandbox)
    for grade_id, numbered in clauses.items():
        seen = reference[grade_id]
        assert type(seen) is dict, f"{grade_id}: the observation is not labelled (observing.labelled)"
        kinds = [observing.clause_of(label) for label in seen]
        fixed = [clause for clause in kinds if clause is not None]
        assert kinds[: len(fixed)] == fixed, f"{grade_id}: the fixed cases must run before the seeded ones"
        assert set(fixed) == set(numbered), f"{grade_id}: fixed cases for clauses {sorted(set(fixed))}"
        assert sorted(breaks.get(grade_id, {})) == sorted(numbered), f"{grade_id}: BREAKS names other clauses"
        for clause, student in breaks[grade_id].items():
            assert expected[student][grade_id] == 0, f"{student} must earn nothing on {grade_id}"
            cells = cells_to_run(submission(release, answers[student]))
            observations, problem, _ = checker.observe(cells)
            assert not problem, f"{student}: {problem}"
            mine = observations[grade_id]
            assert type(mine) is dict and mine.keys() == seen.keys(), f"{student}: {grade_id} observed no cases"
            differing = {
                observing.clause_of(label)
                for label, value in seen.items()
                if observing.clause_of(label) is not None and not observing.agrees(mine[label], value)
            }
            assert differing == {clause}, (
                f"{student} must break clause {clause} of {grade_id} alone; "
                f"fixed cases of clauses {sorted(differing)} differ"
            )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_part_declares_its_input_space_and_reaches_every_value(assignment: str, sandbox) -> None:
    spaces = _checks(assignment).get("SPACES")
    assert type(spaces) is dict, f"{checks_file(assignment)} has no SPACES"
    assert sorted(spaces) == _hidden_cells(assignment)
    for grade_id, dimensions in spaces.items():
        assert all(len(values) >= 2 for values in dimensions.values()), f"{grade_id}: a dimension of one value"
    parts = coverage(spaces, _checker(assignment, sandbox).reference())
    assert [problem for part in parts for problem in part.problems()] == []
    assert all(part.generated for part in parts)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_what_only_generated_cases_catch_is_caught_by_them(assignment: str, sandbox) -> None:
    generated_only = runpy.run_path(str(mistakes_file(assignment))).get("GENERATED_ONLY", {})
    if not generated_only:
        pytest.skip(f"{mistakes_file(assignment)} scripts no answer that only generated cases catch")
    checker, reference, release, answers, expected = _scripted(assignment, sandbox)
    for grade_id, students in generated_only.items():
        for student in students:
            assert expected[student][grade_id] == 0, f"{student} must earn nothing on {grade_id}"
            observations, problem, _ = checker.observe(cells_to_run(submission(release, answers[student])))
            assert not problem, f"{student}: {problem}"
            mine = observations[grade_id]
            assert type(mine) is dict and mine.keys() == reference[grade_id].keys()
            differing = [
                label for label, value in reference[grade_id].items() if not observing.agrees(mine[label], value)
            ]
            assert differing, f"{student} passes every case of {grade_id}"
            caught_by = {label for label in differing if observing.dimensions_of(label) is None}
            assert not caught_by, f"{student} is caught by other cases than generated ones: {sorted(caught_by)[:3]}"
