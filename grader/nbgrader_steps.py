"""The grader's execute and trusted-check steps as nbgrader preprocessors.

The course's nbgrader configuration names them in `Autograde.autograde_preprocessors`, so every way to autograde grades
the same way: `python -m grader autograde`, the Formgrader's Autograde buttons and `nbgrader autograde` typed in the
course folder all run the cells in the sandbox and take each graded test cell's points from the trusted check
(grader.trusted), whose verdict on each cell becomes the cell's error output. Inside a grading run (grader.autograde)
each submission's Grading is passed to both steps; under nbgrader's own Autograde the execute step starts a sandbox of
its own for the notebook. The execute step hands its verdict to the trusted-check step in the notebook's resources. The
story: docs/instructor.md, "Every way to autograde grades the same way".
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells

from grader.gradebook import FLAGGED
from grader.hidden_tests import has_hidden_block, without_hidden_block
from grader.notebooks import nbgrader_cells
from grader.sandbox import Child, Sandbox, SandboxFailure, start_sandbox
from grader.sandboxed_execute import CellRun, SandboxedExecute
from grader.trusted import TrustedChecker, Verdict, has_trusted_check

FLAG_NOTE = f"{FLAGGED}'s trusted check"
VERDICT = "grader_trusted_verdict"  # the key of the trusted check's Verdict in a notebook's resources


@dataclass
class Grading(CellRun):
    """One submission's grading, passed explicitly to the steps that run it: the CellRun of its cells, the trusted
    check, the lock of the gradebook (the grading run's, where several submissions are graded at once), the flags
    the trusted-check step raised and the mistakes of each graded test cell that earned less than its points
    (grade_id -> its broken rules, as the trusted check's Verdict has them)."""

    checker: TrustedChecker | None = None
    gradebook_lock: threading.Lock = field(default_factory=threading.Lock)
    flags: list[str] = field(default_factory=list)
    mistakes: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hidden_elsewhere = self.checker is not None


@contextmanager
def own_sandbox() -> Iterator[Sandbox]:
    """A sandbox for one notebook, in a scratch folder of its own (never that of a grading run under way)."""
    with tempfile.TemporaryDirectory(prefix="grader-nbgrader-") as scratch, start_sandbox(Path(scratch), 1) as sandbox:
        yield sandbox


class CourseExecute(SandboxedExecute):
    """nbgrader's Execute step: the cells in the sandbox (the run's, or one started for this notebook), then the
    trusted check's observers in the same child, and its verdict on each hidden-test cell as that cell's outcome."""

    def __init__(self, grading: Grading | None = None, **kwargs: object) -> None:
        super().__init__(grading, **kwargs)

    def preprocess(self, nb: NotebookNode, resources: dict, retries: int | None = None):
        if self.cell_run is not None:
            return self._checked(nb, resources, retries)
        assignment = resources["nbgrader"]["assignment"]
        with own_sandbox() as sandbox:
            checker = TrustedChecker(assignment, sandbox) if has_trusted_check(assignment) else None
            self.cell_run = Grading(sandbox, checker=checker)
            try:
                return self._checked(nb, resources, retries)
            finally:
                self.cell_run = None

    def _checked(self, nb: NotebookNode, resources: dict, retries: int | None):
        nb, resources = super().preprocess(nb, resources, retries)
        if VERDICT in resources:
            show_verdict(nb, resources[VERDICT])
        return nb, resources

    def after_cells(self, child: Child, failure: str, resources: dict) -> None:
        checker = self.cell_run.checker
        if checker is None:
            return
        try:
            if failure:
                observations, problem, kind = {}, failure, self.cell_run.problem_kind
            else:
                observations, problem, kind = checker.observe_in(child)
            resources[VERDICT] = checker.verdict(observations, problem, kind)
        except SandboxFailure:
            raise  # the grader's fault, not the submission's: graded again, never recorded
        except Exception as error:  # noqa: BLE001 - whatever went wrong, the notebook's own points must not stand
            resources[VERDICT] = checker.failed(f"the trusted check failed ({type(error).__name__})")


def show_verdict(nb: NotebookNode, verdict: Verdict) -> None:
    """Give each hidden-test cell that ran without an error its trusted outcome as its outputs, as the generated hidden
    tests give it: nothing where it earned its points, where it earned some the message (stdout) and the points
    (the cell's value: nbgrader's partial credit), where it earned none the message as an AssertionError."""
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or not has_hidden_block(cell.source):
            continue
        points = verdict.points.get(meta["grade_id"], 0.0)
        if any(output.output_type == "error" for output in cell.outputs) or points >= float(meta["points"]):
            continue
        message = verdict.messages.get(meta["grade_id"], "the trusted check gave no points")
        cell.outputs += partial_credit(message, points) if points else [failure(message)]


def failure(message: str) -> NotebookNode:
    """The output of a cell that failed with this message."""
    return new_output("error", ename="AssertionError", evalue=message, traceback=[f"AssertionError: {message}"])


def partial_credit(message: str, points: float) -> list[NotebookNode]:
    """The outputs of a hidden-test cell that earned some of its points: what it printed, then its value."""
    return [
        new_output("stream", name="stdout", text=f"{message}\n"),
        new_output("execute_result", data={"text/plain": repr(points)}, execution_count=None),
    ]


class RestoreCells(OverwriteCells):
    """nbgrader's OverwriteCells (every locked and test cell put back as the source has it), without its warning
    about the hidden tests it puts back: a test cell as released lacks its hidden-test block, which nbgrader reports
    as a changed checksum for every honest student, hiding the warning about a test cell a student did edit."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, cell_index: int) -> tuple[NotebookNode, dict]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id).source
            except MissingEntry:
                source = ""  # nbgrader's own step says so
            if has_hidden_block(source) and cell.source == without_hidden_block(source):
                cell.source = source  # the cell as released, its hidden tests back: no change of the student's
        return super().preprocess_cell(cell, resources, cell_index)


class TrustedCheck(NbGraderPreprocessor):
    """After SaveAutoGrades: record the trusted points of every graded test cell. Where the notebook's own tests
    gave others, the submitted notebook gets nbgrader's flag, and the reason is written beside the test cell (an
    output: the short reason, as statuses give it) and, whole (what came back, what was expected), as the comment of
    the solution cell it tests, for the Formgrader (Manage Submissions lists it) and the feedback."""

    def __init__(self, grading: Grading | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.grading = grading

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        verdict = resources.get(VERDICT)
        if verdict is None:
            return nb, resources  # no trusted check: the notebook's own points stand (grader.autograde warns)
        ids = resources["nbgrader"]
        with Gradebook(ids["db_url"]) as gradebook:
            said = _record_verdict(gradebook, verdict, ids["notebook"], ids["assignment"], ids["student"])
            _comment(gradebook, nb, disagreements(verdict, said, whole=True), ids)
        reasons = disagreements(verdict, said)
        note_disagreements(nb, reasons)
        if self.grading is not None:
            self.grading.flags += [f"{grade_id}: {reason}" for grade_id, reason in reasons.items()]
            self.grading.mistakes.update(verdict.mistakes)
        return nb, resources


def _record_verdict(gradebook: Gradebook, verdict: Verdict, notebook: str, assignment: str, student: str) -> dict:
    """Store the trusted points; return the points the notebook's own tests gave ({grade_id: points}), and set
    nbgrader's flag on the submitted notebook where they differ (a flag set before is never cleared here)."""
    grades = {grade_id: gradebook.find_grade(grade_id, notebook, assignment, student) for grade_id in verdict.points}
    said = {grade_id: float(grade.auto_score or 0.0) for grade_id, grade in grades.items()}
    for grade_id, grade in grades.items():
        grade.auto_score = verdict.points[grade_id]
    if disagreements(verdict, said):
        gradebook.find_submission_notebook(notebook, assignment, student).flagged = True
    gradebook.db.commit()
    return said


def disagreements(verdict: Verdict, notebook_said: dict[str, float], whole: bool = False) -> dict[str, str]:
    """{grade_id: reason} for each graded test cell whose points by the notebook's own tests (`notebook_said`)
    differ from the trusted check's: with the check's short reason, or its `whole` message (what came back, what was
    expected)."""
    why_of = verdict.messages if whole else verdict.reasons
    reasons = {}
    for grade_id, trusted in verdict.points.items():
        said = notebook_said.get(grade_id, 0.0)
        if said != trusted:
            why = f" ({why_of[grade_id]})" if grade_id in why_of else ""
            reasons[grade_id] = f"the notebook's tests gave {said:g}, the trusted check {trusted:g}{why}"
    return reasons


def note_disagreements(nb: NotebookNode, reasons: dict[str, str]) -> None:
    """Write each reason beside its test cell, as an output (the feedback shows it as what failed)."""
    for _, cell, meta in nbgrader_cells(nb):
        if meta.get("grade_id") in reasons:
            note = f"{FLAG_NOTE}: {reasons[meta['grade_id']]}\n"
            cell.outputs = [*cell.get("outputs", []), new_output("stream", name="stderr", text=note)]


def _comment(gradebook: Gradebook, nb: NotebookNode, reasons: dict[str, str], ids: dict) -> None:
    """Each reason as nbgrader's automatic comment on the solution cell above the flagged test cell."""
    above, notes = None, {}
    for _, _, meta in nbgrader_cells(nb):
        if meta.get("solution"):
            above = meta.get("grade_id")
        elif meta.get("grade_id") in reasons and above:
            notes.setdefault(above, []).append(f"{FLAG_NOTE}, {meta['grade_id']}: {reasons[meta['grade_id']]}")
    for grade_id, lines in notes.items():
        comment = gradebook.find_comment(grade_id, ids["notebook"], ids["assignment"], ids["student"])
        comment.auto_comment = "\n".join(lines)
    gradebook.db.commit()
