"""A sample class goes through the parallel sandboxed autograde with trusted checks; every graded cell scores exactly as
mistakes.py expects, and the feedback and report files describe it.

`make test` autogrades two assignments' classes whole (`representatives`): ex01_slots, whose class the report, the
feedback, the ledger and the gradebook tests below read (and tests/test_check_hidden.py, from the same session), and
ex08_calls_and_swaps, whose part 2 has a "must not" rule that takes the visible test cell's points (a flag in the
gradebook and the report) and is observed as one process (a student who starts a thread). Both have partial credit
by rule, parts left as released beside attempted ones, and the syscall filter probe. The other six are the sweep
(`make test-all`); every scripted student of every assignment still earns exactly its points in `make test`, by the
trusted check alone (tests/test_clauses.py)."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.autograde import Outcome, autograde, plan
from grader.common_mistakes import MISTAKE, NOT_ATTEMPTED, UNGRADED, WHAT, Entry, checked, tally
from grader.course import checks_file, default_db_url, solutions
from grader.gradebook import cell_scores
from grader.hidden_tests import hidden_points
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook
from grader.sample_class import scripted_assignments, scripted_students
from grader.trusted import must_not_rules
from tests.conftest import REPO, GradedClass, grader, representatives

ASSIGNMENTS = scripted_assignments()
WHOLE_CLASS = ("ex01_slots", "ex08_calls_and_swaps")  # see above


@pytest.fixture(scope="module", params=representatives(ASSIGNMENTS, WHOLE_CLASS))
def graded_class(request: pytest.FixtureRequest, graded_classes: Callable[[str], GradedClass]) -> GradedClass:
    return graded_classes(request.param)


def test_every_assignment_has_scripted_students() -> None:
    solutions = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    assert solutions and ASSIGNMENTS == solutions


# Mistakes the issues name, and the hidden-test cell each must lose (their points are checked by grading below).
REQUIRED_MISTAKES = {
    "ex02_routing": ("predict_ignores_none", "test_predict_setattr_hidden"),
    "ex05_hooks": ("record_no_finally", "test_record_activations_hidden"),
    "ex06_minimodule": ("parameter_keeps_submodule", "test_mini_module_hidden"),
}


@pytest.mark.parametrize("assignment", sorted(REQUIRED_MISTAKES))
def test_the_named_mistakes_lose_hidden_points(assignment: str) -> None:
    student, cell = REQUIRED_MISTAKES[assignment]
    _, expected = scripted_students(assignment)
    assert expected[student][cell] < hidden_points(assignment)[cell]  # the share of each rule it breaks
    assert sum(expected[student].values()) > 0  # it passes something, so it is not simply a blank


def test_class_scores_exactly_as_expected(graded_class: GradedClass) -> None:
    assert len(graded_class.expected) >= 3
    recorded = {
        student: per_assignment[graded_class.assignment]
        for student, per_assignment in cell_scores(default_db_url(graded_class.work_dir)).items()
    }
    assert recorded == graded_class.expected
    for outcome in graded_class.outcomes:
        assert outcome.status == "ok" or _only_must_not_flags(outcome.status), outcome.status
        assert outcome.score == sum(graded_class.expected[outcome.student].values())
    # A part with a "must not" rule has a scripted way around it that the notebook's own tests pass: it is flagged.
    must_not = must_not_rules(checks_file(graded_class.assignment).read_text())
    assert any(outcome.status != "ok" for outcome in graded_class.outcomes) == bool(must_not)


def test_the_class_was_graded_under_the_syscall_filter(graded_class: GradedClass) -> None:
    assert graded_class.filtered == "['2', 'Operation not permitted']"


def _only_must_not_flags(status: str) -> bool:
    """A flag is expected only where a part's "must not" rule took a visible test cell's points (the notebook's own
    test passed it; grader.trusted's MUST_NOT): the status names the cell, the hidden test and the rule."""
    flags = status.removeprefix("flagged: ").split("; ")
    return status.startswith("flagged: ") and all(MUST_NOT_FLAG.fullmatch(flag) for flag in flags)


MUST_NOT_FLAG = re.compile(
    r"test_\w+_visible: the notebook's tests gave \d+, the trusted check 0 "
    r"\(test_\w+_hidden: rule \d+ broken \(a \"must not\" of the part\)\)"
)


def test_a_second_run_grades_nothing_again(graded_class: GradedClass) -> None:
    again = plan(graded_class.assignment, graded_class.work_dir)
    assert again.pending == [] and sorted(again.done) == sorted(graded_class.expected)


def test_report_writes_grades_csv_and_summary_png(graded_class: GradedClass, tmp_path: Path) -> None:
    run = grader("report", "--work", str(graded_class.work_dir), "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    rows = {row["student"]: row for row in csv.DictReader((tmp_path / "grades.csv").open())}
    assert set(rows) == set(graded_class.expected)
    for student, cells in graded_class.expected.items():
        assert rows[student]["assignment"] == graded_class.assignment
        assert rows[student]["status"] == "ok" or _only_must_not_flags(rows[student]["status"])  # the table says why
        assert float(rows[student]["score"]) == pytest.approx(sum(cells.values()), abs=1e-9)  # a sum of hundredths
        assert {grade_id: float(rows[student][grade_id]) for grade_id in cells} == cells
    png = (tmp_path / "summary.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_report_counts_each_parts_common_mistakes(graded_class: GradedClass, tmp_path: Path) -> None:
    if graded_class.assignment != WHOLE_CLASS[0]:
        pytest.skip("the ledger and the report are the same for every assignment; one shows it")
    run = grader("report", "--work", str(graded_class.work_dir), "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert f"wrote {tmp_path / 'common_mistakes.csv'}" in run.stdout.splitlines()
    rows = list(csv.DictReader((tmp_path / "common_mistakes.csv").open()))
    # The ledger as written: every cell that earned less than its points, and only those, has its mistakes.
    ledger = graded_class.work_dir / "grading_status" / graded_class.assignment
    stored = {student: json.loads((ledger / f"{student}.json").read_text()) for student in graded_class.expected}
    mistakes = {student: record["mistakes"] for student, record in stored.items()}
    untouched = {student: set(record["not_attempted"]) for student, record in stored.items()}
    [source] = assignment_notebooks(solutions() / graded_class.assignment)
    full = {
        meta["grade_id"]: meta["points"] for _, _, meta in nbgrader_cells(read_notebook(source)) if meta.get("grade")
    }
    short = {
        (s, part) for s, cells in graded_class.expected.items() for part, points in cells.items() if points < full[part]
    }
    assert {(s, part) for s, found in mistakes.items() for part in found} == short
    assert untouched["blank"] == set(graded_class.expected["blank"]) and not untouched["full"]
    # Where the autograded notebook shows the trusted check's message, every rule it says is broken is a mistake.
    named = 0
    for path in graded_class.work_dir.glob(f"autograded/*/{graded_class.assignment}/*.ipynb"):
        student = path.parent.parent.name
        for cell in json.loads(path.read_text())["cells"]:
            part = cell["metadata"].get("nbgrader", {}).get("grade_id")
            said = "".join(o.get("evalue", "") or "".join(o.get("text", "")) for o in cell.get("outputs", []))
            for found in re.findall(r"^(rule \d+ \(.*?\)) is broken: ", said, re.MULTILINE):
                assert found in mistakes[student][part]
                named += 1
    assert named >= 5, "the scripted mistakes break rules"
    # The report: a part left as released is not attempted, never a mistake; every other cell each of its mistakes.
    course = checked([graded_class.assignment])
    counts = Counter(
        (cell, MISTAKE, course.what(Entry(graded_class.assignment, cell, MISTAKE, label, 0, 1)))
        for student, found in mistakes.items()
        for cell, labels in found.items()
        if cell not in untouched[student]
        for label in labels
    )
    counts.update((cell, NOT_ATTEMPTED, WHAT[NOT_ATTEMPTED]) for cells in untouched.values() for cell in cells)
    assert {(row["cell"], row["kind"], row["what"]): int(row["students"]) for row in rows} == counts
    class_size = len(graded_class.expected)
    for row in rows:
        assert row["assignment"] == graded_class.assignment
        assert row["part"] == course.titles[graded_class.assignment, row["cell"]]
        assert row["share"] == f"{100 * int(row['students']) / class_size:.1f}"
    cells = [cell for (_, cell) in course.titles]
    assert [row["cell"] for row in rows] == sorted((row["cell"] for row in rows), key=cells.index)
    png = (tmp_path / "common_mistakes" / f"{graded_class.assignment}.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_every_broken_rule_is_a_mistake_and_the_class_is_counted_by_each(tmp_path: Path) -> None:
    from grader.common_mistakes import Checked, write_csv
    from grader.sandbox import CellTimeout
    from grader.trusted import TrustedChecker

    checker = TrustedChecker(ASSIGNMENTS[0], sandbox=None)  # a verdict needs the solution's observations only
    checker._reference = dict.fromkeys(checker.test_points, ["solution"])
    died = checker.verdict({}, "cell 3: it ran past its time limit (60 s)", CellTimeout.kind)
    assert {label for labels in died.mistakes.values() for label in labels} == {
        "no observation: it ran past its time limit"
    }
    assert died.mistakes.keys() == checker.test_points.keys()

    def outcome(student: str, status: str, mistakes: dict, scored: bool = True) -> Outcome:
        points = {"p1": 0.0, "p2": 1.0} if scored else {}
        return Outcome(student, "ex", status, 1.0, 2.0, "", auto_scores=points, mistakes=mistakes)

    rule_1, rule_2 = "rule 1 (a plain dict)", "rule 2 (keys in order)"
    outcomes = [
        outcome("a", "ok", {"p1": [rule_1, rule_2], "p2": ["=rule 1 (x)"]}),  # two broken rules, each counted
        outcome("b", "ok", {"p1": rule_2}),  # a ledger written before rules were judged one by one
        outcome("c", "error: cell 3: the kernel died", {"p1": ["no observation: the child died"]}),  # graded
        outcome("d", "error: not a notebook", {}, scored=False),
        outcome("e", "ok", {}),
    ]
    assert outcomes[1].mistakes == {"p1": [rule_2]}
    entries = tally(outcomes, {"ex": ["p1", "p2"]})
    assert entries == [
        Entry("ex", "p1", UNGRADED, "", 1, 5),
        Entry("ex", "p1", MISTAKE, rule_2, 2, 5),
        Entry("ex", "p1", MISTAKE, "no observation: the child died", 1, 5),
        Entry("ex", "p1", MISTAKE, rule_1, 1, 5),
        Entry("ex", "p2", UNGRADED, "", 1, 5),
        Entry("ex", "p2", MISTAKE, "=rule 1 (x)", 1, 5),
    ]
    course = Checked({("ex", "p1"): "Part 1: slots \N{EM DASH} hidden tests"}, {("ex", "p2"): {1: "a rule"}})
    write_csv(entries, course, tmp_path / "mistakes.csv")
    rows = list(csv.reader((tmp_path / "mistakes.csv").open()))
    assert rows[0] == ["assignment", "part", "cell", "kind", "what", "students", "share"]
    assert rows[2] == ["ex", "Part 1: slots \N{EM DASH} hidden tests", "p1", MISTAKE, rule_2, "2", "40.0"]
    assert rows[6] == ["ex", "", "p2", MISTAKE, "'=rule 1 (x)", "1", "20.0"]
    forbidden = Entry("ex", "p1", MISTAKE, 'p2: rule 1 broken (a "must not" of the part)', 1, 5)
    assert course.what(forbidden) == 'a "must not" rule of the part is broken: rule 1 (a rule)'


def test_feedback_has_a_page_per_student(graded_class: GradedClass) -> None:
    if graded_class.assignment != WHOLE_CLASS[0]:
        pytest.skip("feedback is nbgrader's own converter; one assignment shows it is wired up")
    run = grader("feedback", "--work", str(graded_class.work_dir))
    assert run.returncode == 0, run.stderr
    pages = sorted(graded_class.work_dir.glob(f"feedback/*/{graded_class.assignment}/*.html"))
    assert sorted(p.parent.parent.name for p in pages) == sorted(graded_class.expected)
    full = (graded_class.work_dir / "feedback" / "full" / graded_class.assignment).glob("*.html")
    assert f"Score: {sum(graded_class.expected['full'].values()):g}" in next(full).read_text().replace(".0", "")


def test_a_manual_grade_is_kept_and_a_grade_changed_outside_the_grader_is_graded_again(
    graded_class: GradedClass, tmp_path: Path
) -> None:
    if graded_class.assignment != WHOLE_CLASS[0]:
        pytest.skip("the ledger and the gradebook are the same for every assignment; one shows it")
    from nbgrader.api import Gradebook

    from grader.autograde import outcome_table

    db_url = default_db_url(graded_class.work_dir)
    assistant, tamperer = sorted(s for s in graded_class.expected if s != "full")[:2]
    by_hand, changed = (sorted(graded_class.expected[s])[0] for s in (assistant, tamperer))
    with Gradebook(db_url) as gradebook:
        max_points = {
            cell.name: cell.max_score for cell in gradebook.find_notebook(*[graded_class.assignment] * 2).grade_cells
        }
        gradebook.find_grade(by_hand, graded_class.assignment, graded_class.assignment, assistant).manual_score = 0.5
        cheat = gradebook.find_grade(changed, graded_class.assignment, graded_class.assignment, tamperer)
        cheat.auto_score = max_points[changed] + 1
        gradebook.db.commit()

    todo = plan(graded_class.assignment, graded_class.work_dir)
    assert [student for student, _ in todo.pending] == [tamperer]
    graded = graded_class.expected[tamperer][changed]
    assert todo.changed[tamperer] == [
        f"{changed}: {max_points[changed] + 1:g} in the gradebook, {graded:g} when graded"
    ]
    run = grader("report", "--work", str(graded_class.work_dir), "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    rows = {row["student"]: row for row in csv.DictReader((tmp_path / "grades.csv").open())}
    assert rows[assistant]["status"] == "ok"
    assert rows[assistant]["graded by hand"] == f"{by_hand}: 0.5 (auto {graded_class.expected[assistant][by_hand]:g})"
    assert float(rows[assistant][by_hand]) == 0.5
    assert rows[tamperer]["status"].startswith(f"changed outside the grader ({changed}: ")
    assert float(rows[tamperer][changed]) == graded_class.expected[tamperer][changed], "the grader's points count"

    outcomes = autograde(todo, graded_class.work_dir, workers=1)
    recorded = cell_scores(db_url)
    assert recorded[tamperer][graded_class.assignment] == graded_class.expected[tamperer]
    assert recorded[assistant][graded_class.assignment][by_hand] == 0.5, "the assistant's grade is kept"
    assert f"graded by hand: {by_hand}: 0.5" in outcome_table(outcomes, db_url)
    assert plan(graded_class.assignment, graded_class.work_dir).pending == []
    with Gradebook(db_url) as gradebook:  # as the other tests expect it
        gradebook.find_grade(by_hand, graded_class.assignment, graded_class.assignment, assistant).manual_score = None
        gradebook.db.commit()
