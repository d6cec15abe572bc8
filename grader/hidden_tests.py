"""The hidden-test blocks of the source notebooks: a fixed, readable call of the exercise's checks.

An exercise's checks (solutions/<assignment>/checks.py) are the only hand-written form of its hidden tests. Between
the `### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS` markers of a graded test cell, `release` writes two lines
that name what runs: `run_hidden_tests(assignment, grade_id, globals())`. Run in a notebook (stock nbgrader,
`grader validate`), that call observes the submission with the checks' observer and judges it rule by rule against
the solution's observation, computed on the machine that runs it (grader.references): its value is the cell's
points when some rules hold and others do not (nbgrader's partial credit), it fails when none holds. The
block holds nothing derived: an edit of the checks or of grader/observing.py changes no notebook. The grader itself
never runs the block; its trusted check does the same comparison outside the submission's process. How an exercise's
checks are written: docs/contributing.md, "An exercise".
"""

from __future__ import annotations

import copy

from nbformat import NotebookNode

from grader import observing, rules
from grader.course import CourseError, checks_file, relative, solutions
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook

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
    """A copy of a source notebook with every hidden-test block written as `hidden_block` has it. A block ends its
    cell: its last line's value is the cell's partial credit."""
    generated = copy.deepcopy(notebook)
    for _, cell, meta in nbgrader_cells(generated):
        if meta.get("grade") and has_hidden_block(cell.source):
            visible, _, rest = cell.source.partition(BEGIN)
            if rest.partition(END)[2].strip():
                raise CourseError(f"{assignment}: {meta['grade_id']} has code after {END}; the block must end the cell")
            cell.source = f"{visible}{hidden_block(assignment, meta['grade_id'])}"
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


def run_hidden_tests(assignment: str, grade_id: str, namespace: dict) -> float | None:
    """Observe the notebook's namespace with the checks' observer of `grade_id` and judge it rule by rule against the
    solution's observation (grader.rules). Every rule holds: None (nbgrader gives the cell its points). Some hold:
    each broken rule is printed with its first differing case, and their points are returned, the cell's last value
    (nbgrader's partial credit: utils.determine_grade reads it). None holds, or a "must not" rule is broken:
    AssertionError with that same message."""
    from grader.references import load_checks, solution_observations  # torch-heavy: only where a block runs

    checks = load_checks(assignment)
    seen = observing.as_sent(checks.OBSERVERS[grade_id](namespace))
    judgement = rules.judge(
        seen,
        solution_observations(assignment)[grade_id],
        getattr(checks, "CLAUSES", {}).get(grade_id, {}),
        hidden_points(assignment)[grade_id],
        tuple(getattr(checks, "MUST_NOT", {}).get(grade_id, ((), ()))[0]),
    )
    if judgement.points == judgement.max_points:
        return None
    if judgement.points == 0:
        raise AssertionError(judgement.message())
    print(judgement.message())
    return judgement.points


def hidden_points(assignment: str) -> dict[str, float]:
    """The points of each hidden-test cell of the assignment's source notebook."""
    [path] = assignment_notebooks(solutions() / assignment)
    return {
        meta["grade_id"]: float(meta["points"])
        for _, cell, meta in nbgrader_cells(read_notebook(path))
        if meta.get("grade") and has_hidden_block(cell.source)
    }
