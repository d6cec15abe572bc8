"""The hidden-test blocks of the source notebooks: a fixed, readable call of the exercise's checks.

An exercise's checks (solutions/<assignment>/checks.py) are the only hand-written form of its hidden tests. Between
the `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS` markers of a graded test cell, `release` writes two lines
that name what runs: `run_hidden_tests(assignment, grade_id, globals())`. Run in a notebook (stock nbgrader,
`grader validate`), that call observes the submission with the checks' observer and compares with the solution's
observation, computed on the machine that runs it (grader.references), failing with the first differing case. The
block holds nothing derived: an edit of the checks or of grader/observing.py changes no notebook. The grader itself
never runs the block; its trusted check does the same comparison outside the submission's process. How an exercise's
checks are written: docs/contributing.md, "An exercise".
"""

from __future__ import annotations

import copy

from nbformat import NotebookNode

from grader import observing
from grader.course import checks_file, relative
from grader.notebooks import nbgrader_cells

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def has_hidden_block(source: str) -> bool:
    """Whether a cell's source holds a hidden-test block."""
    return BEGIN in source


def without_hidden_block(source: str) -> str:
    """A cell's source with its hidden-test block left out: the visible lines."""
    visible, _, rest = source.partition(BEGIN)
    _, _, after = rest.partition(END)
    return (visible + after.lstrip("\n")).rstrip("\n")


def runnable(cell: NotebookNode, hidden_elsewhere: bool) -> str:
    """What a child runs of a code cell: all of it, or a graded cell's visible lines when its hidden tests run
    elsewhere (in the trusted check)."""
    graded = cell.get("metadata", {}).get("nbgrader", {}).get("grade")
    if graded and hidden_elsewhere and has_hidden_block(cell.source):
        return without_hidden_block(cell.source)
    return cell.source


def with_hidden_blocks(notebook: NotebookNode, assignment: str) -> NotebookNode:
    """A copy of a source notebook with every hidden-test block written as `hidden_block` has it."""
    generated = copy.deepcopy(notebook)
    for _, cell, meta in nbgrader_cells(generated):
        if meta.get("grade") and has_hidden_block(cell.source):
            visible, _, rest = cell.source.partition(BEGIN)
            _, _, after = rest.partition(END)
            cell.source = f"{visible}{hidden_block(assignment, meta['grade_id'])}{after}"
    return generated


def hidden_block(assignment: str, grade_id: str) -> str:
    """The text from BEGIN to END of one graded cell's hidden tests."""
    return "\n".join(
        [
            BEGIN,
            f"# The hidden tests of {relative(checks_file(assignment))}, written by `python -m grader release`.",
            "from grader.hidden_tests import run_hidden_tests",
            f"run_hidden_tests({assignment!r}, {grade_id!r}, globals())",
            END,
        ]
    )


def run_hidden_tests(assignment: str, grade_id: str, namespace: dict) -> None:
    """Observe the notebook's namespace with the checks' observer of `grade_id` and compare with the solution's
    observation; AssertionError naming the first differing case, what was expected there and what came back."""
    from grader.references import load_checks, solution_observations  # torch-heavy: only where a block runs

    expected = solution_observations(assignment)[grade_id]
    seen = observing.as_sent(load_checks(assignment).OBSERVERS[grade_id](namespace))
    if not observing.agrees(seen, expected):
        raise AssertionError(observing.explain(seen, expected))
