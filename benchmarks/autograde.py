"""Benchmark: stock `nbgrader autograde` against `python -m grader autograde` on the same synthetic class.

    .venv/bin/python benchmarks/autograde.py --students 24 [--assignment ex01_slots | all] [--workers N] [--profile]

For each assignment (all: every one in solutions/), builds N submissions (cycling through the sample class: full
solutions, blanks and the scripted typical mistakes), grades them with both tools in this run, checks that every
graded cell got the same score from both, and prints one row: seconds per submission for each, the speedup, and the
floor: the CPU seconds per submission of running the student's cells and the exercise's checks once, in this warm
process, without a sandbox, nbgrader or a gradebook (and how many times that ours takes). The last line is
`speedup: X.Xx`, the smallest of the rows. With --profile it also prints where the grader's time goes (wall time
and CPU time of the coordinator, the warm server and its children).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nbgrader.converters import Autograde

from grader import observing
from grader.course import assignment_names, checks_file, default_db_url, relative
from grader.gradebook import cell_scores
from grader.notebooks import nbgrader_cells, read_notebook
from grader.sample_class import write_class
from grader.trusted import must_not_rules

REPOSITORY = Path(__file__).resolve().parent.parent


def build_class(assignment: str, students: int, folder: Path) -> dict[str, dict[str, float]]:
    """N submissions named s001..sNNN, cycling through the sample class of the assignment; the points each must
    earn, per graded cell."""
    samples = folder / "samples"
    expected = write_class(assignment, samples)
    kinds = sorted(p.name for p in samples.iterdir())
    deserved = {}
    for index in range(students):
        kind, student = kinds[index % len(kinds)], f"s{index + 1:03d}"
        shutil.copytree(samples / kind / assignment, folder / "class" / student / assignment)
        deserved[student] = expected[kind]
    shutil.rmtree(samples)
    return deserved


def stock_cannot_grade(assignment: str) -> set[str]:
    """The test cells a part's "must not" rule takes from a shortcut (the checks' MUST_NOT): stock nbgrader runs only
    the notebook's asserts in its visible cells, and its hidden tests in the student's kernel, without the sandbox's
    guard (grader/inside_sandbox/guard.py), which alone sees some shortcuts (a thread, a process, code made at run
    time)."""
    rules = must_not_rules(checks_file(assignment).read_text(encoding="utf-8"))
    return {cell for hidden, (_, others) in rules.items() for cell in (hidden, *others)}


def differing(stock: dict, ours: dict, deserved: dict, assignment: str) -> list[str]:
    """The submissions where ours did not give what mistakes.py expects, or stock and ours disagree beyond the cells
    only the grader can take (stock_cannot_grade, where ours gave the expected 0)."""
    exempt = stock_cannot_grade(assignment)
    wrong = []
    for student, points in deserved.items():
        mine, theirs = ours.get(student, {}).get(assignment), stock.get(student, {}).get(assignment)
        if mine != points or theirs is None or set(theirs) != set(mine):
            wrong.append(student)
        elif any(theirs[c] != mine[c] and not (c in exempt and mine[c] == 0) for c in mine):
            wrong.append(student)
    return wrong


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
    # nbgrader's own steps: the course configuration names the grader's sandboxed ones (grader/nbgrader_steps.py).
    stock = Autograde.class_traits()["autograde_preprocessors"].default()
    steps = [f"--Autograde.autograde_preprocessors={step.__module__}.{step.__name__}" for step in stock]
    started = time.perf_counter()
    subprocess.run(
        [*nbgrader, "autograde", assignment, "--force", *settings, *steps],
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


def floor_seconds(assignment: str, incoming: Path) -> float:
    """CPU seconds per submission of the work that cannot be avoided: each submission's non-test cells and every
    observer of the exercise's checks, run once in this process (torch already imported, a first run to warm up)."""
    checks = observing.load_checks(
        observing, checks_file(assignment).read_text(encoding="utf-8"), relative(checks_file(assignment))
    )
    notebooks = sorted(incoming.glob(f"*/{assignment}/*.ipynb"))

    def run(path: Path) -> None:
        notebook = read_notebook(path)
        graded = nbgrader_cells(notebook)
        tests = {number for number, _, meta in graded if meta.get("grade") and not meta.get("solution")}
        namespace: dict = {"__name__": "__main__"}
        for number, cell in enumerate(notebook.cells, start=1):
            if cell.cell_type == "code" and number not in tests:
                try:
                    exec(compile(cell.source, str(path), "exec"), namespace)
                except Exception:  # noqa: BLE001 - a wrong answer fails as it would in a kernel
                    continue
        for observe in checks.OBSERVERS.values():
            observing.as_sent(observe(namespace))

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        run(notebooks[0])
        started = time.process_time()
        for path in notebooks:
            run(path)
        return (time.process_time() - started) / len(notebooks)


def compare(assignment: str, students: int, workers: int | None, profile: bool) -> float | None:
    """Grade one synthetic class with both tools and print its row; the speedup, or None if the scores differ."""
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as scratch:
        root = Path(scratch)
        deserved = build_class(assignment, students, root)
        stock_work, our_work = root / "stock", root / "ours"
        shutil.copytree(root / "class", stock_work / "submitted")
        stock = run_stock(assignment, stock_work) / students
        ours = run_ours(assignment, root / "class", our_work, workers) / students
        floor = floor_seconds(assignment, root / "class")
        stock_scores = cell_scores(default_db_url(stock_work))
        our_scores = cell_scores(default_db_url(our_work))
        wrong = differing(stock_scores, our_scores, deserved, assignment)
        if wrong:
            print(f"{assignment}: scores differ for {len(wrong)} submission(s): {wrong[:10]}")
            return None
        cells = sum(len(c) for per_assignment in our_scores.values() for c in per_assignment.values())
        exempt = sum(
            stock_scores[s][assignment][c] != our_scores[s][assignment][c]
            for s in deserved
            for c in our_scores[s][assignment]
        )
        print(
            f"{assignment:<18} {stock:8.2f} {ours:8.2f} {stock / ours:7.1f}x {floor:8.3f} {ours / floor:7.1f}x"
            f"   identical scores on {cells - exempt} graded cells, as expected on all {cells}"
            + (f" ({exempt} cells only a must-not rule takes)" if exempt else "")
        )
        if profile:
            print(profile_ours(assignment, root / "class", root / "profiled", workers))
        return stock / ours


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--assignment", default="ex01_slots", help="an assignment, or all")
    parser.add_argument("--workers", type=int, help="for the grader (default: number of cores)")
    parser.add_argument("--profile", action="store_true", help="also profile a third, in-process grader run")
    args = parser.parse_args()
    assignments = assignment_names() if args.assignment == "all" else assignment_names([args.assignment])
    print(f"{args.students} submissions per assignment, {os.cpu_count()} cores; seconds per submission")
    print(f"{'assignment':<18} {'stock':>8} {'ours':>8} {'speedup':>8} {'floor':>8} {'ours/floor':>8}")
    speedups = [compare(name, args.students, args.workers, args.profile) for name in assignments]
    if None in speedups:
        return 1
    print(f"speedup: {min(speedups):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
