"""work/submitted/ -> work/autograded/ and the gradebook: nbgrader autograde, in parallel, sandboxed, checked.

Each submission is graded by nbgrader's own Autograde converter with the course's steps (grader.nbgrader_steps),
several at once by worker threads; the gradebook sees one reader or writer at a time (every step of nbgrader's that
uses it holds the run's gradebook lock, passed in each submission's Grading; the cells run without it). Every
submission ends with a status (ok, error, flagged), and one submission's failure never stops the others. The story
for instructors: docs/instructor.md; what the sandbox and the trusted check protect: docs/sandbox.md.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde
from nbgrader.converters.base import BaseConverter
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from grader.attempted import not_attempted
from grader.course import (
    CourseError,
    assignment_names,
    default_db_url,
    nbgrader_config,
    relative,
    root,
    solutions,
)
from grader.escaping import printable
from grader.execute import nbgrader_environment
from grader.gradebook import FLAGGED, add_student, cell_grades, changed_outside, graded_by_hand, submission_totals
from grader.hidden_tests import runnable
from grader.nbgrader_setup import ready_nbgrader
from grader.nbgrader_steps import CourseExecute, Grading, TrustedCheck
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook
from grader.release import recorded_release
from grader.sandbox import Sandbox, SandboxFailure, start_sandbox, worker_count
from grader.sandboxed_execute import GRADING_ENV
from grader.tables import format_table
from grader.tampering import tampering
from grader.trusted import TrustedChecker, has_trusted_check

ATTEMPTS = 3  # tries per submission when the sandbox itself fails (restarted in between)


@dataclass(frozen=True)
class Outcome:
    """What grading one submission came to."""

    student: str
    assignment: str
    status: str  # "ok", "error: <reason>" or "flagged: <reason>"
    score: float
    max_score: float
    fingerprint: str  # of the submitted files, so a resubmission is graded again
    # The automatic points the grader recorded per graded cell (grade_id -> points): a gradebook that says otherwise
    # was changed outside the grader.
    auto_scores: dict[str, float] = field(default_factory=dict)
    # Each graded test cell that earned less than its points, with its mistakes (grade_id -> each broken rule, or the
    # kind of problem), for the class's common mistakes (grader.common_mistakes).
    mistakes: dict[str, list[str]] = field(default_factory=dict)
    # The graded test cells of the parts the student left as released (grader.attempted): not attempted, no mistake.
    not_attempted: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Reasons quote student-controlled text (metadata keys, file names, error messages): escaped once, here.
        object.__setattr__(self, "status", printable(self.status))
        # A ledger written before rules were judged one by one holds one mistake per cell, as a string.
        listed = {cell: [found] if type(found) is str else found for cell, found in self.mistakes.items()}
        object.__setattr__(self, "mistakes", listed)


@dataclass(frozen=True)
class Plan:
    """The submissions of one assignment: those still to grade, and those graded before with the same files."""

    assignment: str
    students: list[str]
    pending: list[tuple[str, str]]  # (student, fingerprint)
    done: dict[str, Outcome]
    changed: dict[str, list[str]] = field(default_factory=dict)  # pending because the gradebook was changed: how


def plan(assignment: str, work_dir: Path, db_url: str | None = None) -> Plan:
    """Find every submission under `work_dir`/submitted/<student>/<assignment>/ and what is left to grade.

    A submission counts as done when the ledger holds an outcome for exactly its current files and its grade is in
    the gradebook `db_url` (default: the work folder's) with the automatic points the grader gave it, so an
    interrupted run can simply be started again, a resubmission is graded again, a run into another gradebook grades
    everything there, and a grade changed outside the grader is graded again (`Plan.changed` says how it was
    changed). A teaching assistant's manual score is not a change. The ledger never holds an outcome that the
    grader's own failure caused.
    """
    [assignment] = assignment_names([assignment])
    submitted = work_dir / "submitted"
    students = sorted(p.parent.name for p in submitted.glob(f"*/{assignment}") if p.is_dir())
    if not students:
        layout = f"<student>/{assignment}/*.ipynb"
        raise CourseError(f"{relative(submitted)}: no submission of {assignment} (expected {layout})")
    ledger = Ledger(work_dir / "grading_status" / assignment)
    ready_nbgrader()
    grades = cell_grades(db_url or default_db_url(work_dir), [assignment])
    recorded = {student: cells[assignment] for student, cells in grades.items()}
    pending, done, changed = [], {}, {}
    for student in students:
        digest = fingerprint(submitted / student / assignment)
        previous = ledger.read(student)
        if previous and previous.fingerprint == digest and student in recorded:
            changes = changed_outside(previous.auto_scores, recorded[student])
            if not changes:
                done[student] = previous
                continue
            changed[student] = changes
        pending.append((student, digest))
    return Plan(assignment, students, pending, done, changed)


def autograde(
    plan: Plan,
    work_dir: Path,
    db_url: str | None = None,
    workers: int | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    sandbox: Sandbox | None = None,
) -> list[Outcome]:
    """Grade the pending submissions of a plan; return one Outcome per student of the plan, sorted by student.

    `sandbox` is one the caller started early (its imports then overlap with the caller's work); by default one is
    started here and closed at the end.
    """
    assignment = plan.assignment
    ledger = Ledger(work_dir / "grading_status" / assignment)
    outcomes = dict(plan.done)
    if not plan.pending:
        return [outcomes[student] for student in plan.students]
    workers = worker_count(workers)
    # The sandbox's warm server imports torch while the assignment is recorded.
    with _grading_run(work_dir, workers, sandbox) as running, ThreadPoolExecutor(workers) as pool:
        config, released, checker = prepare(assignment, work_dir, db_url, running, pool)
        gradebook_lock = threading.Lock()  # one reader or writer of the gradebook at a time among the workers

        def grade(student: str, print_: str) -> Future:
            grading = Grading(running, checker=checker, gradebook_lock=gradebook_lock)
            return pool.submit(_grade, assignment, student, print_, config, grading, released)

        futures = {grade(student, print_): (student, print_, 1) for student, print_ in plan.pending}
        with _frozen_heap():  # what the run keeps is left out of the collector's full passes
            while futures:
                finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in finished:
                    student, print_, attempt = futures.pop(future)
                    outcome, final = _outcome_of(future, assignment, student, print_)
                    if not final:  # what the failed grading left behind must not count
                        with gradebook_lock:
                            _award_nothing(config.CourseDirectory.db_url, assignment, student)
                    if not final and attempt < ATTEMPTS:
                        failure = future.exception()
                        if isinstance(failure, SandboxFailure):
                            running.restart(failure.generation)
                        futures[grade(student, print_)] = (student, print_, attempt + 1)
                        continue
                    if final:  # an outcome the grader's own failure caused is not final: a re-run grades it
                        record(ledger, outcome)
                    outcomes[outcome.student] = outcome
                    if on_outcome:
                        on_outcome(outcome)
    return [outcomes[student] for student in plan.students]


def record(ledger: Ledger, outcome: Outcome) -> None:
    """Write an outcome to the ledger; where it cannot be written, say so and go on (the next run grades that
    submission again): the grader's bookkeeping never stops a batch."""
    try:
        ledger.write(outcome)
    except OSError as error:
        print(
            f"{printable(outcome.student)}: the grading ledger could not record this outcome, run again to grade it "
            f"({type(error).__name__}: {printable(str(error))})",
            file=sys.stderr,
        )


def prepare(
    assignment: str, work_dir: Path, db_url: str | None, running: Sandbox, pool: ThreadPoolExecutor
) -> tuple[Config, dict[str, NotebookNode], TrustedChecker | None]:
    """Ready to grade `assignment` in `running`: its cells transformed, it recorded in the gradebook, the solution's
    trusted observations made (in `pool`, meanwhile). The nbgrader settings, the released notebooks by file name
    (read once for the run), and the trusted checker (None without a trusted check)."""
    running.prepare(_course_cells(assignment))
    checking = pool.submit(_trusted_checker, assignment, running)
    released = recorded_release(assignment, work_dir, db_url)
    return nbgrader_config(work_dir=work_dir, db_url=db_url), released, checking.result()


def _outcome_of(future: Future, assignment: str, student: str, print_: str) -> tuple[Outcome, bool]:
    """The outcome of one grading, and whether it is final (False when the grader, not the submission, failed: the
    caller then sets what that grading recorded to nothing)."""
    try:
        return future.result(), True
    except Exception as error:  # noqa: BLE001 - a fault of the grader on one submission must not end the batch
        reason = f"error: the grader failed on this submission, run again to grade it ({type(error).__name__}: {error})"
        return Outcome(student, assignment, reason, 0.0, 0.0, print_), False


def reject(assignment: str, student: str, reason: str, work_dir: Path, db_url: str | None = None) -> Outcome:
    """A submission whose files could not be taken in: an error outcome, in the ledger; a grade recorded earlier for
    the student no longer counts. (Before a grading run: nothing else uses the gradebook.)"""
    ready_nbgrader()
    _award_nothing(db_url or default_db_url(work_dir), assignment, student)
    outcome = Outcome(student, assignment, f"error: {reason}", 0.0, 0.0, "")
    record(Ledger(work_dir / "grading_status" / assignment), outcome)
    return outcome


def _course_cells(assignment: str) -> list[str]:
    """The code cells every submission runs as the source has them: all but the solution cells, a hidden-test cell
    as the child is sent it (its visible lines, when the trusted check runs its hidden tests)."""
    elsewhere = has_trusted_check(assignment)
    return [
        runnable(cell, elsewhere)
        for path in assignment_notebooks(solutions() / assignment)
        for cell in read_notebook(path).cells
        if cell.cell_type == "code" and not cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    ]


def _trusted_checker(assignment: str, sandbox: Sandbox) -> TrustedChecker | None:
    if has_trusted_check(assignment):
        checker = TrustedChecker(assignment, sandbox)
        checker.warm_sandbox()  # before any child is forked for this assignment
        checker.reference()  # the solution must pass its own check before any student is graded
        return checker
    warnings.warn(f"{assignment} has no trusted check: its points come from the notebook's own tests", stacklevel=2)
    return None


def _grade(
    assignment: str,
    student: str,
    fingerprint: str,
    config,
    grading: Grading,
    released: dict[str, NotebookNode],
) -> Outcome:
    """Grade one submission; a broken submission becomes an error outcome, a suspicious one a flagged outcome.

    `grading`: fresh for this submission, with the run's gradebook lock; `released`: the assignment's released
    notebooks by file name, read once for the whole run.
    """
    folder = Path(config.CourseDirectory.submitted_directory) / student / assignment
    problem = _symbolic_link(folder)  # first: a link is never followed, not even to read it
    if not problem:
        submitted, problem = _read_submission(folder)
        problem = problem or _missing_notebook(submitted, released)
    db_url = config.CourseDirectory.db_url
    lock = grading.gradebook_lock
    if problem:  # as for a submission rejected at intake, a grade recorded before for other files no longer counts
        with lock:
            _award_nothing(db_url, assignment, student)
        return Outcome(student, assignment, f"error: {problem}", 0.0, 0.0, fingerprint)
    tampered = _tampered(submitted, released)
    flags = [problem for problems in tampered.values() for problem in problems]
    converter = ConcurrentAutograde(grading, coursedir=CourseDirectory(config=config), config=config)
    converter.coursedir.assignment_id = assignment
    converter.coursedir.student_id = student
    converter.force = True
    converter.create_student = True
    with _errors_logged_by_this_thread() as errors:
        try:
            converter.start()
        except Exception as error:  # noqa: BLE001 - nbgrader reports any failure of one submission this way
            if grading.failure is not None:  # the sandbox failed, not the submission
                raise grading.failure from error
            reason = (errors[-1] if errors else str(error)).strip().splitlines()[0]
            with lock:
                _award_nothing(db_url, assignment, student)
            if flags:  # nbgrader's message about the edited notebook would mislead: say what was edited
                status = f"flagged: {'; '.join(flags)} (nbgrader could not grade the edited notebook: {reason})"
            else:
                status = f"error: {reason}"
            return Outcome(student, assignment, status, 0.0, 0.0, fingerprint)
    if grading.failure is not None:
        raise grading.failure
    errors = [grading.problem] if grading.problem else []
    flags += grading.flags  # raised by the TrustedCheck step (grader.nbgrader_steps) while nbgrader graded it
    with lock:
        if flags:
            _flag(db_url, assignment, student, tampered, released)
        score, max_score, auto_scores = _recorded(db_url, assignment, student)
    status = f"error: {'; '.join(errors + flags)}" if errors else f"flagged: {'; '.join(flags)}" if flags else "ok"
    untouched = not_attempted(submitted, released)
    return Outcome(student, assignment, status, score, max_score, fingerprint, auto_scores, grading.mistakes, untouched)


def _flag(
    db_url: str, assignment: str, student: str, tampered: dict[str, list[str]], released: dict[str, NotebookNode]
) -> None:
    """Set nbgrader's flag on every notebook of a submission (the Formgrader's "Flagged?" column), and add what a
    notebook changed that a student may not to the grader's comment on its first answer cell (the Formgrader shows
    it there and on Manage Submissions; the trusted check's reasons are on the cells they concern already)."""
    with Gradebook(db_url) as gradebook:
        for notebook in gradebook.find_submission(assignment, student).notebooks:
            notebook.flagged = True
            name = f"{notebook.name}.ipynb"
            answers = [meta["grade_id"] for _, _, meta in nbgrader_cells(released[name]) if meta.get("solution")]
            if tampered.get(name) and answers:
                comment = gradebook.find_comment(answers[0], notebook.name, assignment, student)
                lines = [f"{FLAGGED}: {printable(problem)}" for problem in tampered[name]]
                comment.auto_comment = "\n".join([*filter(None, [comment.auto_comment]), *lines])
        gradebook.db.commit()


def _award_nothing(db_url: str, assignment: str, student: str) -> None:
    """Set every recorded score of a submission to 0: what a failed grading left behind must not count. (The caller
    holds the run's gradebook lock, if other threads use the gradebook.)"""
    with Gradebook(db_url) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.auto_score = 0.0 if grade.auto_score is not None else None
                grade.manual_score = None
        gradebook.db.commit()


def _symbolic_link(folder: Path) -> str:
    links = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_symlink())
    return f"{links[0]} is a symbolic link (not graded)" if links else ""


def _tampered(submitted: dict[str, NotebookNode], released: dict[str, NotebookNode]) -> dict[str, list[str]]:
    """What each submitted notebook changed that a student may not, against the released notebook of its name."""
    return {name: tampering(notebook, released[name]) for name, notebook in submitted.items() if name in released}


def _missing_notebook(submitted: dict[str, NotebookNode], released: dict[str, NotebookNode]) -> str:
    missing = [name for name in released if name not in submitted]
    if missing:
        return f"{', '.join(missing)} is missing (found: {', '.join(submitted) or 'no notebook'})"
    return ""


@contextmanager
def _errors_logged_by_this_thread() -> Iterator[list[str]]:
    """The last line of each traceback nbgrader logs from this thread (its exceptions carry no detail)."""
    from traitlets.log import get_logger

    errors: list[str] = []
    me = threading.get_ident()

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            text = record.getMessage().strip()
            if record.thread == me and text.startswith("Traceback"):
                errors.append(text.splitlines()[-1])

    handler = Collect(logging.ERROR)
    get_logger().addHandler(handler)
    try:
        yield errors
    finally:
        get_logger().removeHandler(handler)


def _read_submission(folder: Path) -> tuple[dict[str, NotebookNode], str]:
    """The submitted notebooks by file name, and the first that is not a readable nbformat 4 notebook, described
    ('' if none)."""
    notebooks = {}
    for path in sorted(folder.glob("*.ipynb")):
        try:
            notebooks[path.name] = read_notebook(path)
        except CourseError as error:
            return notebooks, str(error).split(": ", 1)[1]
    return notebooks, ""


def _recorded(db_url: str, assignment: str, student: str) -> tuple[float, float, dict[str, float]]:
    """A submission's score and maximum as recorded, and the automatic points of each of its graded cells."""
    with Gradebook(db_url) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        auto = {g.name: float(g.auto_score or 0.0) for notebook in submission.notebooks for g in notebook.grades}
        return float(submission.score), float(submission.max_score), auto


def fingerprint(folder: Path) -> str:
    """A digest of the files of a submission folder (symbolic links, which are never graded, left out), read in
    chunks, with the names' bytes as the file system has them."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        digest.update(os.fsencode(path.relative_to(folder)) + b"\0")
        with path.open("rb") as file:
            digest.update(hashlib.file_digest(file, "sha256").digest())
    return digest.hexdigest()


class Ledger:
    """One small JSON file per graded submission, written after its grades are in the gradebook.

    A record is named after its student, `<student>.json`; an id too long for that (one rejected at intake) is
    shortened and given a digest of itself, so that every name fits the file system's 255 bytes.
    """

    NAME_LIMIT = 128  # characters of a student id used as they are in a record's name

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, student: str) -> Path:
        """The record of `student`."""
        if len(os.fsencode(student)) <= self.NAME_LIMIT:
            return self.folder / f"{student}.json"
        digest = hashlib.sha256(os.fsencode(student)).hexdigest()[:16]
        return self.folder / f"{student[:64]}~{digest}.json"  # "~" is in no accepted id

    def read(self, student: str) -> Outcome | None:
        outcome = _outcome_in(self.path(student))
        return outcome if outcome is not None and outcome.student == student else None

    def outcomes(self) -> list[Outcome]:
        """Every outcome the ledger holds, by student."""
        found = (_outcome_in(record) for record in self.folder.glob("*.json"))
        return sorted((outcome for outcome in found if outcome), key=lambda outcome: outcome.student)

    def write(self, outcome: Outcome) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=self.folder, prefix=".", suffix=".tmp", delete=False) as scratch:
            scratch.write(json.dumps(asdict(outcome)))
        Path(scratch.name).replace(self.path(outcome.student))  # atomic: a kill never leaves half a record


def _outcome_in(path: Path) -> Outcome | None:
    try:
        return Outcome(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def ledger_outcomes(work_dir: Path) -> list[Outcome]:
    """Every outcome in the grading ledger of `work_dir` (grading_status/<assignment>/), by assignment and student."""
    folders = sorted((work_dir / "grading_status").glob("*"))
    return [outcome for folder in folders for outcome in Ledger(folder).outcomes()]


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """Leave the objects alive now (modules, the course, the gradebook's engine) out of the collector's full passes
    until the block ends: each pass of a run would otherwise walk them all again (about 0.1 s a pass)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def _grading_run(work_dir: Path, workers: int, sandbox: Sandbox | None) -> Iterator[Sandbox]:
    """A sandbox for this run, and the process settings nbgrader expects while it autogrades."""
    ready_nbgrader()
    running = sandbox or start_sandbox(work_dir, workers)
    saved_cwd = os.getcwd()
    # nbgrader's converters change to the course root and back around each submission: from there already, every
    # converter running at once changes back to it. nbgrader sets and unsets NBGRADER_EXECUTION around each
    # notebook; set for the whole run, concurrent notebooks agree on it.
    os.chdir(root())
    try:
        with nbgrader_environment(**GRADING_ENV):
            yield running
    finally:
        if sandbox is None:
            running.close()
        os.chdir(saved_cwd)


class ConcurrentAutograde(Autograde):
    """nbgrader's Autograde for one submission among several graded at once, in the sandbox.

    The course configuration's steps (grader.nbgrader_steps) are used, its execute and trusted-check steps given
    this submission's Grading. Everything of nbgrader's that reads or writes the gradebook (setting the submission
    up, every step but the execute step) holds the run's gradebook lock, the Grading's; the cells run without it.
    """

    def __init__(self, grading: Grading, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.grading = grading

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        with self.grading.gradebook_lock:
            super().init_assignment(assignment_id, student_id)
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
                add_student(gradebook, student_id)

    def _init_preprocessors(self) -> None:
        self.exporter._preprocessors = []
        steps = self.sanitize_preprocessors if self._sanitizing else self.autograde_preprocessors
        steps = [import_item(step) if isinstance(step, str) else step for step in steps]
        if not self._sanitizing and (CourseExecute not in steps or TrustedCheck not in steps):
            raise CourseError("nbgrader_config.py: Autograde.autograde_preprocessors lacks the grader's steps")
        for step in steps:
            if step is CourseExecute:
                self.exporter.register_preprocessor(CourseExecute(self.grading, parent=self.exporter))
                continue
            grading = (self.grading,) if step is TrustedCheck else ()
            made = step(*grading, parent=self.exporter)
            self.exporter.register_preprocessor(_Holding(self.grading.gradebook_lock, made))

    def convert_single_notebook(self, notebook_filename: str) -> None:
        # nbgrader's version wraps the second pass in utils.setenv(NBGRADER_EXECUTION="autograde"), whose restore
        # step always deletes the variable (it looks up the value, not the key): with notebooks graded
        # concurrently, the second one to finish fails. The variable is set for the whole run instead.
        self._sanitizing = True
        self._init_preprocessors()
        BaseConverter.convert_single_notebook(self, notebook_filename)
        graded = os.path.join(self.writer.build_directory, os.path.basename(notebook_filename))
        self._sanitizing = False
        self._init_preprocessors()
        try:
            BaseConverter.convert_single_notebook(self, graded)
        finally:
            self._sanitizing = True


@dataclass(frozen=True)
class _Holding:
    """One of nbgrader's steps, run holding the run's gradebook lock."""

    lock: threading.Lock
    step: Callable[[NotebookNode, dict], tuple[NotebookNode, dict]]

    def __call__(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        with self.lock:
            return self.step(nb, resources)


def outcome_table(outcomes: list[Outcome], db_url: str) -> str:
    """The per-student summary printed at the end of a grading run: scores as the gradebook `db_url` has them, a
    teaching assistant's manual scores among them (named in the status)."""
    assignments = sorted({o.assignment for o in outcomes})
    totals = {a: submission_totals(db_url, a) for a in assignments}
    grades = cell_grades(db_url, assignments)
    rows = [("student", "assignment", "score", "status")]
    for o in sorted(outcomes, key=lambda o: (o.assignment, o.student)):
        score, max_score = totals[o.assignment].get(o.student, (o.score, o.max_score))
        by_hand = graded_by_hand(grades.get(o.student, {}).get(o.assignment, {}))
        status = o.status + (f"; graded by hand: {', '.join(by_hand)}" if by_hand else "")
        rows.append((o.student, o.assignment, f"{score:g} / {max_score:g}", status))
    failed = sum(o.status.startswith("error") for o in outcomes)
    flagged = sum(o.status.startswith("flagged") for o in outcomes)
    return format_table(rows) + f"\ngraded {len(outcomes)} submission(s), {failed} with errors, {flagged} flagged"
