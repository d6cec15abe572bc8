"""Shared fixtures: the real course, throw-away copies of it, a tiny toy course, and the grader CLI."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest

from grader.cli import main
from tests.postgres_server import Postgres, running_postgres

if TYPE_CHECKING:
    from grader.autograde import Outcome

REPO = Path(__file__).resolve().parent.parent


def representatives(values: list[str], kept: tuple[str, ...]) -> list:
    """`values` as pytest parameters, those not `kept` marked `sweep`: the same flow over every chapter, exercise or
    assignment, where `make test` runs the kept ones (chosen so every code path and feature the flow meets is among
    them) and `make test-all` runs all."""
    unknown = sorted(set(kept) - set(values))
    assert not unknown, f"representatives that are not among the values: {unknown}"
    return [pytest.param(value, marks=() if value in kept else pytest.mark.sweep) for value in values]


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def grader(*args: str, root: Path = REPO) -> Run:
    """`python -m grader ARGS` on the course at `root`, run in this process (nbgrader is imported once)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    saved = os.environ.get("GRADER_COURSE_ROOT")
    os.environ["GRADER_COURSE_ROOT"] = str(root)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            returncode = main(list(args))
    finally:
        if saved is None:
            del os.environ["GRADER_COURSE_ROOT"]
        else:
            os.environ["GRADER_COURSE_ROOT"] = saved
    return Run(returncode, stdout.getvalue(), stderr.getvalue())


def grader_process(*args: str, root: Path = REPO, timeout: float = 600) -> Run:
    """`python -m grader ARGS` as an instructor types it: a new process in the course directory."""
    env = dict(os.environ, GRADER_COURSE_ROOT=str(root), PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout
    )
    return Run(done.returncode, done.stdout, done.stderr)


def nbgrader_cell(kind: str, source: str, grade_id: str, points: float | None = None, **flags) -> nbformat.NotebookNode:
    """A code or markdown cell carrying nbgrader metadata (schema 3)."""
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    cell = make(source)
    meta = {
        "grade": False,
        "grade_id": grade_id,
        "locked": False,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    meta.update(flags)
    if points is not None:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta
    return cell


def toy_source_notebook() -> nbformat.NotebookNode:
    """A one-part exercise: `answer()` returns 42; a visible and a hidden test."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    notebook.cells = [
        nbgrader_cell("markdown", "Write `answer()`: it returns the int 42.", "intro", locked=True),
        nbgrader_cell(
            "code",
            "def answer():\n    ### BEGIN SOLUTION\n    return 6 * 7  # the secret\n    ### END SOLUTION",
            "answer",
            solution=True,
        ),
        nbgrader_cell(
            "code",
            'assert answer() == 42, "answer() should return 42"\n'
            "### BEGIN HIDDEN TESTS\nassert type(answer()) is int, 'hidden check on the type'\n### END HIDDEN TESTS",
            "test_answer",
            points=3,
            grade=True,
            locked=True,
        ),
    ]
    return notebook


@pytest.fixture
def toy_course(tmp_path: Path) -> Path:
    """A course root with one small assignment `extoy`, not yet released."""
    folder = tmp_path / "solutions" / "extoy"
    folder.mkdir(parents=True)
    nbformat.write(toy_source_notebook(), folder / "extoy.ipynb")
    (tmp_path / "exercises").mkdir()
    return tmp_path


@pytest.fixture
def course_copy(tmp_path: Path) -> Path:
    """A throw-away copy of the real course's solutions/ and exercises/."""
    for folder in ("solutions", "exercises"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    return tmp_path


TOY_CHECKS = '''"""Observers of the toy exercise: answer() called twice, its type (rule 1) and what it returns."""

from grader.observing import attempt, fixed, labelled


def observe_answer(ns: dict) -> dict:
    answer = ns.get("answer")
    return labelled(
        fixed(1, "the class of what answer() returns", lambda: type(answer()).__name__),
        fixed(2, "what answer() returns", lambda: attempt(answer)),
    )


OBSERVERS = {"test_answer": observe_answer}
CLAUSES = {"test_answer": {1: "an int", 2: "the answer to everything"}}
'''


@pytest.fixture
def toy_course_with_checks(toy_course: Path) -> Path:
    """The toy course with its exercise's checks and scripted mistakes beside the notebook."""
    (toy_course / "solutions/extoy/checks.py").write_text(TOY_CHECKS)
    (toy_course / "solutions/extoy/mistakes.py").write_text("ANSWERS = {}\nEXPECTED = {}\n")
    return toy_course


@dataclass
class GradedClass:
    assignment: str
    work_dir: Path
    expected: dict[str, dict[str, float]]
    outcomes: list[Outcome]
    filtered: str  # what a child of the sandbox that graded the class says of its syscall filter


# A child's filter mode, and what an unlisted call (add_key) gets.
FILTER_PROBE = """
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_refused = _libc.syscall(248, b"user", b"k", b"v", 1, -3) < 0 and ctypes.get_errno()
[line.split()[1] for line in open("/proc/self/status") if line.startswith("Seccomp:")] + [os.strerror(_refused)]
"""


@pytest.fixture(scope="session")
def graded_classes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], GradedClass]:
    """An assignment's sample class (grader.sample_class) autograded in a sandbox of two workers, once a session:
    tests/test_autograde.py grades two representatives' (every assignment's with the sweep), tests/test_check_hidden.py
    compares with ex01's. A test that changes the class's work folder puts it back as it found it."""
    from grader.autograde import autograde, plan
    from grader.sample_class import write_class
    from grader.sandbox import start_sandbox

    graded: dict[str, GradedClass] = {}

    def grade(assignment: str) -> GradedClass:
        if assignment not in graded:
            work_dir = tmp_path_factory.mktemp(assignment)
            expected = write_class(assignment, work_dir / "submitted")
            with start_sandbox(work_dir, 2) as sandbox:
                outcomes = autograde(plan(assignment, work_dir), work_dir, workers=2, sandbox=sandbox)
                with sandbox.child() as child:
                    outputs = child.run(FILTER_PROBE)["outputs"]
            filtered = next(o for o in outputs if o["output_type"] == "execute_result")["data"]["text/plain"]
            graded[assignment] = GradedClass(assignment, work_dir, expected, outcomes, filtered)
        return graded[assignment]

    return grade


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One real PostgreSQL server for the session (tests.postgres_server); each test makes its own database."""
    with running_postgres() as server:
        yield server
