"""Round three's classes (tests/integrity/vectors.py, 24: kernel objects, namespaces, what a child sees of the others,
output metadata and attachments, honest screenshots and outputs, long ids) on the two other ways a submission is
graded: the Formgrader's regrade (nbgrader's own Autograde, every notebook in one process, a sandbox per notebook:
the way its Autograde button grades) and a Dask worker (`autograde --scheduler`). Judged as the integrity suite
judges the local batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.course import default_db_url
from grader.gradebook import cell_scores
from grader.intake import take_in
from grader.nbgrader_setup import ready_nbgrader
from grader.release import recorded_release
from tests.integrity import suite
from tests.integrity.vectors import ASSIGNMENT, HONEST, LONG_BUT_VALID, NOTEBOOK, REPO, VECTORS, Course, Evidence

ROUND_THREE = [vector for vector in VECTORS if vector.number == 24]
# Its honest students: the pasted screenshots, the unusual outputs and the longest valid id.
HONEST_HERE = {student: HONEST[student] for student in ("pasted_screenshot", "unusual_outputs", LONG_BUT_VALID)}

# A notebook costs the Formgrader's path a sandbox of its own (seconds each): one or two vectors per class there, the
# keyrings' planter and harvester together (its sandboxes once numbered their uids from one base).
ON_THE_FORMGRADER = ("24a", "24b", "24c", "24d", "24f", "24h", "24i")
# On a worker, the same and the review's long id (intake and the ledger are the coordinator's, as in a local run).
ON_A_WORKER = (*ON_THE_FORMGRADER, "24j")

pytestmark = pytest.mark.skipif(bool(suite.cannot_confine()), reason=suite.cannot_confine() or "confined")


def test_the_formgrader_regrade_path(tmp_path: Path) -> None:
    """Every notebook regraded by nbgrader's Autograde in one process: the attacks earn nothing undeserved and are
    stopped, the honest students keep exactly their points. (Ids past intake's limit never reach the Formgrader.)"""
    course = Course.load()
    batch = suite.Batch("formgrader", tmp_path, {})
    suite.build(course, batch, [v for v in ROUND_THREE if v.key in ON_THE_FORMGRADER], HONEST_HERE, "honest")
    work = batch.work_dir
    take_in(batch.submissions, ASSIGNMENT, work / "submitted")
    ready_nbgrader()
    recorded_release(ASSIGNMENT, work)
    nbgrader = Path(sys.executable).with_name("nbgrader")
    folders = [f"--CourseDirectory.{name}_directory={work / name}" for name in ("submitted", "autograded", "feedback")]
    regraded = subprocess.run(
        [str(nbgrader), "autograde", ASSIGNMENT, "--force", f"--CourseDirectory.db_url={default_db_url(work)}"]
        + folders,
        cwd=REPO,
        env=dict(os.environ, PATH=f"{nbgrader.parent}{os.pathsep}{os.environ['PATH']}"),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert regraded.returncode == 0, regraded.stdout[-2000:] + regraded.stderr[-2000:]
    scores = cell_scores(default_db_url(work))
    problems = {}
    for student, judgement in batch.judgements.items():
        recorded = {g: scores.get(student, {}).get(ASSIGNMENT, {}).get(g, 0.0) for g in course.points}
        due = judgement.deserved
        honest = judgement.vector is None
        found = [
            f"{g}: {recorded[g]:g}, deserved {due[g]:g}"
            for g in course.points
            if recorded[g] > due[g] or (honest and recorded[g] != due[g])
        ]
        path = work / "autograded" / student / ASSIGNMENT / NOTEBOOK
        notebook = nbformat.read(path, as_version=4) if path.is_file() else None
        if judgement.vector is not None and judgement.vector.check is not None:
            found += judgement.vector.check(Evidence(notebook, tmp_path), course)
        if found:
            problems[student] = found
    assert problems == {}
    assert set(scores) == set(batch.judgements)


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def test_a_dask_worker(scheduler: str, tmp_path: Path) -> None:
    """The round on two Dask workers, the review's long id included: judged exactly as the local batch."""
    course = Course.load()
    batch = suite.Batch("dask", tmp_path, {})
    suite.build(course, batch, [v for v in ROUND_THREE if v.key in ON_A_WORKER], HONEST_HERE, "honest")
    sent = {
        student: suite.taken_in_fingerprint(batch.submissions / student / ASSIGNMENT) for student in batch.judgements
    }
    suite.grade(batch, "--scheduler", scheduler)
    suite.judge(batch, course, tmp_path, sent)
    assert batch.problems == []
    assert {s: j.problems for s, j in batch.judgements.items() if j.problems} == {}
