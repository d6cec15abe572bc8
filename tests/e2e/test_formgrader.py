"""An instructor opens nbgrader's Formgrader in JupyterLab started from the course root: every assignment is there,
no menu leads to an exchange error, and `make lab WORK=DIR` shows another work folder's gradebook."""

from __future__ import annotations

import urllib.error
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from grader.course import default_db_url
from grader.nbgrader_setup import ready_nbgrader
from tests.e2e.conftest import VIEWPORT
from tests.e2e.lab_server import REPO, Lab, running_lab

ASSIGNMENTS = sorted(path.name for path in REPO.glob("solutions/*") if path.is_dir())


def open_formgrader(page):
    page.evaluate("() => window.jupyterapp.commands.execute('nbgrader:open-formgrader')")
    return page.frame_locator("#formgrader-iframe iframe")


def test_formgrader_lists_every_assignment(page) -> None:
    assert ASSIGNMENTS
    formgrader = open_formgrader(page)
    for name in ASSIGNMENTS:
        formgrader.locator(f'td.name[data-order="{name}"]').wait_for(timeout=60_000)
    listed = formgrader.locator("td.name").all_inner_texts()
    assert set(ASSIGNMENTS) <= {name.strip() for name in listed}, listed
    # The local exchange (work/exchange) is there: no "The exchange directory ... does not exist" warning.
    assert formgrader.locator(".alert-warning").count() == 0, formgrader.locator(".alert-warning").all_inner_texts()


def test_no_menu_leads_to_the_missing_exchange(page, lab: Lab) -> None:
    """Students get their exercises through git and workspace/: nbgrader's Assignment and Course Lists are off."""
    commands = set(page.evaluate("() => window.jupyterapp.commands.listCommands()"))
    assert {"nbgrader:open-formgrader", "nbgrader:open-create-assignment"} <= commands
    assert not {"nbgrader:open-assignment-list", "nbgrader:open-course-list"} & commands
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    items = [text.strip() for text in page.locator(".lm-Menu-itemLabel").all_inner_texts() if text.strip()]
    page.keyboard.press("Escape")
    assert items and not [item for item in items if "Assignment List" in item or "Course List" in item], items
    for service in ("/assignments", "/courses"):
        with pytest.raises(urllib.error.HTTPError) as missing:
            lab.get(service)
        assert missing.value.code == 404


def test_make_lab_work_opens_another_gradebook(browser, work_dir: Path, tmp_path: Path) -> None:
    """`make lab WORK=work/demo` (docs/instructor.md): the Formgrader shows that folder's gradebook, not work/'s."""
    other = work_dir / "graded_elsewhere"
    other.mkdir()
    ready_nbgrader()  # nbgrader's gradebook runs `alembic`
    with Gradebook(default_db_url(other)) as gradebook:
        gradebook.add_assignment(ASSIGNMENTS[0])
        for student in ("ana_elsewhere", "ben_elsewhere"):
            gradebook.add_student(student)
    with running_lab(tmp_path, make_vars=(f"WORK={other.relative_to(REPO)}",)) as lab:
        context = browser.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            page.goto(lab.url("/formgrader/manage_students"))
            page.locator("#main-table td", has_text="ana_elsewhere").wait_for(timeout=60_000)
            listed = {text.strip() for text in page.locator("#main-table").inner_text().split()}
        finally:
            context.close()
    assert {"ana_elsewhere", "ben_elsewhere"} <= listed, listed
