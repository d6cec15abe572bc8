"""Benchmark: one class graded on this machine and on a Dask cluster, and what the coordinator spends per submission.

    .venv/bin/python benchmarks/cluster.py --students 24 [--assignment ex01_slots] [--cluster-workers 2]

Builds N submissions (as benchmarks/autograde.py does), grades them with `python -m grader autograde` on this
machine, then starts a scheduler and single-threaded workers by hand on 127.0.0.1 (`dask scheduler`, `dask worker`,
as docs/grading-at-scale.md shows) and grades the same class on them from this process, the coordinator. Checks
that every graded cell got the same score both ways, and prints seconds per submission for each, the coordinator's
CPU time per submission (this process's, Dask's client threads included), the submissions per second one
coordinator can therefore sustain, and how many workers that feeds at the workers' measured pace.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autograde import REPOSITORY, build_class, run_ours  # noqa: E402

from grader.course import default_db_url  # noqa: E402
from grader.gradebook import cell_scores  # noqa: E402


def start_cluster(workers: int, folder: Path) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and `workers` single-threaded worker processes on loopback; its address, and the processes."""
    dask = Path(sys.executable).parent / "dask"
    env = dict(os.environ, PYTHONPATH=str(REPOSITORY))
    spec, log = folder / "scheduler.json", (folder / "cluster.log").open("w")
    listen = ["--host", "127.0.0.1", "--no-dashboard"]
    processes = [
        subprocess.Popen([dask, "scheduler", *listen, "--port", "0", "--scheduler-file", spec], env=env, stderr=log)
    ]
    while not spec.exists():
        time.sleep(0.2)
    worker = [dask, "worker", "--scheduler-file", spec, "--nthreads", "1", "--nworkers", str(workers), *listen]
    processes.append(subprocess.Popen(worker, cwd=REPOSITORY, env=env, stderr=log))
    from distributed import Client

    with Client(scheduler_file=str(spec)) as client:
        client.wait_for_workers(workers, timeout=120)
        return client.scheduler.address, processes


def run_on_cluster(assignment: str, incoming: Path, work: Path, address: str) -> tuple[float, float, int]:
    """Grade the class from this process on the cluster: wall seconds, this process's CPU seconds, submissions."""
    from grader.autograde import plan
    from grader.cluster import autograde_on_cluster, cluster
    from grader.intake import take_in
    from grader.sandbox import Limits

    with cluster(address, Limits()) as client:
        started, cpu = time.perf_counter(), time.process_time()
        take_in(incoming, assignment, work / "submitted")
        outcomes = autograde_on_cluster(plan(assignment, work), work, client)
        return time.perf_counter() - started, time.process_time() - cpu, len(outcomes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--assignment", default="ex01_slots")
    parser.add_argument("--cluster-workers", type=int, default=2, help="single-threaded worker processes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as scratch:
        root = Path(scratch)
        build_class(args.assignment, args.students, root)
        print(f"{args.students} submissions of {args.assignment}, {os.cpu_count()} cores")
        local = run_ours(args.assignment, root / "class", root / "local", None)
        print(f"this machine (--workers {os.cpu_count()}):   {local:6.1f} s  {local / args.students:5.2f} s/submission")
        address, processes = start_cluster(args.cluster_workers, root)
        try:
            wall, cpu, count = run_on_cluster(args.assignment, root / "class", root / "cluster", address)
        finally:
            for process in reversed(processes):
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
        print(f"{args.cluster_workers}-worker Dask cluster:       {wall:6.1f} s  {wall / count:5.2f} s/submission")
        if cell_scores(default_db_url(root / "local")) != cell_scores(default_db_url(root / "cluster")):
            print("scores differ between the two runs")
            return 1
        print(f"identical scores: {count} submissions")
        per_submission = cpu / count
        worker_seconds = wall * args.cluster_workers / count  # one worker's seconds per submission, start-up included
        print(f"coordinator CPU: {cpu:.1f} s, {per_submission:.3f} s/submission")
        print(f"one coordinator sustains about {1 / per_submission:.0f} submissions/s")
        print(
            f"at {worker_seconds:.1f} s per submission per worker, that feeds about "
            f"{worker_seconds / per_submission:.0f} single-threaded workers"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
