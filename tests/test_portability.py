"""The course grades the same whatever CPU kernels torch picks and however many threads it runs.

torch picks its CPU kernels by the machine (ATEN_CPU_CAPABILITY=default|avx2|avx512 forces one) and their float
results differ in the last bits: the solution's observations of six of the eight assignments differ in 90 to 1,050
floats between `default` on one thread and `avx2` on two. Here the solution's observations are computed under one
kernel choice and one thread, every scripted student is observed under another and two threads, and each earns
exactly the points mistakes.py expects; `release --check` and `validate` pass under a forced kernel choice.

The suite checks two assignments under the two kernel choices of every x86-64 machine (`default`, `avx2`);
`make portability` (GRADER_PORTABILITY=all) checks every assignment under every pair of kernel choices this machine
runs.
"""

from __future__ import annotations

import functools
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.notebooks import assignment_notebooks, read_notebook
from grader.release import fresh_release
from grader.sample_class import scripted_assignments, scripted_students, solution_answers, submission
from grader.sandbox import Sandbox
from grader.trusted import TrustedChecker, cells_to_run
from tests.conftest import REPO, grader_process

EVERYTHING = os.environ.get("GRADER_PORTABILITY") == "all"
KERNELS = ("default", "avx2", "avx512")


@functools.cache
def runnable_kernels() -> list[str]:
    """The kernel choices this CPU runs (a forced avx512 dies of an illegal instruction where it lacks AVX-512)."""
    probe = "import torch; torch.randn(64, 64).exp().sum().item()"
    return [
        kernel
        for kernel in KERNELS
        if subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, ATEN_CPU_CAPABILITY=kernel)).returncode
        == 0
    ]


def kernel_pairs() -> list[tuple[str, str]]:
    if EVERYTHING:
        return list(itertools.permutations(runnable_kernels(), 2))
    return [("default", "avx2")]


ASSIGNMENTS = scripted_assignments() if EVERYTHING else ["ex05_hooks", "ex08_calls_and_swaps"]


def _sandbox(run_dir: Path, kernel: str, threads: int, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """A sandbox whose server and children use this kernel choice (the sandbox passes ATEN_CPU_CAPABILITY on)."""
    with monkeypatch.context() as patched:
        patched.setenv("ATEN_CPU_CAPABILITY", kernel)
        return Sandbox(run_dir / "sandbox", threads)


@pytest.mark.parametrize(("reference_kernel", "student_kernel"), kernel_pairs())
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_scripted_student_scores_the_same_on_other_kernels(
    assignment: str, reference_kernel: str, student_kernel: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not {reference_kernel, student_kernel} <= set(runnable_kernels()):
        pytest.skip(f"this CPU runs only {runnable_kernels()}")
    [path] = assignment_notebooks(REPO / "solutions" / assignment)
    release = fresh_release(assignment)[path.name]
    answers, expected = scripted_students(assignment)
    students = {"full": solution_answers(read_notebook(path)), **answers}
    with (
        _sandbox(tmp_path / "reference", reference_kernel, 1, monkeypatch) as one,
        _sandbox(tmp_path / "students", student_kernel, 2, monkeypatch) as other,
    ):
        reference, observer = TrustedChecker(assignment, one), TrustedChecker(assignment, other)
        for checker in (reference, observer):
            checker.warm_sandbox()
        # the two machines really differ: the solution's own observations are not equal float for float
        assert reference.reference() != observer.reference()
        expected["full"] = reference.test_points
        for student, cells in students.items():
            verdict = reference.verdict(*observer.observe(cells_to_run(submission(release, cells))))
            assert verdict.points == {cell: float(points) for cell, points in expected[student].items()}, (
                f"{student}: {verdict.reasons}"
            )


@pytest.mark.parametrize("kernel", KERNELS if EVERYTHING else ("default",))
def test_release_check_and_validate_pass_under_a_forced_kernel(kernel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The native kernel choice is the rest of the suite's (tests/test_release.py, tests/test_validate.py)."""
    if kernel not in runnable_kernels():
        pytest.skip(f"this CPU runs only {runnable_kernels()}")
    chosen = [] if EVERYTHING else ["ex08_calls_and_swaps"]
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", kernel)  # the grader's process, its kernels and its sandbox
    check = grader_process("release", "--check", *chosen)
    validate = grader_process("validate", *chosen)
    assert check.returncode == 0, check.stdout + check.stderr
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert validate.stdout.splitlines()[-1].endswith("graded cells as expected")
