"""Every rule of every part's contract is covered by a fixed case of its hidden test, and its mistakes are attributed
to it; every part's input space is covered by generated cases.

For each hidden test cell: the part's contract (the last markdown cell before the part's solution cell) numbers its
rules 1..n at the top level; the exercise's checks name the same rules (`CLAUSES`); the solution's observation has
at least one fixed case per rule (labelled "rule k: ..."), all before the seeded cases, and each seeded case names
what it looks at by the part's rules; and for each rule, the scripted answer that `mistakes.py` says breaks that rule
alone (`BREAKS`; a "must not" rule has one per way around it) is judged (grader.rules) to break that rule and no
other, its message names the rule and the key it differs on, and its expected points follow the credit policy: every
rule's share but that one's, or nothing where the cell's visible lines fail or the rule is a "must not". The checks
declare the dimensions of each part's input space (`SPACES`), every value of which some generated case of the
solution's observation reaches (grader.coverage); and each answer that `mistakes.py` says only generated cases catch
(`GENERATED_ONLY`) passes every fixed and seeded case, fails a generated one on a rule it names, and earns what the
credit policy gives.
"""

from __future__ import annotations

import json
import re
import runpy
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from grader import observing, rules
from grader.course import checks_file, mistakes_file, solutions
from grader.coverage import coverage
from grader.notebooks import assignment_notebooks, hidden_test_ids, read_notebook
from grader.release import fresh_release
from grader.rules import credit
from grader.sample_class import sample_class, scripted_assignments, submission
from grader.sandbox import start_sandbox
from grader.trusted import TrustedChecker, cells_to_run, visible_lines

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
def test_every_part_numbers_its_rules_and_the_checks_name_them(assignment: str) -> None:
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


WORKERS = 2  # children observed at once (tests/conftest.py grades its classes with as many)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    with start_sandbox(tmp_path_factory.mktemp("clauses"), WORKERS) as running:
        yield running


_checkers: dict[str, TrustedChecker] = {}


def _checker(assignment: str, sandbox) -> TrustedChecker:
    """The assignment's trusted checker in this module's sandbox, its solution observed once for all the tests."""
    if assignment not in _checkers:
        _checkers[assignment] = TrustedChecker(assignment, sandbox)
    return _checkers[assignment]


_classes: dict[str, tuple] = {}


def _scripted(assignment: str, sandbox) -> tuple:
    """The assignment's checker, the solution's observations, a fresh release and its sample class's answers and
    points (grader.sample_class.write_class's: every scripted student, the full solution and the blank release)."""
    checker = _checker(assignment, sandbox)
    if assignment not in _classes:
        path, _ = _source(assignment)
        _classes[assignment] = (fresh_release(assignment)[path.name], *sample_class(assignment))
    return checker, checker.reference(), *_classes[assignment]


Observation = tuple[dict, str, str]  # TrustedChecker.observe's: the observations, the problem, the problem's kind


@pytest.fixture(scope="module")
def observed(sandbox) -> Callable[[str], dict[str, Observation]]:
    """Every student of an assignment's sample class as the trusted check observes their submission: observed once
    for the module's tests, WORKERS at a time."""
    return observer(sandbox)


def observer(sandbox) -> Callable[[str], dict[str, Observation]]:
    """What the `observed` fixture gives, for a sandbox of one's own (tests/test_new_exercise.py)."""
    classes: dict[str, dict[str, Observation]] = {}

    def observe(assignment: str) -> dict[str, Observation]:
        if assignment not in classes:
            checker, _, release, answers, _ = _scripted(assignment, sandbox)
            submissions = [cells_to_run(submission(release, cells)) for cells in answers.values()]
            with ThreadPoolExecutor(WORKERS) as pool:
                classes[assignment] = dict(zip(answers, pool.map(checker.observe, submissions), strict=True))
        return classes[assignment]

    return observe


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_rule_has_fixed_cases_and_a_mistake_that_breaks_it_alone(assignment: str, sandbox, observed) -> None:
    clauses = _checks(assignment)["CLAUSES"]
    breaks = runpy.run_path(str(mistakes_file(assignment))).get("BREAKS")
    assert type(breaks) is dict, f"{mistakes_file(assignment)} has no BREAKS"
    checker, reference, _, _, expected = _scripted(assignment, sandbox)
    for grade_id, numbered in clauses.items():
        seen = reference[grade_id]
        assert type(seen) is dict, f"{grade_id}: the observation is not labelled (observing.labelled)"
        kinds = [rules.rule_of(label) for label in seen]
        fixed = [rule for rule in kinds if rule is not None]
        assert kinds[: len(fixed)] == fixed, f"{grade_id}: the fixed cases must run before the seeded ones"
        assert set(fixed) == set(numbered), f"{grade_id}: fixed cases for rules {sorted(set(fixed))}"
        seeded_cases = [case for label, case in seen.items() if rules.rule_of(label) is None]
        named = [rules.named_rules(case) for case in seeded_cases]  # a seeded case names what it looks at by rule
        assert all(found <= set(numbered) for found in named), f"{grade_id}: seeded cases name rules {named}"
        assert not seeded_cases or set().union(*named), f"{grade_id}: no seeded case names a rule"
        unnamed = [
            label for label, case in seen.items() if observing.dimensions_of(label) and not rules.named_rules(case)
        ]
        assert not unnamed, f"{grade_id}: {len(unnamed)} generated cases name no rule, the first: {unnamed[0]}"
        assert sorted(breaks.get(grade_id, {})) == sorted(numbered), f"{grade_id}: BREAKS names other rules"
        for rule, student in ((rule, s) for rule, students in breaks[grade_id].items() for s in students):
            observations, problem, _ = observed(assignment)[student]
            assert not problem, f"{student}: {problem}"
            judgement = checker.judge(grade_id, observations[grade_id])
            assert set(judgement.broken) == {rule}, (
                f"{student} must break rule {rule} of {grade_id} alone; rules {sorted(judgement.broken)} are broken"
                f"\n{judgement.message()}"
            )
            assert judgement.message().startswith(f"rule {rule} ({numbered[rule]}) is broken: in ")
            difference = judgement.broken[rule]
            assert names_what_it_compares(difference), f"{student}: {difference.where(rule)} names no key"
            lines_fail = observing.visible_failure(observations[visible_lines(grade_id)]) is not None
            share = credit(checker.test_points[grade_id], len(numbered) - 1, len(numbered))
            deserved = 0 if lines_fail or rule in checker.must_not.get(grade_id, ((), ()))[0] else share
            assert expected[student][grade_id] == deserved, f"{student} must earn {deserved} on {grade_id}"


def _bare_exception(case: object) -> bool:
    """Whether a case's observation is what observing.in_turn records of an exception nothing caught (its class's
    bare name; an observer that catches one writes it as kind_of does, with its module)."""
    return type(case) is list and len(case) == 2 and case[0] == "raises" and type(case[1]) is str and "." not in case[1]


def names_what_it_compares(difference: rules.Difference) -> bool:
    """Whether a difference is named: the case as a whole (its label says what it observes), or a place in it that
    a key names (not positions alone, nor only a key that wraps a value, such as "Tensor")."""
    keys = [step for step in difference.within if type(step) is str and step not in rules.WRAPPERS]
    return not difference.within or bool(keys)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_part_declares_its_input_space_and_reaches_every_value(assignment: str, sandbox) -> None:
    spaces = _checks(assignment).get("SPACES")
    assert type(spaces) is dict, f"{checks_file(assignment)} has no SPACES"
    assert sorted(spaces) == _hidden_cells(assignment)
    for grade_id, dimensions in spaces.items():
        assert all(len(values) >= 2 for values in dimensions.values()), f"{grade_id}: a dimension of one value"
    reference = _checker(assignment, sandbox).reference()
    # An observer that stops on its own bug stops the solution too, and every case it stops then proves nothing.
    bugs = re.findall(r"\b(?:NameError|UnboundLocalError)\b", json.dumps(reference, default=str))
    assert not bugs, f"{checks_file(assignment)}: the solution's observations hold {len(bugs)} {bugs[0]}s"
    # A case wraps what the call does in its own observation: one that is a bare exception (observing.in_turn's
    # record of one nothing caught) stopped in the observer or in building its input, for the solution and everyone.
    stopped = [
        (grade_id, label)
        for grade_id, seen in reference.items()
        for label, case in (seen.items() if type(seen) is dict else [])
        if _bare_exception(case)
    ]
    assert not stopped, f"{len(stopped)} cases stop in the observer for the solution, the first: {stopped[0]}"
    parts = coverage(spaces, reference)
    assert [problem for part in parts for problem in part.problems()] == []
    assert all(part.generated for part in parts)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_what_only_generated_cases_catch_is_caught_by_them(assignment: str, sandbox, observed) -> None:
    generated_only = runpy.run_path(str(mistakes_file(assignment))).get("GENERATED_ONLY", {})
    if not generated_only:
        pytest.skip(f"{mistakes_file(assignment)} scripts no answer that only generated cases catch")
    checker, reference, _, _, expected = _scripted(assignment, sandbox)
    for grade_id, students in generated_only.items():
        for student in students:
            observations, problem, _ = observed(assignment)[student]
            assert not problem, f"{student}: {problem}"
            mine = observations[grade_id]
            judgement = checker.judge(grade_id, mine)
            assert judgement.broken and not judgement.whole, f"{student}: {judgement.message()}"
            assert expected[student][grade_id] == judgement.points, f"{student} must earn {judgement.points}"
            assert type(mine) is dict and mine.keys() == reference[grade_id].keys()
            differing = [
                label for label, value in reference[grade_id].items() if not observing.agrees(mine[label], value)
            ]
            assert differing, f"{student} passes every case of {grade_id}"
            caught_by = {label for label in differing if observing.dimensions_of(label) is None}
            assert not caught_by, f"{student} is caught by other cases than generated ones: {sorted(caught_by)[:3]}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_student_of_the_sample_class_earns_its_expected_points(assignment: str, sandbox, observed) -> None:
    """What tests/test_autograde.py's whole-class autograde proves of each graded cell's points, by the trusted check
    alone (its verdict is what the autograde records): every scripted mistake, earlier reviews' holes among them,
    the full solution and the blank release. The representatives' autograde keeps the rest: nbgrader's steps, the
    gradebook, the flags, the ledger and the report."""
    checker, _, _, answers, expected = _scripted(assignment, sandbox)
    assert len(answers) >= 3
    wrong = {}
    for student, seen in observed(assignment).items():
        verdict = checker.verdict(*seen)
        deserved = {cell: float(points) for cell, points in expected[student].items()}
        if verdict.points != deserved:
            wrong[student] = {
                cell: f"{points:g}, not {deserved.get(cell)} ({verdict.reasons.get(cell, 'every rule holds')})"
                for cell, points in verdict.points.items()
                if points != deserved.get(cell)
            }
    assert not wrong, f"{len(wrong)} of {len(answers)} students earn other points: {wrong}"
