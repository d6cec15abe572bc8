"""work/submitted/ -> work/autograded/ and the gradebook: stock nbgrader autograde, in parallel, on warm kernels.

Each submission is graded by nbgrader's own Autograde converter, so grades are nbgrader's. Two things change:
kernels are forked from one warm process (grader.warm_kernels) instead of started cold, and several submissions
are graded at once by worker threads. The gradebook sees one writer at a time: a worker holds GRADEBOOK while it
prepares and records a submission and lets go of it only while the submission's kernel runs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.converters import Autograde
from nbgrader.converters.base import BaseConverter
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from traitlets import default

from grader.course import CourseError, assignment_names, nbgrader_config, ready_nbgrader, relative
from grader.execute import nbgrader_environment
from grader.notebooks import read_notebook
from grader.release import generate
from grader.tables import format_table
from grader.warm_kernels import FORK_SERVER, ForkedKernelManager, ForkServer, start_warm_process, worker_count

GRADEBOOK = threading.Lock()


@dataclass(frozen=True)
class Outcome:
    """What grading one submission came to."""

    student: str
    assignment: str
    status: str  # "ok" or "error: <reason>"
    score: float
    max_score: float
    fingerprint: str  # of the submitted files, so a resubmission is graded again


@dataclass(frozen=True)
class Plan:
    """The submissions of one assignment: those still to grade, and those graded before with the same files."""

    assignment: str
    students: list[str]
    pending: list[tuple[str, str]]  # (student, fingerprint)
    done: dict[str, Outcome]


def plan(assignment: str, work_dir: Path) -> Plan:
    """Find every submission under `work_dir`/submitted/<student>/<assignment>/ and what is left to grade.

    A submission counts as done when the ledger holds an outcome for exactly its current files, so an interrupted
    run can simply be started again, and a resubmission is graded again.
    """
    [assignment] = assignment_names([assignment])
    submitted = work_dir / "submitted"
    students = sorted(p.parent.name for p in submitted.glob(f"*/{assignment}") if p.is_dir())
    if not students:
        layout = f"<student>/{assignment}/*.ipynb"
        raise CourseError(f"{relative(submitted)}: no submission of {assignment} (expected {layout})")
    ledger = Ledger(work_dir / "grading_status" / assignment)
    pending, done = [], {}
    for student in students:
        fingerprint = _fingerprint(submitted / student / assignment)
        previous = ledger.read(student)
        if previous and previous.fingerprint == fingerprint:
            done[student] = previous
        else:
            pending.append((student, fingerprint))
    return Plan(assignment, students, pending, done)


def autograde(
    plan: Plan,
    work_dir: Path,
    db_url: str | None = None,
    workers: int | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    warm: ForkServer | None = None,
) -> list[Outcome]:
    """Grade the pending submissions of a plan; return one Outcome per student of the plan, sorted by student.

    `warm` is a fork server the caller started early (its imports then overlap with the caller's); by default one
    is started here and closed at the end.
    """
    assignment = plan.assignment
    ledger = Ledger(work_dir / "grading_status" / assignment)
    outcomes = dict(plan.done)
    if not plan.pending:
        return [outcomes[student] for student in plan.students]
    workers = worker_count(workers)
    # The warm process imports torch while the assignment is recorded.
    with _warm_kernels(work_dir, workers, warm), ThreadPoolExecutor(workers) as pool:
        with tempfile.TemporaryDirectory(prefix="grader-release-") as scratch:
            # Recording the assignment stores each graded cell, hidden tests included, in the gradebook.
            generate(assignment, nbgrader_config(work_dir=work_dir, release=Path(scratch), db_url=db_url))
        config = nbgrader_config(work_dir=work_dir, db_url=db_url)
        futures = [pool.submit(_grade, assignment, student, print_, config) for student, print_ in plan.pending]
        for future in as_completed(futures):
            outcome = future.result()
            ledger.write(outcome)
            outcomes[outcome.student] = outcome
            if on_outcome:
                on_outcome(outcome)
    return [outcomes[student] for student in plan.students]


def _grade(assignment: str, student: str, fingerprint: str, config) -> Outcome:
    """Run nbgrader's Autograde converter on one submission; a broken submission becomes an error outcome."""
    folder = Path(config.CourseDirectory.submitted_directory) / student / assignment
    problem = _unreadable_notebook(folder)
    if problem:
        return Outcome(student, assignment, f"error: {problem}", 0.0, 0.0, fingerprint)
    with GRADEBOOK:
        converter = ConcurrentAutograde(coursedir=CourseDirectory(config=config), config=config)
        converter.coursedir.assignment_id = assignment
        converter.coursedir.student_id = student
        converter.force = True
        converter.create_student = True
        with _errors_logged_by_this_thread() as errors:
            try:
                converter.start()
            except Exception as error:  # noqa: BLE001 - nbgrader reports any failure of one submission this way
                reason = errors[-1] if errors else str(error)
                return Outcome(student, assignment, f"error: {reason}", 0.0, 0.0, fingerprint)
        score, max_score = _recorded_total(config.CourseDirectory.db_url, assignment, student)
    return Outcome(student, assignment, "ok", score, max_score, fingerprint)


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


def _unreadable_notebook(folder: Path) -> str:
    """The first submitted notebook that is not a readable nbformat 4 notebook, described; '' if none."""
    for path in sorted(folder.glob("*.ipynb")):
        try:
            read_notebook(path)
        except CourseError as error:
            return str(error).split(": ", 1)[1]
    return ""


def _recorded_total(db_url: str, assignment: str, student: str) -> tuple[float, float]:
    with Gradebook(db_url) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return float(submission.score), float(submission.max_score)


def _fingerprint(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class Ledger:
    """One small JSON file per graded submission, written after its grades are in the gradebook."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def read(self, student: str) -> Outcome | None:
        path = self.folder / f"{student}.json"
        try:
            return Outcome(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def write(self, outcome: Outcome) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        scratch = self.folder / f".{outcome.student}.json.tmp"
        scratch.write_text(json.dumps(asdict(outcome)), encoding="utf-8")
        scratch.replace(self.folder / f"{outcome.student}.json")  # atomic: a kill never leaves half a record


@contextmanager
def _warm_kernels(work_dir: Path, workers: int, warm: ForkServer | None) -> Iterator[None]:
    """A fork server for this run, and the process settings nbgrader expects while it autogrades."""
    ready_nbgrader()
    server = warm or start_warm_process(work_dir, workers)
    saved_cwd = os.getcwd()
    FORK_SERVER.set(server)
    # nbgrader sets and unsets this around each notebook; set for the whole run, concurrent notebooks agree on it.
    try:
        with nbgrader_environment(NBGRADER_EXECUTION="autograde"):
            yield
    finally:
        FORK_SERVER.set(None)
        if warm is None:
            server.close()
        os.chdir(saved_cwd)  # nbgrader's converters chdir to the course root


class ConcurrentAutograde(Autograde):
    """nbgrader's Autograde for one submission among several graded at once, on a warm kernel."""

    @default("autograde_preprocessors")
    def _warm_preprocessors(self) -> list:
        stock = Autograde.class_traits()["autograde_preprocessors"].default()
        return [WarmExecute if step is Execute else step for step in stock]

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


class WarmExecute(Execute):
    """nbgrader's Execute on a forked warm kernel, letting other workers use the gradebook meanwhile."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", ForkedKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources=None, km=None):
        GRADEBOOK.release()
        try:
            return super().preprocess(nb, resources, km=km)
        finally:
            GRADEBOOK.acquire()


def outcome_table(outcomes: list[Outcome]) -> str:
    """The per-student summary printed at the end of a grading run."""
    rows = [("student", "assignment", "score", "status")]
    rows += [(o.student, o.assignment, f"{o.score:g} / {o.max_score:g}", o.status) for o in outcomes]
    failed = sum(o.status != "ok" for o in outcomes)
    return format_table(rows) + f"\ngraded {len(outcomes)} submission(s), {failed} with errors"
