"""Students work in workspace/, a git-ignored copy of exercises/ that is filled without overwriting their work."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from grader.sample_class import write_class
from tests.conftest import REPO, grader

RELEASES = sorted(p.relative_to(REPO / "exercises") for p in REPO.glob("exercises/*/*.ipynb"))


def test_the_workspace_gets_new_exercises_and_keeps_the_students_work(course_copy: Path) -> None:
    run = grader("workspace", root=course_copy)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:-1] == [f"workspace: new workspace/{path}" for path in RELEASES]
    for path in RELEASES:
        assert (course_copy / "workspace" / path).read_bytes() == (course_copy / "exercises" / path).read_bytes()

    mine = course_copy / "workspace" / RELEASES[0]
    mine.write_text("my work in progress")
    (course_copy / "workspace" / RELEASES[1]).unlink()
    (course_copy / "workspace" / RELEASES[1]).symlink_to(course_copy / "elsewhere.ipynb")
    (course_copy / "exercises" / "ex99_new").mkdir()
    (course_copy / "exercises" / "ex99_new" / "ex99_new.ipynb").write_text("a new exercise")  # a `git pull`
    run = grader("workspace", root=course_copy)
    assert run.stdout.splitlines()[:-1] == ["workspace: new workspace/ex99_new/ex99_new.ipynb"]
    assert mine.read_text() == "my work in progress"
    assert not (course_copy / "elsewhere.ipynb").exists(), "a link in the workspace is never written through"


def test_git_ignores_the_workspace() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", f"workspace/{RELEASES[0]}"], cwd=REPO)
    assert ignored.returncode == 0


def test_releases_carry_the_language_info_the_kernel_writes() -> None:
    """JupyterLab stores the kernel's language_info in a notebook it opens; a release that lacks it is 'unsaved'."""
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply = client.kernel_info(reply=True, timeout=60)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    language_info = reply["content"]["language_info"]
    for path in RELEASES:
        released = nbformat.read(REPO / "exercises" / path, 4).metadata.language_info
        assert released == language_info, (
            f"{path} carries {released}, the kernel reports {language_info}: set it in solutions/, then release"
        )


def test_the_sample_class_comes_from_solutions_not_from_exercises(
    course_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A student who worked in exercises/ itself must not change what the demo's 'blank' student submits."""
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(course_copy))
    release = course_copy / "exercises" / "ex01_slots" / "ex01_slots.ipynb"
    pristine = nbformat.read(release, 4)
    edited = nbformat.read(release, 4)
    for cell in edited.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "def classify_slots(module):\n    return {}  # a student's attempt"
    nbformat.write(edited, release)
    write_class("ex01_slots", tmp_path / "class")
    blank = nbformat.read(tmp_path / "class" / "blank" / "ex01_slots" / "ex01_slots.ipynb", 4)
    assert [cell.source for cell in blank.cells] == [cell.source for cell in pristine.cells]
