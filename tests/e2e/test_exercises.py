"""A student works an exercise in JupyterLab: it opens from workspace/ unchanged; Validate fails on the release (the
failing test's message first), the student types a solution, Validate passes and names the points the hidden tests
decide."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from tests.conftest import representatives
from tests.e2e.jlab import (
    VALIDATE_FAILED,
    VALIDATE_HIDDEN,
    VALIDATE_SUCCESS,
    open_notebook,
    set_cell_source_by_typing,
    validate,
)
from tests.e2e.lab_server import REPO, Lab

RELEASES = sorted(
    path.relative_to(REPO / "exercises").as_posix()
    for path in REPO.glob("exercises/*/*.ipynb")
    if (REPO / "solutions" / path.relative_to(REPO / "exercises")).is_file()
)
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
# The browser flow is the same for every exercise (`grader validate` proves every release fails and every solution
# passes, cell by cell, in tests/test_validate.py); its representatives type the most: exercise 6 four solution
# cells, the longest, and a "must not" part; exercise 5 three, a decorator, and checks with a warm-up.
# `make test-all`: all eight.
IN_MAKE_TEST = ("ex05_hooks/ex05_hooks.ipynb", "ex06_minimodule/ex06_minimodule.ipynb")


def typed_solutions(release: Path, source: Path) -> dict[int, str]:
    """Release cell index -> the source notebook's solution for that cell, its BEGIN/END SOLUTION lines removed."""
    solutions = {}
    for cell in nbformat.read(source, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution"):
            lines = [line for line in cell.source.split("\n") if line.strip() not in MARKERS]
            solutions[meta["grade_id"]] = "\n".join(lines)
    indexes = {}
    for index, cell in enumerate(nbformat.read(release, as_version=4).cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            indexes[index] = solutions.pop(grade_id)
    assert not solutions, f"solution cells missing from the release: {sorted(solutions)}"
    return indexes


def digest(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("release", representatives(RELEASES, IN_MAKE_TEST))
def test_validate_fails_on_the_release_and_passes_once_solved(page, lab: Lab, work_dir: Path, release: str) -> None:
    before = digest(REPO / "exercises")
    # Work on a copy inside the served root: Validate saves the notebook first.
    copy = work_dir / "student" / release
    copy.parent.mkdir(parents=True)
    shutil.copyfile(REPO / "exercises" / release, copy)
    path = copy.relative_to(REPO).as_posix()
    open_notebook(page, path, kernel_idle=False)

    classes, text = validate(page)
    assert "validation-failed" in classes.split() and VALIDATE_FAILED in text, text
    # the failing test's message first: the released stubs raise NotImplementedError
    assert re.match(r"test_\w+ \(cell \d+\) fails: NotImplementedError", text), text

    solutions = typed_solutions(copy, REPO / "solutions" / release)
    for index, solution in solutions.items():
        assert set_cell_source_by_typing(page, path, index, solution) == solution, f"cell {index} typed wrong"

    classes, text = validate(page)
    assert "validation-success" in classes.split() and VALIDATE_SUCCESS in text, text
    earned, visible, hidden = map(float, VALIDATE_HIDDEN.search(text).groups())
    assert earned == visible > 0 and hidden > 0, text  # every exercise has hidden tests: their points are named
    saved = nbformat.read(copy, as_version=4)
    assert {index: saved.cells[index].source for index in solutions} == solutions

    assert page.writes.under("exercises") == []
    assert digest(REPO / "exercises") == before


# Every release's notebook metadata is written by the one `release` step, so one exercise shows it.
@pytest.mark.parametrize("release", representatives(RELEASES, ("ex05_hooks/ex05_hooks.ipynb",)))
def test_an_exercise_opens_in_the_workspace_without_unsaved_changes(page, lab: Lab, release: str) -> None:
    """`make lab` copied it to workspace/; once its kernel has told JupyterLab its language_info, nothing changed."""
    path = f"workspace/{release}"
    assert (REPO / path).is_file(), "make lab fills workspace/ from exercises/"
    open_notebook(page, path)
    page.wait_for_timeout(2_000)  # JupyterLab writes the kernel's language_info once the kernel is ready
    assert page.evaluate("(path) => window.e2eNotebook(path).context.model.dirty", path) is False
    assert page.writes.paths == []
