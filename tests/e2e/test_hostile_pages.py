"""A hostile submission's pages in a real browser: its feedback page (opened as a file) and the Formgrader's view of
it (in JupyterLab's origin, where a script would reach the instructor's token). No submitted script may run."""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

from tests.conftest import grader_process
from tests.e2e.lab_server import REPO
from tests.hostile import hostile_submission

ASSIGNMENT = "ex01_slots"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
SETTLE_MS = 2_000  # for image errors, animations and late scripts to fire


@pytest.fixture(scope="module")
def graded(work_dir: Path) -> Iterator[tuple[str, Path]]:
    """A hostile student graded into the course's own work folder (the Formgrader reads its gradebook), and its
    feedback written under `work_dir`; every trace of the student removed afterwards."""
    from nbgrader.api import Gradebook, MissingEntry

    from grader.course import default_db_url

    student = f"e2e-hostile-{secrets.token_hex(4)}"
    incoming = work_dir / "incoming"
    (incoming / student / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(hostile_submission(ASSIGNMENT), incoming / student / ASSIGNMENT / NOTEBOOK)
    course_work = REPO / "work"
    db_url = default_db_url(course_work)
    try:
        run = grader_process("autograde", str(incoming), "--work", str(course_work), "--workers", "1")
        assert run.returncode == 0, run.stderr
        shutil.copytree(course_work / "autograded" / student, work_dir / "autograded" / student)
        run = grader_process("feedback", "--work", str(work_dir), "--db", db_url)
        assert run.returncode == 0, run.stderr
        yield student, work_dir / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    finally:
        for folder in ("submitted", "autograded"):
            shutil.rmtree(course_work / folder / student, ignore_errors=True)
        (course_work / "grading_status" / ASSIGNMENT / f"{student}.json").unlink(missing_ok=True)
        with Gradebook(db_url) as gradebook:
            try:
                gradebook.remove_submission(ASSIGNMENT, student)
                gradebook.remove_student(student)
            except MissingEntry:
                pass


def _ran(browser, url: str) -> list[str]:
    """Open `url` in a fresh context; every sign that a submitted script ran (the mark, a dialog)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(url, wait_until="load")
        page.wait_for_timeout(SETTLE_MS)
        for link in page.locator("a[href^='javascript:' i]").all():
            link.click()  # a link that would run script is a vector too
        marked = page.evaluate("() => document.documentElement.getAttribute('data-pwned')")
        body = page.locator("body").inner_text()
        assert "data-pwned" in body or marked, "the hostile text should be on the page (escaped), or have run"
        return [marked] * bool(marked) + dialogs
    finally:
        context.close()


def test_the_detector_sees_an_unsanitized_page_run_script(browser, work_dir: Path) -> None:
    control = work_dir / "unsanitized.html"
    body, _ = HTMLExporter(template_name="classic").from_notebook_node(hostile_submission(ASSIGNMENT))
    control.write_text(body)
    assert _ran(browser, control.as_uri())


def test_no_script_runs_in_the_feedback_page(browser, graded: tuple[str, Path]) -> None:
    _, page = graded
    assert page.is_file()
    assert _ran(browser, page.as_uri()) == []


def test_no_script_runs_in_the_formgraders_view_of_the_submission(browser, lab, graded: tuple[str, Path]) -> None:
    from nbgrader.api import Gradebook

    from grader.course import default_db_url

    student, _ = graded
    with Gradebook(default_db_url(REPO / "work")) as gradebook:
        submission_id = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).id
    assert _ran(browser, lab.url(f"/formgrader/submissions/{submission_id}/")) == []
