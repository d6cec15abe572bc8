"""The grader's execute and trusted-check steps as nbgrader preprocessors.

The course's nbgrader configuration names them in `Autograde.autograde_preprocessors`, so every way to autograde
grades the same way: `python -m grader autograde`, the Formgrader's Autograde buttons and `nbgrader autograde` typed
in the course folder all run the cells in the sandbox and take each graded test cell's points from the trusted
check. Inside a grading run (grader.autograde) the run's sandbox and its trusted check, already under way, are used;
under nbgrader's own Autograde each step starts a sandbox of its own for the notebook.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.notebooks import nbgrader_cells
from grader.sandbox import Sandbox, SandboxFailure, start_sandbox
from grader.sandboxed_execute import RUN, SandboxedExecute, current_sandbox, sandbox_in_use
from grader.trusted import TrustedChecker, Verdict, has_trusted_check

FLAG_NOTE = "Flagged by the grader's trusted check"


class TrustedCheckOfThisThread(threading.local):
    """In a grading run: the trusted check of the submission this thread grades, its verdicts per notebook once
    started, and the flags the TrustedCheck step raised."""

    checker: TrustedChecker | None = None
    verdicts: dict[str, Future]
    flags: list[str]


TRUSTED = TrustedCheckOfThisThread()


@contextmanager
def own_sandbox() -> Iterator[Sandbox]:
    """A sandbox for one notebook, in a scratch folder of its own (never that of a grading run under way)."""
    with tempfile.TemporaryDirectory(prefix="grader-nbgrader-") as scratch, start_sandbox(Path(scratch), 1) as sandbox:
        yield sandbox


def _run_sandbox() -> Sandbox | None:
    try:
        return current_sandbox()
    except RuntimeError:
        return None


class CourseExecute(SandboxedExecute):
    """nbgrader's Execute step, run in the grading run's sandbox or else in one started for this notebook."""

    def preprocess(self, nb: NotebookNode, resources: dict, retries: int | None = None):
        if _run_sandbox() is not None:
            return super().preprocess(nb, resources, retries)
        with own_sandbox() as sandbox, sandbox_in_use(sandbox):
            return super().preprocess(nb, resources, retries)


class TrustedCheck(NbGraderPreprocessor):
    """After SaveAutoGrades: record the trusted points of every graded test cell. Where the notebook's own tests
    gave others, the submitted notebook gets nbgrader's flag, and the reason is written beside the test cell (an
    output) and as the comment of the solution cell it tests, for the Formgrader and the feedback."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        ids = resources["nbgrader"]
        if not has_trusted_check(ids["assignment"]):
            return nb, resources  # the notebook's own points stand (grader.autograde warns once per run)
        verdict = self._verdict(nb, ids["assignment"], resources.get("unique_key", ""))
        with Gradebook(ids["db_url"]) as gradebook:
            reasons = _record_verdict(gradebook, verdict, ids["notebook"], ids["assignment"], ids["student"])
            _comment(gradebook, nb, reasons, ids)
        for _, cell, meta in nbgrader_cells(nb):
            if meta.get("grade_id") in reasons:
                note = f"{FLAG_NOTE}: {reasons[meta['grade_id']]}\n"
                cell.outputs = [*cell.get("outputs", []), new_output("stream", name="stderr", text=note)]
        if TRUSTED.checker is not None:
            TRUSTED.flags += [f"{grade_id}: {reason}" for grade_id, reason in reasons.items()]
        return nb, resources

    @staticmethod
    def _verdict(nb: NotebookNode, assignment: str, notebook: str) -> Verdict:
        """The run's verdict for this notebook (started beside its execution), or one computed here."""
        try:
            checker = TRUSTED.checker
            if checker is not None and checker.assignment == assignment:
                pending = TRUSTED.verdicts.get(notebook)
                return pending.result() if pending else checker.check(checker.code_to_run(nb))
            with own_sandbox() as sandbox:
                checker = TrustedChecker(assignment, sandbox)
                return checker.check(checker.code_to_run(nb))
        except SandboxFailure as failure:  # the grader's fault, not the submission's: graded again, never recorded
            RUN.failure = failure
            raise
        except Exception as error:  # noqa: BLE001 - whatever went wrong, the notebook's own points must not stand
            tests = [m["grade_id"] for _, _, m in nbgrader_cells(nb) if m.get("grade") and not m.get("solution")]
            reason = f"the trusted check failed ({type(error).__name__})"
            return Verdict(dict.fromkeys(tests, 0.0), dict.fromkeys(tests, reason))


def _record_verdict(gradebook: Gradebook, verdict: Verdict, notebook: str, assignment: str, student: str) -> dict:
    """Store the trusted points; return {grade_id: reason} for each cell where the notebook's tests said otherwise,
    and set nbgrader's flag on the submitted notebook if there is any (a flag set before is never cleared here)."""
    reasons = {}
    for grade_id, trusted in verdict.points.items():
        grade = gradebook.find_grade(grade_id, notebook, assignment, student)
        notebook_said = float(grade.auto_score or 0.0)
        if notebook_said != trusted:
            why = f" ({verdict.reasons[grade_id]})" if grade_id in verdict.reasons else ""
            reasons[grade_id] = f"the notebook's tests gave {notebook_said:g}, the trusted check {trusted:g}{why}"
        grade.auto_score = trusted
    if reasons:
        gradebook.find_submission_notebook(notebook, assignment, student).flagged = True
    gradebook.db.commit()
    return reasons


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
