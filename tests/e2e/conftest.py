"""End-to-end fixtures: `make lab` on the course root and Debian's Chromium driven by Playwright.

Without /usr/bin/chromium the e2e tests are skipped, except under CI (`CI=true`), where that is a failure:
`.ci/run` installs it with apt. Playwright's own browser downloads are never used (no `playwright install`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.lab_server import REPO, Lab, running_lab

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 900}
WORK = REPO / "work" / "e2e"  # git-ignored: screenshots and throw-away notebooks
SCREENSHOTS = WORK / "screenshots"

# JupyterLab user settings for the test server (a fresh folder, so a developer's own settings never apply).
LAB_SETTINGS = {
    # every cell attached to the DOM, so every markdown cell (and its diagrams) is rendered
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    # no "Would you like to get notified about official Jupyter news?" toast, no update check
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    # never write a notebook the test did not explicitly save
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="package")
def chromium() -> Path:
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    missing = f"no browser at {CHROMIUM} (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {missing}: .ci/run should have installed it", pytrace=False)
    pytest.skip(f"{missing}: browser tests skipped")


@pytest.fixture(scope="package")
def browser(chromium: Path) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # Playwright launches it with a fresh temporary profile (--user-data-dir) and removes it afterwards.
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="package")
def work_dir() -> Iterator[Path]:
    """A throw-away folder inside the served root, under the git-ignored work/e2e/; removed afterwards."""
    WORK.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="run-", dir=WORK))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="package")
def lab(browser: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """`make lab` with the app exposed to page scripts, fresh user settings and workspaces, nothing phoning home.

    It asks for `browser` first, so that without Chromium the tests are skipped before a server is started."""
    with running_lab(tmp_path_factory.mktemp("jupyter-runtime"), isolated_lab_args(tmp_path_factory)) as server:
        yield server


def isolated_lab_args(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """JupyterLab's options for a test server: the app exposed to page scripts, fresh user settings (LAB_SETTINGS)
    and workspaces, nothing phoning home."""
    settings = tmp_path_factory.mktemp("lab-user-settings")
    for plugin, values in LAB_SETTINGS.items():
        target = settings / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    return (
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.collaborative=False",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={tmp_path_factory.mktemp('lab-workspaces')}",
    )


class Writes:
    """Every request the page made that could change a file on the server (PUT/PATCH/POST/DELETE /api/contents)."""

    def __init__(self) -> None:
        self.paths: list[tuple[str, str]] = []

    def record(self, request) -> None:
        marker = "/api/contents/"
        if request.method in ("PUT", "PATCH", "POST", "DELETE") and marker in request.url:
            path = urllib.parse.unquote(request.url.split(marker, 1)[1].split("?", 1)[0])
            if request.method == "POST" and path.endswith("/checkpoints"):
                return  # JupyterLab saves a first checkpoint of a notebook it opens, in git-ignored .ipynb_checkpoints/
            self.paths.append((request.method, path))

    def under(self, folder: str) -> list[tuple[str, str]]:
        return [(method, path) for method, path in self.paths if path == folder or path.startswith(folder + "/")]


class Tab:
    """One JupyterLab browser tab, kept across the tests of a package (loading JupyterLab takes seconds)."""

    def __init__(self, browser, lab: Lab) -> None:
        self.browser, self.lab, self.context, self.page = browser, lab, None, None

    def get(self):
        from tests.e2e.jlab import INIT_SCRIPT, start_lab_page

        if self.page is None:
            self.context = self.browser.new_context(viewport=VIEWPORT)
            self.context.set_default_timeout(60_000)
            self.context.add_init_script(INIT_SCRIPT)
            self.page = self.context.new_page()
            self.page.writes = Writes()
            self.page.on("request", lambda request: self.page.writes.record(request))
            start_lab_page(self.page, self.lab)
        self.page.writes = Writes()
        return self.page

    def discard(self) -> None:
        if self.context is not None:
            self.context.close()
        self.context = self.page = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call":
        item.e2e_failed = report.failed
    return report


@pytest.fixture(scope="package")
def tab(browser, lab: Lab) -> Iterator[Tab]:
    tab = Tab(browser, lab)
    try:
        yield tab
    finally:
        tab.discard()


@pytest.fixture
def page(tab: Tab, lab: Lab, request: pytest.FixtureRequest) -> Iterator[object]:
    """The JupyterLab tab with nothing open. Afterwards every document is closed unsaved and every kernel shut down;
    after a failure (or a dialog left open) the tab is thrown away and the next test loads a fresh one."""
    from tests.e2e.jlab import close_everything

    page = tab.get()
    try:
        yield page
    finally:
        clean = False
        if not getattr(request.node, "e2e_failed", True):
            try:
                clean = close_everything(page)
            except Exception:  # noqa: BLE001 - any trouble closing means a fresh tab next time
                clean = False
        if not clean:
            tab.discard()
        for session in json.loads(lab.get("/api/sessions")[1]):
            try:
                lab.request(f"/api/sessions/{session['id']}", method="DELETE")
            except urllib.error.HTTPError:
                pass  # already gone
