"""Grading on a Dask cluster (`autograde --scheduler tcp://HOST:PORT`): the coordinator's side.

The coordinator sends one task per pending submission (its files, read here) to an existing dask.distributed
cluster; each worker grades it in its own warm sandbox (grader.cluster_worker). The coordinator alone writes:
the grades into the gradebook (SQLite or PostgreSQL), the autograded notebooks into work/autograded/, the ledger.
A worker that dies mid-run costs nothing: Dask runs its tasks again on another worker, and each result is recorded
once, as it arrives. Only this path imports Dask.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path

from distributed import Client, as_completed
from nbgrader.api import Gradebook
from traitlets.config import Config

from grader.autograde import Ledger, Outcome, Plan, _award_nothing, _outcome_of, record
from grader.cluster_worker import Graded, Submission, WarmSandbox, course_digest, grade_submission
from grader.course import CourseError, nbgrader_config
from grader.gradebook import add_student
from grader.nbgrader_setup import ready_nbgrader
from grader.release import recorded_release
from grader.sandbox import Limits

# Submissions sent ahead of their results. Their files wait in the scheduler's memory, so not the whole class at
# once; one coordinator feeds a few dozen worker cores (see benchmarks/cluster.py), far fewer than this keeps busy.
IN_FLIGHT = 256


@contextmanager
def cluster(scheduler: str, limits: Limits) -> Iterator[Client]:
    """A client of the scheduler at `scheduler`; each of its workers, now or later, keeps a warm sandbox."""
    try:
        client = Client(scheduler)
    except (OSError, ValueError) as error:
        raise CourseError(f"{scheduler}: no Dask scheduler answers there ({error})") from error
    with client:
        client.register_plugin(WarmSandbox(limits))
        yield client


def autograde_on_cluster(
    plan: Plan,
    work_dir: Path,
    client: Client,
    db_url: str | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """grader.autograde.autograde, with the submissions graded on the cluster of `client`; the same outcomes."""
    assignment = plan.assignment
    outcomes = dict(plan.done)
    if plan.pending:
        ready_nbgrader()
        recorded_release(assignment, work_dir, db_url)
        config = nbgrader_config(work_dir=work_dir, db_url=db_url)
        ledger = Ledger(work_dir / "grading_status" / assignment)
        digest = course_digest(assignment)
        waiting, finished = {}, as_completed()
        ahead = iter(plan.pending)

        def send(count: int) -> None:
            for student, print_ in itertools.islice(ahead, count):
                files = Submission.read(work_dir / "submitted" / student / assignment)
                key = f"grade-{assignment}-{student}-{print_[:16]}"
                future = client.submit(grade_submission, assignment, student, print_, files, digest, key=key)
                waiting[future] = student
                finished.add(future)

        send(IN_FLIGHT)
        for future in finished:
            send(1)
            student = waiting.pop(future)
            graded = _result(future, assignment, student)
            future.release()  # its result lives on a worker: let it go, so a lost worker never recomputes it
            outcome = _record(graded, config)
            if graded.final:
                record(ledger, outcome)
            outcomes[outcome.student] = outcome
            if on_outcome:
                on_outcome(outcome)
    return [outcomes[student] for student in plan.students]


def _result(future, assignment: str, student: str) -> Graded:
    """The task's result; a task that failed (its workers kept dying, say) is the grader's failure, not final."""
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - judged by _outcome_of, as a local run judges a failed grading
        failed: Future = Future()
        failed.set_exception(error)
        outcome, final = _outcome_of(failed, assignment, student, "")
        return Graded(outcome, final, None, None, None, Submission({}, {}))


def _record(graded: Graded, config: Config) -> Outcome:
    """Record a worker's grading in the gradebook and work/autograded/ as nbgrader's autograde records its own."""
    outcome, course = graded.outcome, config.CourseDirectory
    if graded.scores is not None:
        with Gradebook(course.db_url) as gradebook:
            add_student(gradebook, outcome.student)
            when = {"timestamp": graded.timestamp} if graded.timestamp else {}
            submission = gradebook.update_or_create_submission(outcome.assignment, outcome.student, **when)
            for notebook in submission.notebooks:
                scores, comments = graded.scores.get(notebook.name, {}), graded.comments.get(notebook.name, {})
                for grade in notebook.grades:  # a manual score someone gave meanwhile stays, as nbgrader keeps it
                    grade.auto_score = scores.get(grade.name)
                    grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
                for comment in notebook.comments:
                    comment.auto_comment = comments.get(comment.name)
            gradebook.db.commit()
    if not graded.final or graded.scores is None:  # nothing graded: a grade recorded before no longer counts
        _award_nothing(course.db_url, outcome.assignment, outcome.student)
    if graded.autograded.files:
        _replace(Path(course.autograded_directory) / outcome.student / outcome.assignment, graded.autograded)
    return outcome


def _replace(folder: Path, files: Submission) -> None:
    """Write `files` as `folder`, in place of what it held: the new folder is complete before the old goes."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    scratch.chmod(0o755)  # as nbgrader leaves it
    files.write(scratch)
    shutil.rmtree(folder, ignore_errors=True)
    scratch.rename(folder)
