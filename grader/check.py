"""`python -m grader check NOTEBOOK [--hidden]`: the terminal twin of JupyterLab's Validate button, part by part.

Only visible tests are scored: a test cell with a hidden-test block in the course's source notebook gets its points
when the work is graded, so it is listed as "runs when graded", never as passed. Which cells those are comes from
the source notebook in solutions/ or, in a student edition (no solutions/), from its GRADED_CELLS file.

With `--hidden`, where solutions/ is present (someone studying alone with the whole course), the notebook is graded
as `grader autograde` grades it: its locked and test cells as the source has them, its cells in the grading sandbox,
then the trusted check; each part's points and every broken rule are printed as the feedback gives them.
"""

from __future__ import annotations

import copy
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nbformat import NotebookNode

from grader.course import CourseError, nbgrader_config, relative, root, solutions
from grader.escaping import printable
from grader.notebooks import hidden_test_ids, nbgrader_cells, read_notebook
from grader.tables import format_table

if TYPE_CHECKING:
    from grader.execute import CellScore
    from grader.trusted import TrustedChecker

# In a student edition: each exercise notebook's graded cells and which of them hold hidden tests (grader.edition).
GRADED_CELLS = "graded_cells.json"
NOT_HERE = "hidden tests: they run when the exercise is graded (this copy of the course has no solutions/)"


@dataclass(frozen=True)
class Exercise:
    """What the course knows of the exercise a notebook was released from: the grade ids of its graded cells, those
    of its test cells with hidden tests, and its source notebook (None in a student edition)."""

    graded: frozenset[str]
    hidden: frozenset[str]
    source: Path | None


@dataclass(frozen=True)
class PartResult:
    """One graded test cell as the feedback gives it: its grade id, its label ("Part 1: ... — hidden tests"), the
    points it earned, its maximum, and what the feedback says of it (what failed, or that nothing did)."""

    grade_id: str
    label: str
    score: float
    points: float
    said: str


@dataclass(frozen=True)
class Checked:
    """The graded test cells of a checked notebook, and which of them hold hidden tests."""

    scores: list[CellScore]
    hidden: frozenset[str]

    @property
    def visible(self) -> list[CellScore]:
        return [s for s in self.scores if s.grade_id not in self.hidden]

    @property
    def passed(self) -> bool:
        """Every visible test passes, and no hidden cell fails already on its visible lines."""
        return all(s.passed for s in self.scores)


def check(path: Path) -> Checked:
    """Execute a student's notebook as nbgrader's Validate does and score each visible graded test cell."""
    notebook = _exercise_notebook(path)
    exercise = exercise_of(path)
    from grader.execute import execute, graded_scores, validating  # nbgrader loads slowly; input checked first

    with validating():
        scores = graded_scores(execute(notebook, path.resolve().parent, nbgrader_config()))
    # A cell whose grade_id the source does not know is not a visible test of this exercise: it is not scored.
    unknown = {s.grade_id for s in scores if s.grade_id not in exercise.graded}
    return Checked(scores, frozenset(exercise.hidden | unknown))


def check_hidden(path: Path, checker: TrustedChecker) -> list[PartResult]:
    """Grade a student's notebook as `grader autograde` does, with `checker` (the trusted check of its assignment, in
    its sandbox): each graded test cell's trusted points and what the feedback would say failed (every broken rule)."""
    from grader.execute import graded_scores
    from grader.feedback import failure_message, graded_parts, result_words
    from grader.hidden_tests import BEGIN
    from grader.nbgrader_steps import VERDICT, CourseExecute, Grading, disagreements, note_disagreements

    notebook, exercise = _exercise_notebook(path), exercise_of(path)
    if exercise.source is None:
        raise CourseError(f"{relative(path)}: {NOT_HERE}")
    graded = as_graded(notebook, read_notebook(exercise.source))
    grading = Grading(checker.sandbox, checker=checker)
    graded, resources = CourseExecute(grading).preprocess(graded, {"metadata": {"path": str(path.resolve().parent)}})
    verdict = resources[VERDICT]
    note_disagreements(graded, disagreements(verdict, {s.grade_id: s.score for s in graded_scores(graded)}))
    results = []
    for cell, label, _ in graded_parts(graded.cells, BEGIN):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if label and grade_id in verdict.points:
            score, points = verdict.points[grade_id], checker.test_points[grade_id]
            said = result_words(score, points, failure_message(cell))
            results.append(PartResult(grade_id, label, score, points, said))
    missing = sorted(set(verdict.points) - {r.grade_id for r in results})
    if missing:  # nbgrader cannot grade a notebook that lost a graded cell: it earns nothing
        raise CourseError(f"{relative(path)}: graded cell {', '.join(missing)} is missing; grading would fail")
    return results


def check_with_hidden_tests(path: Path) -> list[PartResult]:
    """check_hidden in a sandbox of its own (bubblewrap where available) with its assignment's trusted check."""
    from grader.sandbox import SandboxFailure, start_sandbox
    from grader.trusted import TrustedChecker, has_trusted_check

    exercise = exercise_of(path)
    if exercise.source is None:
        raise CourseError(f"{relative(path)}: {NOT_HERE}")
    assignment = exercise.source.parent.name
    if not has_trusted_check(assignment):
        raise CourseError(f"{relative(path)}: {assignment} has no trusted check (solutions/{assignment}/checks.py)")
    with tempfile.TemporaryDirectory(prefix="grader-check-") as scratch, start_sandbox(Path(scratch), 1) as sandbox:
        checker = TrustedChecker(assignment, sandbox)
        checker.warm_sandbox()
        try:
            return check_hidden(path, checker)
        except SandboxFailure as failure:  # the grader's own problem, never the notebook's
            raise CourseError(f"{relative(path)}: the grading sandbox failed ({failure}); check again") from None


def as_graded(notebook: NotebookNode, source: NotebookNode) -> NotebookNode:
    """A copy of a student's notebook with its locked and test cells as the source has them, hidden tests included,
    as nbgrader's OverwriteCells gives them to autograding (what a student changed there never counts)."""
    kept = {
        meta["grade_id"]: cell
        for _, cell, meta in nbgrader_cells(source)
        if "grade_id" in meta and (meta.get("locked") or (meta.get("grade") and not meta.get("solution")))
    }
    graded = copy.deepcopy(notebook)
    for _, cell, meta in nbgrader_cells(graded):
        original = kept.get(meta.get("grade_id"))
        if original is not None and original.cell_type == cell.cell_type:
            cell.source = original.source
    return graded


def notebook_to_check(path: Path) -> Path:
    """The notebook `grader check PATH` checks: PATH itself, or the one exercise notebook in the folder PATH.
    CourseError for a folder with none or several, naming what to pass instead."""
    if not path.is_dir():
        return path
    here = [p for p in sorted(path.glob("*.ipynb")) if p.name in exercise_names()]
    if len(here) == 1:
        return here[0]
    found = here or [p for p in sorted(path.rglob("*.ipynb")) if p.name in exercise_names()]
    examples = " or ".join(f"`python -m grader check {relative(p)}`" for p in found[:2])
    holds = f"{len(here)} exercise notebooks" if here else "no exercise notebook"
    hint = f"check one notebook, e.g. {examples}" if examples else "pass an exercise notebook (.ipynb) instead"
    raise CourseError(f"{relative(path)}: a folder with {holds}; {hint}")


def exercise_names() -> set[str]:
    """The file names of the course's exercise notebooks (those of solutions/, or in a student edition those
    GRADED_CELLS lists)."""
    names = {p.name for p in solutions().glob("*/*.ipynb")}
    listed = root() / GRADED_CELLS
    if not names and listed.is_file():
        names = set(json.loads(listed.read_text(encoding="utf-8")))
    return names


def exercise_of(path: Path) -> Exercise:
    """The exercise a student's notebook was released from: the one of its file name, or, for a copy saved under
    another name (`ex05_hooks (1).ipynb`), the one exercise whose hidden test cells it holds."""
    named = exercise_named(path.name)
    if named is not None:
        return named
    held = {meta.get("grade_id") for _, _, meta in nbgrader_cells(read_notebook(path))}
    exercises = {name: exercise_named(name) for name in sorted(exercise_names())}
    matching = [exercise for exercise in exercises.values() if exercise and exercise.hidden and exercise.hidden <= held]
    if len(matching) == 1:
        return matching[0]
    known = ", ".join(exercises) or "none here"
    raise CourseError(
        f"{relative(path)}: not an exercise of this course: its name is no exercise's ({known}), and it holds the"
        f" graded cells of {'several' if matching else 'none'} of them"
    )


def exercise_named(name: str) -> Exercise | None:
    """The exercise whose notebook is called `name`: the source notebook of that name in solutions/, or, in a student
    edition, its entry in GRADED_CELLS; None if there is none."""
    sources = sorted(solutions().glob(f"*/{name}"))
    if sources:
        source = read_notebook(sources[0])
        graded = {meta.get("grade_id") for _, _, meta in nbgrader_cells(source)}
        return Exercise(frozenset(graded), frozenset(hidden_test_ids(source)), sources[0])
    listed = root() / GRADED_CELLS
    if not solutions().is_dir() and listed.is_file():
        entry = json.loads(listed.read_text(encoding="utf-8")).get(name)
        return None if entry is None else Exercise(frozenset(entry["graded"]), frozenset(entry["hidden"]), None)
    return None


def _exercise_notebook(path: Path) -> NotebookNode:
    notebook = read_notebook(path)
    if not any(meta.get("grade") for _, _, meta in nbgrader_cells(notebook)):
        raise CourseError(f"{relative(path)}: no graded test cell; is this an exercise notebook?")
    return notebook


def check_table(checked: Checked) -> str:
    """A row per graded test cell: visible ones with their points, hidden ones as running when graded."""
    rows = [("test cell", "points", "result", "")]
    for s in checked.scores:
        if s.grade_id in checked.hidden:
            note = f"fails already: {s.error}" if not s.passed else ""
            rows.append((s.grade_id, f"- / {s.max_score:g}", "runs when graded", note))
        else:
            rows.append((s.grade_id, f"{s.score:g} / {s.max_score:g}", "pass" if s.passed else "FAIL", s.error))
    return format_table(rows) + "\n" + verdict(checked)


def verdict(checked: Checked) -> str:
    """What the visible tests earn, and how many points the hidden tests decide."""
    earned = sum(s.score for s in checked.visible)
    total = sum(s.max_score for s in checked.visible)
    hidden = sum(s.max_score for s in checked.scores if s.grade_id in checked.hidden)
    return (
        f"visible tests: {earned:g} of {total:g} points; {hidden:g} more points are decided by hidden tests"
        " when the exercise is graded"
    )


def check_report(checked: Checked) -> str:
    """What the Validate button says: each failing test cell with its message first, then the verdict."""
    failing = [s for s in checked.scores if not s.passed]
    lines = [
        f"{s.grade_id} (cell {s.cell}) fails"
        + (" already on its visible lines" if s.grade_id in checked.hidden else "")
        + f": {s.error or 'it earned less than its points'}"
        for s in failing
    ]
    if not failing:
        lines.append("The visible tests pass. Passing them does not guarantee full marks.")
    return "\n".join([*lines, verdict(checked)])


def hidden_report(results: list[PartResult]) -> str:
    """Each part's result line as the feedback page has it (label: points, then what it says, escaped), and the
    total."""
    lines = []
    for result in results:
        lines.append(f"{result.label}: {result.score:g} / {result.points:g} points")
        lines += [f"    {printable(line)}" for line in result.said.splitlines()]
    earned, total = sum(r.score for r in results), sum(r.points for r in results)
    lines.append(f"with hidden tests: {earned:g} of {total:g} points, as grading gives them")
    return "\n".join(lines)
