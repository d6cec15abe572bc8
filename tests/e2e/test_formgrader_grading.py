"""An instructor grades in the Formgrader after `python -m grader autograde`: the Autograde button grades the way the
grader does (sandbox and trusted check), so a faked-type cheat's trusted 0 points stand, with no warning about the
test cells it left as released; Manage Submissions lists each flagged submission with its whole reasons (the cheat's,
and an edited test cell); the Flagged? column and the grading view show the flag and its reason on each affected
cell; the Generate Feedback button writes the grader's page."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from grader.nbgrader_steps import FLAG_NOTE
from tests.conftest import grader_process
from tests.e2e.conftest import SCREENSHOTS, VIEWPORT
from tests.e2e.lab_server import REPO, Lab, running_lab
from tests.test_feedback import LABELS
from tests.test_nbgrader_steps import ASSIGNMENT, FLAGGED_TESTS, recorded, write_cheat

STUDENT = "liar"
EDITOR = "editor"  # answers nothing, and edits a visible test cell
EDITED = "test_copy_visible"
AUTOGRADE_TIMEOUT_MS = 300_000


def write_edited_test(submitted: Path, student: str) -> None:
    release = nbformat.read(REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    for cell in release.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == EDITED:
            cell.source = "print('all good')  # the student's own version of the test"
    (submitted / student / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(release, submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")


@dataclass
class Graded:
    work: Path
    lab: Lab
    page: object
    before: tuple


@pytest.fixture(scope="module")
def graded(browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graded]:
    """The cheat graded by `python -m grader autograde` in a work folder, and `make lab WORK=` on that folder."""
    scratch = tmp_path_factory.mktemp("formgrader-grading")
    work = REPO / "work" / "e2e" / scratch.name  # inside the served root, git-ignored
    write_cheat(scratch / "in", STUDENT)
    write_edited_test(scratch / "in", EDITOR)
    run = grader_process("autograde", str(scratch / "in"), "--work", str(work), "--workers", "1")
    assert run.returncode == 0 and run.stdout.count("flagged: ") == 2, run.stdout + run.stderr
    try:
        with running_lab(scratch, make_vars=(f"WORK={work.relative_to(REPO)}",)) as lab:
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(60_000)
            page = context.new_page()
            page.goto(lab.url("/login"))  # the session cookie, for the Formgrader's own API calls
            try:
                yield Graded(work, lab, page, recorded(work, STUDENT))
            finally:
                context.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def press(graded: Graded, action: str) -> dict:
    """Press the cheat's Autograde or Generate Feedback button on Manage Submissions; its answer, successful."""
    page = graded.page
    page.goto(graded.lab.url(f"/formgrader/manage_submissions/{ASSIGNMENT}"))
    button = page.locator("#main-table tr", has_text=STUDENT).locator(f"td.{action.replace('_', '-')} a")
    with page.expect_response(lambda r: r.url.endswith(f"/{action}"), timeout=AUTOGRADE_TIMEOUT_MS) as answer:
        button.click()
    result = json.loads(answer.value.text())
    assert result["success"], result.get("error") or result.get("log")
    return result


def test_the_autograde_button_keeps_the_trusted_grade(graded: Graded) -> None:
    scores, flagged, _ = graded.before
    assert flagged and scores == dict.fromkeys(scores, 0.0)
    result = press(graded, "autograde")
    assert recorded(graded.work, STUDENT) == graded.before
    # no warning about the hidden tests put back into the test cells the student left as released
    assert "checksum" not in result["log"], result["log"]


def test_manage_submissions_lists_each_flagged_submission_with_its_reasons(graded: Graded) -> None:
    page = graded.page
    page.goto(graded.lab.url(f"/formgrader/manage_submissions/{ASSIGNMENT}"))
    flagged = page.locator("#flagged-submissions .flagged-submission")
    page.screenshot(path=str(SCREENSHOTS / "manage_submissions_flagged.png"))
    assert sorted(flagged.locator("a").all_inner_texts()) == sorted([STUDENT, EDITOR])
    liar = flagged.filter(has_text=STUDENT).locator(".flag-reason").all_inner_texts()
    assert [reason.split(":")[0] for reason in liar] == [f"{FLAG_NOTE}, {grade_id}" for grade_id in FLAGGED_TESTS]
    assert all("the notebook's tests gave 2, the trusted check 0 (" in reason for reason in liar), liar
    editor = flagged.filter(has_text=EDITOR).locator(".flag-reason").all_inner_texts()
    assert editor == [f"Flagged by the grader: test cell '{EDITED}' was edited"], editor
    flagged.filter(has_text=EDITOR).locator("a").click()  # one click: the submission, its flag beside its notebook
    page.locator("#main-table td.flagged .glyphicon-flag").wait_for()


def test_the_flag_and_its_reasons_show_in_the_formgrader(graded: Graded) -> None:
    page = graded.page
    page.goto(graded.lab.url(f"/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}"))
    row = page.locator("#main-table tr").filter(has=page.locator("a.name-shown", has_text=STUDENT))
    row.locator("td.flagged .glyphicon-flag").wait_for()
    row.locator("a.name-hidden").click()
    # nbgrader shows a cell's automatic comment as the placeholder of its comment box
    comment = page.locator(f'textarea[placeholder*="{FLAG_NOTE}"]')
    comment.wait_for()
    for grade_id in FLAGGED_TESTS:
        assert f"{FLAG_NOTE}, {grade_id}: the notebook's tests gave" in comment.get_attribute("placeholder")
    # and the reason beside each flagged test cell, under its 0 points
    notes = page.locator(".output_area", has_text=f"{FLAG_NOTE}: the notebook's tests gave")
    assert notes.count() == len(FLAGGED_TESTS)


def test_the_generate_feedback_button_writes_the_graders_page(graded: Graded) -> None:
    """Manage Submissions' Generate Feedback button: the page it writes names each part and shows nothing of the
    hidden tests (no hidden-test block, no line of the exercise's checks)."""
    press(graded, "generate_feedback")
    page = graded.page
    written = graded.work / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html"
    page.goto(written.as_uri())
    shown = page.locator("body").inner_text()
    assert [label for label in LABELS if label not in shown] == []
    assert "Test cell" not in shown
    submitted = (graded.work / "submitted" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    released = (REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    checks = [line.strip() for line in (REPO / "solutions" / ASSIGNMENT / "checks.py").read_text().splitlines()]
    secret = [line for line in checks if len(line) >= 24 and line not in released and line not in submitted]
    assert len(secret) >= 10
    leaked = [line for line in [*secret, "HIDDEN TESTS", "run_hidden_tests"] if line in shown]
    assert leaked == []
