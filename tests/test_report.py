"""The class report without a grading run: which parts were not attempted, how the class is counted, what each
entry says was checked, and figures one per assignment with a legend and whole labels."""

from __future__ import annotations

import copy

import nbformat
import pytest

from grader.attempted import not_attempted
from grader.autograde import Outcome
from grader.common_mistakes import (
    MISTAKE,
    NOT_ATTEMPTED,
    UNGRADED,
    WHAT,
    Entry,
    checked,
    figure_of,
    tally,
    write_pngs,
)
from grader.notebooks import nbgrader_cells
from grader.report import Row, summary_figure
from grader.sample_class import submission
from grader.scripted import solution_answers
from tests.conftest import REPO

ASSIGNMENT = "ex01_slots"
SOURCE = nbformat.read(REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
RELEASE = nbformat.read(REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
NAME = f"{ASSIGNMENT}.ipynb"
PART_1 = ["test_classify_slots_visible", "test_classify_slots_hidden"]
PART_2 = ["test_copy_visible", "test_copy_hidden"]


def _untouched(notebook: nbformat.NotebookNode) -> list[str]:
    return not_attempted({NAME: notebook}, {NAME: RELEASE})


def test_a_part_is_not_attempted_while_its_solution_cells_are_as_released() -> None:
    answers = solution_answers(SOURCE)
    [first, second] = answers
    assert _untouched(RELEASE) == PART_1 + PART_2
    assert _untouched(submission(RELEASE, answers)) == []
    assert _untouched(submission(RELEASE, {first: answers[first]})) == PART_2
    assert _untouched(submission(RELEASE, {second: "pass"})) == PART_1, "any change is an attempt, a wrong one too"
    spaced = copy.deepcopy(RELEASE)
    stub = next(cell for _, cell, meta in nbgrader_cells(spaced) if meta.get("solution"))
    stub.source = f"\n{stub.source}\n\n"  # the editor's blank lines around the stub
    assert _untouched(spaced) == PART_1 + PART_2
    deleted = copy.deepcopy(RELEASE)
    deleted.cells.remove(next(cell for _, cell, meta in nbgrader_cells(deleted) if meta.get("solution")))
    assert _untouched(deleted) == PART_2, "a deleted solution cell is tampering, not a part left as released"
    hostile = copy.deepcopy(RELEASE)
    for _, _, meta in nbgrader_cells(hostile):
        meta["grade_id"] = ["not", "a", "string"]
    assert _untouched(hostile) == [], "metadata of any shape is read without a failure"
    assert not_attempted({}, {NAME: RELEASE}) == [], "a missing notebook is an error, not a part left as released"


def _outcome(student: str, mistakes: dict[str, list[str]], untouched: list[str], status: str = "ok") -> Outcome:
    scores = dict.fromkeys(PART_1 + PART_2, 0.0) if status == "ok" else {}
    return Outcome(student, ASSIGNMENT, status, 0.0, 12.0, "", scores, mistakes, untouched)


RULE_1, RULE_4 = "rule 1 (a plain dict)", "rule 4 (the very same parameters)"


def test_not_attempted_is_its_own_kind_and_never_a_mistake() -> None:
    stub_failure = dict.fromkeys(PART_1, ["`assert type(groups) is dict` does not hold"])
    outcomes = [
        _outcome("blank", stub_failure | dict.fromkeys(PART_2, [RULE_1]), PART_1 + PART_2),
        _outcome("half", stub_failure | {"test_copy_hidden": [RULE_1, RULE_4]}, PART_1),
        _outcome("other", {"test_copy_hidden": [RULE_4]}, ["test_copy_visible"]),  # it earned its points
        _outcome("broken", {}, [], status="error: not a notebook"),
    ]
    entries = tally(outcomes, {ASSIGNMENT: PART_1 + PART_2})
    counted = {(e.cell, e.kind, e.label): e.students for e in entries}
    assert counted == {
        **{(cell, NOT_ATTEMPTED, ""): 2 for cell in PART_1},
        **{(cell, UNGRADED, ""): 1 for cell in PART_1 + PART_2},
        ("test_copy_visible", NOT_ATTEMPTED, ""): 1,
        ("test_copy_hidden", NOT_ATTEMPTED, ""): 1,
        ("test_copy_hidden", MISTAKE, RULE_1): 1,  # every broken rule counted, each once per student
        ("test_copy_hidden", MISTAKE, RULE_4): 2,
    }
    assert {e.graded for e in entries} == {4}


def test_every_entry_names_what_was_checked() -> None:
    course = checked([ASSIGNMENT])
    assert (
        course.titles[ASSIGNMENT, "test_copy_hidden"]
        == "Part 2: a copy that shares the parameters \N{EM DASH} hidden tests"
    )
    assert list(course.titles) == [(ASSIGNMENT, cell) for cell in PART_1 + PART_2], "in notebook order"

    def what(label: str, cell: str = "test_copy_hidden", kind: str = MISTAKE) -> str:
        return course.what(Entry(ASSIGNMENT, cell, kind, label, 1, 1))

    rule_4 = course.rules[ASSIGNMENT, "test_copy_hidden"][4]
    assert rule_4 == "parameters and buffers are the very same objects (None stays None)"
    assert what(f"rule 4 ({rule_4})") == f"rule 4 ({rule_4})", "a broken rule is named as the grader names it"
    broken = 'test_copy_hidden: rule 4 broken (a "must not" of the part)'
    assert what(broken, cell="test_copy_visible") == f'a "must not" rule of the part is broken: rule 4 ({rule_4})'
    assert what("`assert type(groups) is dict` does not hold", "test_classify_slots_visible") == (
        "`assert type(groups) is dict` does not hold"
    )
    assert what("", kind=NOT_ATTEMPTED) == WHAT[NOT_ATTEMPTED] and "NotImplementedError" in WHAT[NOT_ATTEMPTED]


LONG = "rule 4 (" + "a case whose label is long enough to need three lines of the figure, " * 3 + "the end)"


@pytest.fixture
def entries() -> list[Entry]:
    return [
        Entry(ASSIGNMENT, "test_classify_slots_visible", NOT_ATTEMPTED, "", 3, 10),
        Entry(ASSIGNMENT, "test_copy_hidden", UNGRADED, "", 1, 10),
        Entry(ASSIGNMENT, "test_copy_hidden", MISTAKE, LONG, 2, 10),
        *(Entry(ASSIGNMENT, "test_copy_hidden", MISTAKE, f"rule {n} (case {n})", 1, 10) for n in range(1, 6)),
    ]


def test_a_figure_per_assignment_with_a_legend_and_whole_labels(entries: list[Entry], tmp_path) -> None:
    course = checked([ASSIGNMENT])
    figure = figure_of(ASSIGNMENT, entries, course)
    labels = [label.get_text() for label in figure.axes[0].get_yticklabels()]
    unwrapped = [" ".join(label.split()) for label in labels]
    assert unwrapped[0] == course.titles[ASSIGNMENT, "test_classify_slots_visible"]
    assert " ".join(course.what(entries[2]).split()) in unwrapped, "a long label is wrapped, not cut"
    assert max(len(line) for label in labels for line in label.splitlines()) <= 82
    assert not [label for label in labels if label.endswith("...")]
    assert len([label for label in unwrapped if label.startswith("rule ")]) == 3, "the 3 commonest mistakes a cell"
    legend = {text.get_text() for text in figure.axes[0].get_legend().get_texts()}
    assert legend == {MISTAKE, NOT_ATTEMPTED, UNGRADED}
    width, height = figure.get_size_inches() * 100
    assert width == 1400 and height < 1000, "a screen's worth for a handful of cells"
    paths = write_pngs(entries, course, [ASSIGNMENT, "ex02_routing"], tmp_path)
    assert paths == [tmp_path / f"{ASSIGNMENT}.png", tmp_path / "ex02_routing.png"]  # one with nothing to show too
    assert all(path.read_bytes().startswith(b"\x89PNG") for path in paths)


def test_the_summary_names_each_cell_by_its_part() -> None:
    course = checked([ASSIGNMENT])
    maxima = {ASSIGNMENT: dict.fromkeys(PART_1 + PART_2, 2.0)}
    table = [Row(s, ASSIGNMENT, "ok", dict.fromkeys(PART_1 + PART_2, p)) for s, p in (("a", 2.0), ("b", 0.0))]
    figure = summary_figure(table, maxima, course.titles)
    labels = [" ".join(label.get_text().split()) for label in figure.axes[1].get_yticklabels()]
    assert labels == [f"{ASSIGNMENT}: {course.titles[ASSIGNMENT, cell]}" for cell in PART_1 + PART_2]
    assert figure.axes[1].get_legend() is not None
