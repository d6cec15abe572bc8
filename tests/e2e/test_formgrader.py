"""An instructor opens nbgrader's Formgrader in JupyterLab started from the course root: every assignment is there."""

from __future__ import annotations

from tests.e2e.lab_server import REPO

ASSIGNMENTS = sorted(path.name for path in REPO.glob("solutions/*") if path.is_dir())


def test_formgrader_lists_every_assignment(page) -> None:
    assert ASSIGNMENTS
    page.evaluate("() => window.jupyterapp.commands.execute('nbgrader:open-formgrader')")
    formgrader = page.frame_locator("#formgrader-iframe iframe")
    for name in ASSIGNMENTS:
        formgrader.locator(f'td.name[data-order="{name}"]').wait_for(timeout=60_000)
    listed = formgrader.locator("td.name").all_inner_texts()
    assert set(ASSIGNMENTS) <= {name.strip() for name in listed}, listed
