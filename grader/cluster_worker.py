"""The worker's side of grading on a Dask cluster: a warm sandbox per worker, and one task per submission.

`WarmSandbox` is a Dask worker plugin: on each worker (those that join later, and one restarted after a crash,
included) it starts one grading sandbox (grader.sandbox) and keeps, per assignment, what grader.autograde.prepare
makes once: the course cells transformed, the assignment recorded in a gradebook of the worker's own, the solution's
trusted observations. `grade_submission` grades one submission exactly as a local run does (grader.autograde's
per-submission function, with its retries when the sandbox itself fails) in a scratch course folder of the worker,
and sends back a `Graded`: plain data, from which the coordinator records the grades in the real gradebook. The
task starts from a clean slate for its student each time, so running it again (Dask does when a worker is lost)
gives the same result.
"""

from __future__ import annotations

import shutil
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from distributed import Worker, WorkerPlugin, get_worker
from nbgrader.api import Gradebook, MissingEntry

from grader.autograde import ATTEMPTS, Outcome, _grade, _grading_run, _outcome_of, fingerprint, prepare
from grader.course import CourseError, exercises, solutions
from grader.nbgrader_steps import Grading
from grader.sandbox import Limits, SandboxFailure, start_sandbox

PLUGIN = "grader-warm-sandbox"


@dataclass(frozen=True)
class Submission:
    """A submission's files as the coordinator read them: regular files, and symbolic links (never followed)."""

    files: dict[str, bytes]  # path relative to the submission folder -> contents
    links: dict[str, str]  # path -> where the link points

    @classmethod
    def read(cls, folder: Path) -> Submission:
        paths = sorted(folder.rglob("*"))
        return cls(
            {p.relative_to(folder).as_posix(): p.read_bytes() for p in paths if p.is_file() and not p.is_symlink()},
            {p.relative_to(folder).as_posix(): str(p.readlink()) for p in paths if p.is_symlink()},
        )

    def write(self, folder: Path) -> None:
        for name, data in self.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        for name, target in self.links.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).symlink_to(target)


@dataclass(frozen=True)
class Graded:
    """What grading one submission on a worker came to, as plain data for the coordinator."""

    outcome: Outcome
    final: bool  # False when the grader, not the submission, failed: a later run grades it again
    timestamp: datetime | None  # the submission's, as nbgrader read it
    # {notebook: {grade id: automatic score}} and {notebook: {grade id: automatic comment}}, as nbgrader (and the
    # trusted check) recorded them; None where nbgrader recorded no submission (a notebook it could not read)
    scores: dict[str, dict[str, float | None]] | None
    comments: dict[str, dict[str, str | None]] | None
    autograded: Submission  # the autograded folder: the notebooks the Formgrader shows, sanitized


def course_digest(assignment: str) -> str:
    """A digest of what grading `assignment` depends on: its folder in solutions/ (the source notebook, its checks
    and its mistakes) and its release."""
    return "-".join([fingerprint(solutions() / assignment), fingerprint(exercises() / assignment)])


class WarmSandbox(WorkerPlugin):
    """One grading sandbox per Dask worker, started with the worker and closed with it."""

    name = PLUGIN

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def setup(self, worker: Worker) -> None:
        self.folder = Path(worker.local_directory) / "grader"
        shutil.rmtree(self.folder, ignore_errors=True)
        threads = worker.state.nthreads
        self._run = ExitStack()
        sandbox = start_sandbox(self.folder, threads, self.limits)
        self.sandbox = self._run.enter_context(_grading_run(self.folder, threads, sandbox))
        self._pool = self._run.enter_context(ThreadPoolExecutor(1))
        self._lock = threading.Lock()
        self.gradebook_lock = threading.Lock()  # the worker's gradebook: one task's reader or writer at a time
        self._prepared: dict[str, tuple] = {}

    def teardown(self, worker: Worker) -> None:
        self._run.close()
        self.sandbox.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def prepared(self, assignment: str, digest: str) -> tuple:
        """grader.autograde.prepare for `assignment`, once per worker; the worker's course must be the coordinator's."""
        with self._lock:
            if assignment not in self._prepared:
                if course_digest(assignment) != digest:
                    raise CourseError(f"{assignment}: this worker's course files differ from the coordinator's")
                self._prepared[assignment] = prepare(assignment, self.folder, None, self.sandbox, self._pool)
            return self._prepared[assignment]


def grade_submission(assignment: str, student: str, print_: str, submission: Submission, digest: str) -> Graded:
    """Grade one submission on this worker (a Dask task); the same result however often it runs."""
    plugin: WarmSandbox = get_worker().plugins[PLUGIN]
    config, released, checker = plugin.prepared(assignment, digest)
    course = config.CourseDirectory
    for folder in (Path(course.submitted_directory), Path(course.autograded_directory)):
        shutil.rmtree(folder / student / assignment, ignore_errors=True)
    _forget(course.db_url, assignment, student, plugin.gradebook_lock)
    submission.write(Path(course.submitted_directory) / student / assignment)
    for attempt in range(1, ATTEMPTS + 1):
        graded: Future = Future()
        try:
            grading = Grading(plugin.sandbox, checker=checker, gradebook_lock=plugin.gradebook_lock)
            graded.set_result(_grade(assignment, student, print_, config, grading, released))
        except Exception as error:  # noqa: BLE001 - judged by _outcome_of, as a local run judges it
            graded.set_exception(error)
        outcome, final = _outcome_of(graded, assignment, student, print_)  # not final: the coordinator records 0
        if final or attempt == ATTEMPTS:
            break
        if isinstance(graded.exception(), SandboxFailure):
            plugin.sandbox.restart(graded.exception().generation)
    autograded = Path(course.autograded_directory) / student / assignment
    recorded = _recorded(course.db_url, assignment, student, plugin.gradebook_lock)
    return Graded(outcome, final, *recorded, Submission.read(autograded))


def _forget(db_url: str, assignment: str, student: str, lock: threading.Lock) -> None:
    """Remove what an earlier run of this task recorded in the worker's gradebook (`lock`: the worker's)."""
    with lock, Gradebook(db_url) as gradebook:
        try:
            gradebook.remove_submission(assignment, student)
        except MissingEntry:
            pass


def _recorded(db_url: str, assignment: str, student: str, lock: threading.Lock) -> tuple:
    """The submission's timestamp, automatic scores and automatic comments in the worker's gradebook (`lock`: the
    worker's)."""
    with lock, Gradebook(db_url) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return None, None, None
        scores = {n.name: {g.name: g.auto_score for g in n.grades} for n in submission.notebooks}
        comments = {n.name: {c.name: c.auto_comment for c in n.comments} for n in submission.notebooks}
        return submission.timestamp, scores, comments
