"""A fresh clone of the student edition opens in JupyterLab with `make lab`: a chapter renders, the exercise `make lab`
put in workspace/ opens, and Validate answers (it fails on the release); nbgrader's instructor parts are not there."""

from __future__ import annotations

import subprocess
import urllib.error
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, grader_process
from tests.e2e.conftest import VIEWPORT, isolated_lab_args
from tests.e2e.jlab import INIT_SCRIPT, VALIDATE_FAILED, open_notebook, start_lab_page, validate
from tests.e2e.lab_server import Lab, running_lab

CHAPTER = "workspace/01_what_the_object_holds.ipynb"
EXERCISE = "workspace/ex01_slots/ex01_slots.ipynb"


@pytest.fixture(scope="module")
def clone_lab(browser: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Lab]]:
    """`make lab` in a fresh clone of a new student edition. The clone uses the course's .venv (building one takes
    minutes; the edition's Makefile builds it as the course's does): make is told it is up to date (-o)."""
    edition = tmp_path_factory.mktemp("edition") / "course"
    written = grader_process("student-edition", str(edition))
    assert written.returncode == 0, written.stderr
    clone = tmp_path_factory.mktemp("clone") / "course"
    subprocess.run(["git", "clone", "--quiet", str(edition), str(clone)], check=True)
    (clone / ".venv").symlink_to(REPO / ".venv")
    env_free = ("-o", ".venv/.requirements-installed")
    with running_lab(tmp_path_factory.mktemp("runtime"), isolated_lab_args(tmp_path_factory), env_free, clone) as lab:
        yield clone, lab


def test_a_fresh_clone_opens_a_chapter_and_validates_an_exercise(browser, clone_lab: tuple[Path, Lab]) -> None:
    clone, lab = clone_lab
    assert (clone / EXERCISE).is_file(), "make lab fills workspace/ from exercises/"
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.set_default_timeout(60_000)
        context.add_init_script(INIT_SCRIPT)
        page = context.new_page()
        start_lab_page(page, lab)
        open_notebook(page, EXERCISE, kernel_idle=False)
        classes, text = validate(page)
        assert "validation-failed" in classes.split() and VALIDATE_FAILED in text, text
        open_notebook(page, CHAPTER)
        heading = page.locator(".jp-NotebookPanel:visible .jp-MarkdownCell .jp-RenderedMarkdown h1").first
        assert heading.inner_text().startswith("Chapter 1: What the object holds")
        commands = set(page.evaluate("() => window.jupyterapp.commands.listCommands()"))
        instructors = {"nbgrader:open-formgrader", "nbgrader:open-create-assignment", "nbgrader:open-assignment-list"}
        assert not instructors & commands and "nbgrader:open-course-list" not in commands
        with pytest.raises(urllib.error.HTTPError) as missing:
            lab.get("/formgrader")
        assert missing.value.code == 404
    finally:
        context.close()
