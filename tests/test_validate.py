"""`python -m grader validate`: sources pass every graded cell, releases fail every one, shown per cell."""

from __future__ import annotations

from pathlib import Path

import nbformat

from tests.conftest import grader, nbgrader_cell


def test_the_real_course_validates_cell_by_cell() -> None:
    run = grader("validate")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [line.split() for line in run.stdout.splitlines()[1:-1]]
    assert rows, run.stdout
    assert all(row[-1] == "ok" for row in rows)
    for source_row in (row for row in rows if row[0].startswith("solutions/")):
        released = source_row[0].replace("solutions/", "exercises/", 1)
        twin = [row for row in rows if row[0] == released and row[2] == source_row[2]]
        assert source_row[4:6] == ["pass", "pass"]
        assert len(twin) == 1 and twin[0][4:6] == ["fail", "fail"]
    assert run.stdout.splitlines()[-1] == f"validate: {len(rows)} of {len(rows)} graded cells as expected"


def test_a_test_that_passes_on_the_untouched_release_is_reported(toy_course: Path) -> None:
    source = toy_course / "solutions/extoy/extoy.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells.append(nbgrader_cell("code", "assert True", "test_lenient", points=1, grade=True, locked=True))
    nbformat.write(notebook, source)
    assert grader("release", root=toy_course).returncode == 0
    run = grader("validate", root=toy_course)
    assert run.returncode == 1
    [row] = [line for line in run.stdout.splitlines() if line.startswith("exercises/") and "test_lenient" in line]
    assert row.split()[4:7] == ["fail", "pass", "WRONG"]
    assert run.stdout.splitlines()[-1] == "validate: 3 of 4 graded cells as expected"


def test_a_wrong_solution_is_reported_with_its_error(toy_course: Path) -> None:
    assert grader("release", root=toy_course).returncode == 0
    source = toy_course / "solutions/extoy/extoy.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[1].source = notebook.cells[1].source.replace("6 * 7", "6 * 9")
    nbformat.write(notebook, source)
    run = grader("validate", root=toy_course)
    assert run.returncode == 1
    [row] = [line for line in run.stdout.splitlines() if line.startswith("solutions/")]
    assert row.split()[4:6] == ["pass", "fail"]
    assert row.endswith("  WRONG AssertionError: answer() should return 42")


def test_validate_needs_the_release(toy_course: Path) -> None:
    run = grader("validate", root=toy_course)
    assert run.returncode == 1
    assert run.stderr.strip() == "error: exercises/extoy/extoy.ipynb: missing; run `python -m grader release extoy`"


def test_kernels_started_together_each_use_their_own_unix_sockets(tmp_path: Path) -> None:
    """Over TCP a port taken by another process between choice and bind kills the kernel at start (a CI failure)."""
    from concurrent.futures import ThreadPoolExecutor

    from grader.course import nbgrader_config
    from grader.execute import execute

    cell = "import json, ipykernel.connect as c\ninfo = json.loads(c.get_connection_info())\nprint(info['transport'])"
    cell += "\nprint(info['ip'])"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    config = nbgrader_config(tmp_path / "work")
    with ThreadPoolExecutor(3) as pool:
        runs = list(pool.map(lambda _: execute(notebook, tmp_path, config), range(3)))
    printed = [run.cells[0].outputs[0].text.split() for run in runs]
    assert [transport for transport, _ in printed] == ["ipc"] * 3
    sockets = [Path(ip) for _, ip in printed]
    assert len({socket.parent for socket in sockets}) == 3
    assert not any(socket.parent.exists() for socket in sockets)  # each kernel's folder is removed with it
