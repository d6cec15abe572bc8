"""`python -m grader release [--check]`: solutions/ -> exercises/, current and leak-free."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from tests.conftest import grader, nbgrader_cell

RELEASED = Path("exercises/extoy/extoy.ipynb")


def _released_course(toy_course: Path) -> Path:
    run = grader("release", root=toy_course)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "released exercises/extoy"
    return toy_course


def test_release_clears_solutions_and_hidden_tests(toy_course: Path) -> None:
    course = _released_course(toy_course)
    sources = [cell.source for cell in nbformat.read(course / RELEASED, as_version=4).cells]
    assert "raise NotImplementedError()" in sources[1]
    assert "the secret" not in "".join(sources)
    assert sources[2] == 'assert answer() == 42, "answer() should return 42"'


def test_release_writes_nothing_else_into_the_course(toy_course: Path) -> None:
    course = _released_course(toy_course)
    files = sorted(str(p.relative_to(course)) for p in course.rglob("*") if p.is_file())
    # SQLite's write-ahead log and its index sit beside the gradebook while it is open.
    gradebook = [name for name in files if name.startswith("work/gradebook.db")]
    assert set(gradebook) <= {"work/gradebook.db", "work/gradebook.db-wal", "work/gradebook.db-shm"}
    assert [name for name in files if name not in gradebook] == [
        "exercises/extoy/extoy.ipynb",
        "solutions/extoy/extoy.ipynb",
    ] and "work/gradebook.db" in gradebook


def test_check_passes_on_a_fresh_release(toy_course: Path) -> None:
    course = _released_course(toy_course)
    run = grader("release", "--check", root=course)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "release check: exercises/ is current, no leaks"


def test_check_names_a_stale_cell(toy_course: Path) -> None:
    course = _released_course(toy_course)
    source = course / "solutions/extoy/extoy.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[2].source = notebook.cells[2].source.replace("should return 42", "must return 42")
    nbformat.write(notebook, source)
    run = grader("release", "--check", root=course)
    assert run.returncode == 1
    assert (
        "exercises/extoy/extoy.ipynb: stale: cell 3 (test_answer) differs from what solutions/ generates" in run.stdout
    )


def test_check_names_missing_and_unexpected_files(toy_course: Path) -> None:
    course = _released_course(toy_course)
    (course / "exercises/extoy/notes.txt").write_text("hand-made\n")
    (course / "exercises/exgone").mkdir()
    run = grader("release", "--check", root=course)
    assert run.returncode == 1
    assert "exercises/extoy/notes.txt: not generated from solutions/" in run.stdout
    assert "exercises/exgone: no assignment of that name in solutions" in run.stdout
    (course / RELEASED).unlink()
    run = grader("release", "--check", root=course)
    assert "exercises/extoy/extoy.ipynb: missing from the release" in run.stdout


def test_check_names_a_leaked_solution_line(toy_course: Path) -> None:
    course = _released_course(toy_course)
    notebook = nbformat.read(course / RELEASED, as_version=4)
    notebook.cells[1].source += "\n    return 6 * 7  # the secret"
    nbformat.write(notebook, course / RELEASED)
    run = grader("release", "--check", root=course)
    assert run.returncode == 1
    assert (
        "exercises/extoy/extoy.ipynb: cell 2 (answer) leaks a line of solutions/extoy/extoy.ipynb "
        "cell 2 (answer) solution block: 'return 6 * 7  # the secret'"
    ) in run.stdout


def test_check_finds_a_hidden_test_leaked_into_any_file(toy_course: Path) -> None:
    course = _released_course(toy_course)
    (course / "exercises/extoy/hint.py").write_text("assert type(answer()) is int, 'hidden check on the type'\n")
    run = grader("release", "--check", root=course)
    assert run.returncode == 1
    assert (
        "exercises/extoy/hint.py: file leaks a line of solutions/extoy/extoy.ipynb cell 3 (test_answer) " in run.stdout
    )


def test_check_finds_a_leak_in_an_output(toy_course: Path) -> None:
    course = _released_course(toy_course)
    notebook = nbformat.read(course / RELEASED, as_version=4)
    notebook.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="return 6 * 7  # the secret\n")]
    nbformat.write(notebook, course / RELEASED)
    run = grader("release", "--check", root=course)
    assert run.returncode == 1
    assert "exercises/extoy/extoy.ipynb: cell 3 (test_answer) output leaks a line of" in run.stdout


def test_public_lines_repeated_in_a_solution_are_not_leaks(toy_course: Path) -> None:
    source = toy_course / "solutions/extoy/extoy.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells.insert(1, nbgrader_cell("markdown", "Hint: `return 6 * 7  # the secret`", "hint", locked=True))
    notebook.cells[1].source = "return 6 * 7  # the secret"
    nbformat.write(notebook, source)
    course = _released_course(toy_course)
    run = grader("release", "--check", root=course)
    assert run.returncode == 0, run.stdout


def test_the_real_course_release_is_current_and_leak_free() -> None:
    run = grader("release", "--check")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("release check: exercises/ is current, no leaks")


def test_a_hand_made_leak_in_the_real_course_is_named(course_copy: Path) -> None:
    solution = next((course_copy / "solutions").glob("*/*.ipynb"))
    source = nbformat.read(solution, as_version=4)
    line = next(
        raw.strip()
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
        for raw in cell.source.split("### BEGIN SOLUTION")[1].splitlines()
        if len(raw.strip()) > 20
    )
    released = course_copy / "exercises" / solution.parent.name / solution.name
    data = json.loads(released.read_text())
    data["cells"][-1]["source"] = ["# pasted by hand\n", line + "\n"]
    released.write_text(json.dumps(data, indent=1))
    run = grader("release", "--check", root=course_copy)
    assert run.returncode == 1
    assert f"exercises/{solution.parent.name}/{solution.name}: cell {len(data['cells'])}" in run.stdout
    assert f"leaks a line of solutions/{solution.parent.name}/{solution.name}" in run.stdout
    assert repr(line) in run.stdout
