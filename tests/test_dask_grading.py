"""`autograde --scheduler` on a real dask.distributed LocalCluster (two worker processes over loopback) into a real
PostgreSQL gradebook: the same per-cell scores and statuses as a local run, and a worker killed mid-run costs
nothing."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from grader.course import default_db_url
from grader.gradebook import cell_scores
from grader.nbgrader_setup import ready_nbgrader
from grader.sample_class import write_class
from tests.conftest import REPO, grader
from tests.postgres_server import Postgres

ASSIGNMENT = "ex01_slots"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A LocalCluster of two single-threaded worker processes (each restarted by its nanny if it dies)."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def sample_class(folder: Path, size: int) -> dict[str, dict[str, float]]:
    expected = write_class(ASSIGNMENT, folder)
    for student in sorted(expected)[size:]:
        shutil.rmtree(folder / student)
        del expected[student]
    return expected


def summary(stdout: str) -> list[str]:
    """The summary table a run ends with."""
    return [line for line in stdout.splitlines() if line.strip()]


def test_the_cluster_grades_exactly_as_a_local_run(
    scheduler: str, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample_class(tmp_path / "in", 5)
    broken = tmp_path / "in" / "zz_broken" / ASSIGNMENT
    broken.mkdir(parents=True)
    (broken / f"{ASSIGNMENT}.ipynb").write_text('{"cells": [')
    local_work, cluster_work = tmp_path / "local", tmp_path / "cluster"
    local = subprocess.run(  # `-X importtime` lists every module the local run imports
        [sys.executable, "-X", "importtime", "-m", "grader", "autograde", str(tmp_path / "in")]
        + ["--work", str(local_work), "--workers", "2"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
    )
    assert local.returncode == 0, local.stderr
    imported = {line.split("|")[-1].strip() for line in local.stderr.splitlines() if line.startswith("import time:")}
    assert "grader.autograde" in imported and not {"dask", "distributed"} & imported

    url = postgres.new_database("cluster")
    monkeypatch.setattr("grader.cluster.IN_FLIGHT", 2)  # sent two at a time, the next as each result comes in
    on_cluster = grader(
        "autograde", str(tmp_path / "in"), "--work", str(cluster_work), "--db", url, "--scheduler", scheduler
    )
    assert on_cluster.returncode == 0, on_cluster.stderr
    assert summary(on_cluster.stdout) == summary(local.stdout)
    assert "zz_broken" in on_cluster.stdout and "error: not valid JSON" in on_cluster.stdout
    assert cell_scores(url) == cell_scores(default_db_url(local_work))
    local_files, cluster_files = (
        {p.relative_to(w): p.read_bytes() for p in (w / "autograded").rglob("*") if p.is_file()}
        for w in (local_work, cluster_work)
    )
    assert len([p for p in local_files if p.suffix == ".ipynb"]) == 5
    assert cluster_files == local_files, "the autograded notebooks the Formgrader shows must be the same, byte for byte"
    again = grader(
        "autograde", str(tmp_path / "in"), "--work", str(cluster_work), "--db", url, "--scheduler", scheduler
    )
    assert f"{ASSIGNMENT}: 5 submission(s) already graded with the same files" in again.stderr


def test_a_worker_killed_mid_run_costs_nothing(scheduler: str, postgres: Postgres, tmp_path: Path) -> None:
    from distributed import Client

    expected = sample_class(tmp_path / "in", 8)
    url, work = postgres.new_database("killed"), tmp_path / "work"
    ledger = work / "grading_status" / ASSIGNMENT
    run = subprocess.Popen(
        [sys.executable, "-m", "grader", "autograde", str(tmp_path / "in")]
        + ["--work", str(work), "--db", url, "--scheduler", scheduler],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with Client(scheduler) as client:
        deadline = time.monotonic() + 300
        while True:  # a worker in the middle of a submission, after the first results are in
            assert run.poll() is None, "the run ended before a worker could be killed"
            assert time.monotonic() < deadline, "no submission was graded within 300 s"
            busy = [worker for worker, keys in client.processing().items() if keys]
            if busy and len(list(ledger.glob("*.json"))) >= 2:
                break
            time.sleep(0.1)
        victim = busy[0]
        cut_short = client.processing()[victim]
        os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
        stdout, stderr = run.communicate(timeout=600)
        client.wait_for_workers(2, timeout=120)  # its nanny starts a new one: the cluster is whole again
        for key in cut_short:  # the scheduler took each of its submissions back, and it was graded again
            moves = [(event[2], event[3], event[5]) for event in client.story(key) if event[0] == "scheduler"]
            lost = [i for i, (start, _, why) in enumerate(moves) if start == "processing" and "worker-cleanup" in why]
            assert lost, moves
            assert [move[:2] for move in moves[lost[0] :]].count(("processing", "memory")) == 1, moves
    assert run.returncode == 0, stderr
    assert stdout.splitlines()[-1] == f"graded {len(expected)} submission(s), 0 with errors, 0 flagged"
    assert f"{ASSIGNMENT} [{'#' * 30}] {len(expected)}/{len(expected)} " in stderr  # each recorded once
    assert {student: cells[ASSIGNMENT] for student, cells in cell_scores(url).items()} == expected
    assert sorted(p.stem for p in ledger.glob("*.json")) == sorted(expected)
    ready_nbgrader()
    with Gradebook(url) as gradebook:
        submissions = gradebook.assignment_submissions(ASSIGNMENT)
        assert sorted(s.student.id for s in submissions) == sorted(expected)
        cells = sum(len(notebook.grades) for s in submissions for notebook in s.notebooks)
        assert cells == sum(len(points) for points in expected.values())


def test_a_scheduler_that_does_not_answer_is_one_error_line(tmp_path: Path) -> None:
    import dask

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        run = grader("autograde", str(tmp_path), "--work", str(tmp_path / "work"), "--scheduler", address)
    assert run.returncode == 1
    assert run.stderr.startswith(f"error: {address}: no Dask scheduler answers there (")
    assert len(run.stderr.splitlines()) == 1, run.stderr


def test_workers_whose_course_differs_grade_nothing(scheduler: str, course_copy: Path, tmp_path: Path) -> None:
    source = course_copy / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source.write_bytes(source.read_bytes() + b"\n")  # the coordinator's course is no longer the workers'
    expected = sample_class(tmp_path / "in", 2)
    work = tmp_path / "work"
    run = grader("autograde", str(tmp_path / "in"), "--work", str(work), "--scheduler", scheduler, root=course_copy)
    assert run.returncode == 0, run.stderr
    refused = "(CourseError: ex01_slots: this worker's course files differ from the coordinator's)"
    rows = [line for line in summary(run.stdout) if line.split()[0] in expected]
    assert len(rows) == 2 and all(row.endswith(refused) for row in rows), run.stdout
    assert not list((work / "grading_status" / ASSIGNMENT).glob("*.json")), "a refused submission is graded next run"
