"""Benchmark: stock `nbgrader autograde` against `python -m grader autograde` on the same synthetic class.

    .venv/bin/python benchmarks/autograde.py --students 24 [--assignment ex01_slots] [--workers N] [--profile]

Builds N submissions of one assignment (cycling through the sample class: full solutions, blanks and the scripted
typical mistakes), grades them with both tools in this run, checks that every graded cell got the same score from
both, and prints seconds per submission for each. The last line is `speedup: X.Xx`. With --profile it also prints
where the grader's time goes (wall time and CPU time of the coordinator, the warm server and its children).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.course import default_db_url
from grader.gradebook import cell_scores
from grader.sample_class import write_class

REPOSITORY = Path(__file__).resolve().parent.parent


def build_class(assignment: str, students: int, folder: Path) -> None:
    """N submissions named s001..sNNN, cycling through the sample class of the assignment."""
    samples = folder / "samples"
    write_class(assignment, samples)
    kinds = sorted(p.name for p in samples.iterdir())
    for index in range(students):
        source = samples / kinds[index % len(kinds)] / assignment
        shutil.copytree(source, folder / "class" / f"s{index + 1:03d}" / assignment)
    shutil.rmtree(samples)


def run_stock(assignment: str, work: Path) -> float:
    """nbgrader's own command line, as an instructor runs it: generate_assignment, then autograde (timed)."""
    settings = [
        f"--CourseDirectory.submitted_directory={work / 'submitted'}",
        f"--CourseDirectory.autograded_directory={work / 'autograded'}",
        f"--CourseDirectory.db_url={default_db_url(work)}",
    ]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    nbgrader = [sys.executable, "-m", "nbgrader"]
    release = f"--CourseDirectory.release_directory={work / 'release'}"
    subprocess.run(
        [*nbgrader, "generate_assignment", assignment, "--force", release, *settings],
        cwd=REPOSITORY,
        env=env,
        check=True,
        capture_output=True,
    )
    started = time.perf_counter()
    subprocess.run(
        [*nbgrader, "autograde", assignment, "--force", *settings],
        cwd=REPOSITORY,
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def run_ours(assignment: str, incoming: Path, work: Path, workers: int | None) -> float:
    """`python -m grader autograde` in a new process, from the incoming class folder (intake included)."""
    command = [
        sys.executable,
        "-m",
        "grader",
        "autograde",
        str(incoming),
        "--assignment",
        assignment,
        "--work",
        str(work),
    ]
    if workers:
        command += ["--workers", str(workers)]
    started = time.perf_counter()
    subprocess.run(command, cwd=REPOSITORY, check=True, capture_output=True)
    return time.perf_counter() - started


def profile_ours(assignment: str, incoming: Path, work: Path, workers: int | None) -> str:
    """Where a grading run's time goes: wall time, and CPU time of each process kind, from one in-process run."""
    from grader.autograde import autograde, plan
    from grader.intake import take_in
    from grader.sandbox import start_sandbox, worker_count

    workers = worker_count(workers)
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    with start_sandbox(work, workers) as sandbox:
        take_in(incoming, assignment, work / "submitted")
        todo = plan(assignment, work)
        outcomes = autograde(todo, work, workers=workers, sandbox=sandbox)
        imports, kernels = sandbox.cpu_seconds()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    coordinator = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    total = coordinator + imports + kernels
    count = len(outcomes)
    return "\n".join(
        [
            f"profile of one in-process run ({count} submissions, {workers} workers, {os.cpu_count()} cores):",
            f"  wall {wall:.1f} s; CPU {total:.1f} s in all, so at least {total / (os.cpu_count() or 1):.1f} s of wall",
            f"  sandboxed children (notebook cells, trusted checks): {kernels:6.1f} s CPU  "
            f"{kernels / count:5.2f} s/submission",
            f"  coordinator (nbgrader converters, gradebook, comparisons): {coordinator:6.1f} s CPU  "
            f"{coordinator / count:5.2f} s/submission",
            f"  warm server (importing torch once, forking): {imports:6.1f} s CPU",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--assignment", default="ex01_slots")
    parser.add_argument("--workers", type=int, help="for the grader (default: number of cores)")
    parser.add_argument("--profile", action="store_true", help="also profile a third, in-process grader run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as scratch:
        root = Path(scratch)
        build_class(args.assignment, args.students, root)
        stock_work, our_work = root / "stock", root / "ours"
        shutil.copytree(root / "class", stock_work / "submitted")
        print(f"{args.students} submissions of {args.assignment}, {os.cpu_count()} cores")
        stock = run_stock(args.assignment, stock_work)
        print(f"stock nbgrader autograde: {stock:7.1f} s  {stock / args.students:6.2f} s/submission")
        ours = run_ours(args.assignment, root / "class", our_work, args.workers)
        print(f"python -m grader autograde: {ours:5.1f} s  {ours / args.students:6.2f} s/submission")
        stock_scores = cell_scores(default_db_url(stock_work))
        our_scores = cell_scores(default_db_url(our_work))
        if stock_scores != our_scores or len(our_scores) != args.students:
            differing = sorted(
                s for s in set(stock_scores) | set(our_scores) if stock_scores.get(s) != our_scores.get(s)
            )
            print(f"scores differ for {len(differing)} submission(s): {differing[:10]}")
            return 1
        cells = sum(len(c) for per_assignment in our_scores.values() for c in per_assignment.values())
        print(f"identical scores: {len(our_scores)} submissions, {cells} graded cells")
        if args.profile:
            print(profile_ours(args.assignment, root / "class", root / "profiled", args.workers))
        print(f"speedup: {stock / ours:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
