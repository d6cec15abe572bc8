"""Students work in workspace/, a git-ignored copy of exercises/ that is filled without overwriting their work."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from grader.sample_class import write_class
from tests.conftest import REPO, grader

RELEASES = sorted(p.relative_to(REPO / "exercises") for p in REPO.glob("exercises/*/*.ipynb"))
CHAPTERS = sorted(p.name for p in REPO.glob("chapters/*") if p.is_file())


def test_the_workspace_gets_new_exercises_and_keeps_the_students_work(course_copy: Path) -> None:
    shutil.copytree(REPO / "chapters", course_copy / "chapters", ignore=shutil.ignore_patterns("__pycache__"))
    run = grader("workspace", root=course_copy)
    assert run.returncode == 0, run.stderr
    copied = [*CHAPTERS, *(path.as_posix() for path in RELEASES)]
    assert run.stdout.splitlines()[:-1] == [f"workspace: new workspace/{path}" for path in copied]
    for folder, path in [*(("exercises", path) for path in RELEASES), ("chapters", CHAPTERS[0])]:
        assert (course_copy / "workspace" / path).read_bytes() == (course_copy / folder / path).read_bytes()

    mine = course_copy / "workspace" / RELEASES[0]
    mine.write_text("my work in progress")
    (course_copy / "workspace" / RELEASES[1]).unlink()
    (course_copy / "workspace" / RELEASES[1]).symlink_to(course_copy / "elsewhere.ipynb")
    (course_copy / "workspace" / CHAPTERS[1]).write_text("my notes in the chapter")
    # a `git pull`: a new exercise, a new version of two chapters and of the exercise the student changed
    (course_copy / "exercises" / "ex99_new").mkdir()
    (course_copy / "exercises" / "ex99_new" / "ex99_new.ipynb").write_text("a new exercise")
    for changed in (course_copy / "chapters" / CHAPTERS[0], course_copy / "chapters" / CHAPTERS[1]):
        changed.write_text("the course's new version")
    (course_copy / "exercises" / RELEASES[0]).write_text("the exercise's new version")
    run = grader("workspace", root=course_copy)
    assert run.stdout.splitlines()[:-1] == [
        f"workspace: updated workspace/{CHAPTERS[0]}",
        f"workspace: kept your changed workspace/{CHAPTERS[1]}; the course's new version is chapters/{CHAPTERS[1]}"
        " (delete your copy and run this again to get it)",
        f"workspace: kept your changed workspace/{RELEASES[0]}; the course's new version is exercises/{RELEASES[0]}"
        " (delete your copy and run this again to get it)",
        "workspace: new workspace/ex99_new/ex99_new.ipynb",
    ]
    assert (course_copy / "workspace" / CHAPTERS[0]).read_text() == "the course's new version"
    assert (course_copy / "workspace" / CHAPTERS[1]).read_text() == "my notes in the chapter"
    assert mine.read_text() == "my work in progress"
    assert not (course_copy / "elsewhere.ipynb").exists(), "a link in the workspace is never written through"
    assert grader("workspace", root=course_copy).stdout.splitlines()[:-1] == [
        line for line in run.stdout.splitlines()[:-1] if "kept" in line
    ], "what is up to date is left alone; what the student changed is reported again"


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
