"""A class on JupyterHub, a whole term in one browser test: hub/jupyterhub_config.py on 127.0.0.1 (JupyterHub from the
course's .venv, configurable-http-proxy from hub/node_modules), three Unix accounts made for it (an instructor and
two students) who log in with their passwords, and nbgrader's exchange in a shared folder (mode 777, as nbgrader's
documentation says).

The instructor generates and releases ex01_slots from the Formgrader; each student sees it in the Assignment List,
fetches it, works (a full solution; a scripted mistake, then another) and submits (the second student twice); the
instructor collects, autogrades each submission (the course's configuration: the sandbox and the trusted check),
generates and releases feedback; each student fetches their own feedback and can see no one else's. The grades equal
those of `grader autograde` of the collected notebooks. The students press the Assignment List's buttons (Fetch,
Submit, Fetch Feedback) and write their answers through the contents API, as JupyterLab saves a notebook; the
instructor's steps are requests from their logged-in page to the Formgrader's endpoints (those its buttons call).

Needs root (the hub starts each user's server as that user), useradd and the proxy (`make hub-proxy`); skipped
without them, except under CI (`CI=true`), where .ci/run installs them. Every process it starts is stopped by PID,
the accounts are removed.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import psutil
import pytest

from grader.course import default_db_url
from grader.gradebook import cell_scores
from grader.sample_class import scripted_students, solution_answers, submission
from tests.conftest import REPO, grader_process
from tests.e2e.conftest import VIEWPORT, WORK
from tests.e2e.lab_server import free_port

ASSIGNMENT = "ex01_slots"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
PROXY = REPO / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_ID = "nn-module-internals"
START_S = 120  # the hub answering
SPAWN_MS = 180_000  # a user's server started and JupyterLab loaded, on two busy cores
ACTION_S = 60  # an Assignment List button's request done
SECOND_TRY = "classify_by_value_type"  # the second student's first submission; the last one counts
LAST = "flag_tables_as_hook_tables"
PARTS = {  # ex01_slots's graded test cells and their labels on a feedback page (grader.feedback)
    "test_classify_slots_visible": "Part 1: which group does each slot belong to? \N{EM DASH} visible tests",
    "test_classify_slots_hidden": "Part 1: which group does each slot belong to? \N{EM DASH} hidden tests",
    "test_copy_visible": "Part 2: a copy that shares the parameters \N{EM DASH} visible tests",
    "test_copy_hidden": "Part 2: a copy that shares the parameters \N{EM DASH} hidden tests",
}
LOG = WORK / "hub.log"  # the hub's, and the servers' it started: kept for a failure's diagnosis


@dataclass
class Hub:
    url: str
    course: Path  # the instructor's checkout
    exchange: Path
    instructor: str
    students: tuple[str, str]
    passwords: dict[str, str]


def _missing() -> str:
    if os.geteuid() != 0:
        return "not root: the hub starts each user's server as that user"
    if not shutil.which("useradd") or not shutil.which("chpasswd"):
        return "no useradd/chpasswd to make the class's accounts"
    if not PROXY.is_file():
        return f"no proxy at {PROXY.relative_to(REPO)} (`make hub-proxy`, with Node.js and npm)"
    return ""


def _runnable_by_all(path: Path) -> bool:
    """Whether another account may run this file: it and every folder above it are executable by others."""
    return all(os.stat(part).st_mode & 0o001 for part in [path, *path.parents])


def _users_venv(folder: Path) -> Path | None:
    """None where other accounts may run the course's Python. Otherwise (a Python installed under /root, as on the
    course's development machine) an environment for their servers in `folder`: the same Python installation and the
    course's packages, hard-linked (seconds, no copy) into a folder every account may read, with the course's
    scripts, each run by that environment's python, and the course's Jupyter files. The grading sandbox of the
    instructor's server shows a child that Python's folder and the environment's, so both hold real files."""
    if _runnable_by_all(Path(sys.executable).resolve()):
        return None
    python, venv = folder / "python", folder / "venv"
    folder.mkdir()
    subprocess.run(["cp", "-al", sys.base_prefix, str(python)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    # Its interpreter finds its libpython by an absolute run path under /root: the copy's looks beside itself.
    interpreter = python / "bin" / version
    binary, runpath = interpreter.read_bytes(), f"{sys.base_prefix}/lib".encode()
    interpreter.unlink()
    interpreter.write_bytes(binary.replace(runpath, b"$ORIGIN/../lib".ljust(len(runpath), b"\0")))
    interpreter.chmod(0o755)
    subprocess.run([str(interpreter), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / version / "site-packages"
    site.rmdir()
    subprocess.run(["cp", "-al", sysconfig.get_paths()["purelib"], str(site)], check=True)
    for shared in ("etc", "share"):  # Jupyter's settings (server extensions) and data (JupyterLab, its extensions)
        (venv / shared).symlink_to(Path(sys.prefix) / shared)
    shebang = f"#!{Path(sys.executable).parent}/python".encode()
    for script in Path(sys.executable).parent.iterdir():
        head = script.read_bytes()[:200] if script.is_file() and not script.is_symlink() else b""
        if head.startswith(shebang):
            text = script.read_text().split("\n", 1)[1]
            (venv / "bin" / script.name).write_text(f"#!{venv / 'bin' / 'python'}\n{text}")
            (venv / "bin" / script.name).chmod(0o755)
    return venv


def _account(name: str, password: str) -> None:
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)


def _remove_account(name: str) -> None:
    for process in psutil.process_iter(["username"]):
        if process.info["username"] == name:
            process.kill()  # by PID: what the hub did not stop
    subprocess.run(["userdel", "--remove", name], capture_output=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # the hub stops every user's server and the proxy first
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def hub(browser: object) -> Iterator[Hub]:
    missing = _missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {missing}: .ci/run should provide it", pytrace=False)
        pytest.skip(missing)
    tag = "g" + secrets.token_hex(3)  # accounts of this run only
    instructor, students = f"{tag}i", (f"{tag}a", f"{tag}b")
    passwords = {name: secrets.token_urlsafe(12) for name in (instructor, *students)}
    base = Path(tempfile.mkdtemp(prefix="grader-hub-"))
    base.chmod(0o755)
    exchange, state = base / "exchange", base / "state"
    exchange.mkdir()
    exchange.chmod(0o777)
    state.mkdir(mode=0o700)
    made, process = [], None
    try:
        for name, password in passwords.items():
            _account(name, password)
            made.append(name)
        course = Path(f"/home/{instructor}/course")
        ignored = shutil.ignore_patterns(".venv", ".git", "work", "workspace", "node_modules", "__pycache__")
        shutil.copytree(REPO, course, ignore=ignored)
        (course / ".venv").symlink_to(REPO / ".venv")
        (course / "work").mkdir()  # the gradebook's folder, as the instructor makes it (docs/grading-at-scale.md)
        subprocess.run(["chown", "-R", f"{instructor}:{instructor}", str(course)], check=True)
        port = free_port()
        users_venv = _users_venv(base / "for-users")
        env = dict(
            os.environ,
            HUB_USER_VENV=str(users_venv or ""),
            COURSE_DIR=str(course),
            COURSE_INSTRUCTOR=instructor,
            COURSE_STUDENTS=",".join(students),
            GRADER_EXCHANGE=str(exchange),
            HUB_PORT=str(port),
            HUB_API_PORT=str(free_port()),
            PROXY_API_PORT=str(free_port()),
            HUB_STATE=str(state),
        )
        LOG.parent.mkdir(parents=True, exist_ok=True)
        log = LOG.open("w")
        process = subprocess.Popen(
            [str(REPO / ".venv" / "bin" / "jupyterhub"), "-f", str(REPO / "hub" / "jupyterhub_config.py")],
            cwd=state,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/hub/api", timeout=5) as answer:
                    assert answer.status == 200
                break
            except OSError:
                assert process.poll() is None, LOG.read_text()
                assert time.monotonic() < deadline, f"the hub did not answer within {START_S} s"
                time.sleep(0.5)
        yield Hub(url, course, exchange, instructor, students, passwords)
    finally:
        if process is not None:
            _stop(process)
            log.close()
        for name in made:
            _remove_account(name)
        shutil.rmtree(base, ignore_errors=True)


def _log_in(browser, hub: Hub, name: str):
    """The hub's login form; the hub then starts the user's server (see _in_lab)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(SPAWN_MS)
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub.passwords[name])
    page.click("#login_submit")
    return context, page


def _in_lab(page, name: str) -> None:
    """Wait until the user's page is JupyterLab on their own server."""
    page.wait_for_url(f"**/user/{name}/lab**")
    page.wait_for_selector("#jp-main-dock-panel")


def _call(page, method: str, path: str, form: dict | None = None, body: object = None) -> dict:
    """A request from the user's page to their own server, with the page's cookies and XSRF token."""
    answer = page.evaluate(
        """async ([method, path, form, body]) => {
            const xsrf = (document.cookie.split('; ').find(c => c.startsWith('_xsrf=')) || '=').split('=')[1];
            const headers = {'X-XSRFToken': decodeURIComponent(xsrf)};
            let data;
            if (form) { data = new URLSearchParams(form); }
            if (body) { data = JSON.stringify(body); headers['Content-Type'] = 'application/json'; }
            const response = await fetch(path, {method, headers, body: data});
            return {status: response.status, text: await response.text()};
        }""",
        [method, path, form, body],
    )
    assert answer["status"] in (200, 201), f"{method} {path}: {answer}"
    return json.loads(answer["text"]) if answer["text"] else {}


def _formgrader(page, hub: Hub, action: str) -> None:
    done = _call(page, "POST", f"/user/{hub.instructor}/formgrader/api/{action}")
    assert done.get("success") is True, f"{action}: {done.get('error') or done}"


def _press(page, student: str, listing: str, label: str, done) -> dict:
    """Press the Assignment List's `label` button of ex01_slots in its `listing` list (released, fetched, submitted),
    then wait (bounded) until the student's server lists the assignment as `done` says; return that entry."""
    row = page.locator(f"#{listing}_assignments_list .list_item", has_text=ASSIGNMENT).first
    row.locator("button.btn-primary", has_text=label).click()
    deadline = time.monotonic() + ACTION_S
    while True:
        listed = _call(page, "GET", f"/user/{student}/assignments?course_id={COURSE_ID}")["value"]
        found = [a for a in listed if a["assignment_id"] == ASSIGNMENT and done(a)]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"{student}: {label} did not take effect within {ACTION_S} s: {listed}"
        time.sleep(0.5)


def _work(page, student: str, answers: dict[str, str]) -> None:
    """Write the student's answers into the notebook they fetched (the contents API, as JupyterLab saves it)."""
    path = f"/user/{student}/api/contents/{ASSIGNMENT}/{NOTEBOOK}"
    fetched = nbformat.from_dict(_call(page, "GET", f"{path}?content=1")["content"])
    worked = submission(fetched, answers)
    _call(page, "PUT", path, body={"type": "notebook", "format": "json", "content": worked})


def _feedback_page(page, student: str) -> str:
    """The one feedback page the student fetched (its folder is named by the submission's time)."""
    folder = _call(page, "GET", f"/user/{student}/api/contents/{ASSIGNMENT}/feedback")["content"]
    [timestamp] = [entry["path"] for entry in folder if entry["type"] == "directory"]
    pages = _call(page, "GET", f"/user/{student}/api/contents/{timestamp}")["content"]
    assert [entry["name"] for entry in pages] == [NOTEBOOK.replace(".ipynb", ".html")]
    return _call(page, "GET", f"/user/{student}/api/contents/{pages[0]['path']}?content=1&format=text")["content"]


def test_a_term_on_the_hub(browser, hub: Hub, tmp_path: Path) -> None:
    sessions, pages = [], {}
    try:
        for name in (hub.instructor, *hub.students):  # all three log in; their servers start together
            context, pages[name] = _log_in(browser, hub, name)
            sessions.append(context)
        teacher = pages.pop(hub.instructor)
        _in_lab(teacher, hub.instructor)
        _formgrader(teacher, hub, f"assignment/{ASSIGNMENT}/assign")  # nbgrader generate_assignment
        _formgrader(teacher, hub, f"assignment/{ASSIGNMENT}/release")

        source = nbformat.read(REPO / "solutions" / ASSIGNMENT / NOTEBOOK, 4)
        answers, expected = scripted_students(ASSIGNMENT)
        work = {hub.students[0]: [solution_answers(source)], hub.students[1]: [answers[SECOND_TRY], answers[LAST]]}
        for student, versions in work.items():
            page = pages[student]
            _in_lab(page, student)
            page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
            page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
            _press(page, student, "released", "Fetch", lambda a: a["status"] == "fetched")
            for count, answer in enumerate(versions, 1):
                _work(page, student, answer)
                submitted = _press(
                    page, student, "fetched", "Submit", lambda a, n=count: len(a.get("submissions", [])) == n
                )
            assert submitted["status"] == "submitted" and len(submitted["submissions"]) == len(versions), submitted

        _formgrader(teacher, hub, f"assignment/{ASSIGNMENT}/collect")
        for student in hub.students:
            _formgrader(teacher, hub, f"submission/{ASSIGNMENT}/{student}/autograde")
        _formgrader(teacher, hub, f"assignment/{ASSIGNMENT}/generate_feedback")
        _formgrader(teacher, hub, f"assignment/{ASSIGNMENT}/release_feedback")

        feedback = {}
        for student, page in pages.items():
            fed = lambda a: a["status"] == "submitted" and any(s["has_local_feedback"] for s in a["submissions"])  # noqa: E731
            _press(page, student, "submitted", "Fetch Feedback", fed)
            feedback[student] = _feedback_page(page, student)
    finally:
        for context in sessions:
            context.close()

    # A student cannot list the feedback of the class in the exchange (nbgrader names each by a hash).
    listed = subprocess.run(
        ["runuser", "-u", hub.students[0], "--", "ls", str(hub.exchange / COURSE_ID / "feedback")],
        capture_output=True,
        text=True,
    )
    assert listed.returncode != 0 and "Permission denied" in listed.stderr

    hub_grades = cell_scores(default_db_url(hub.course / "work"))
    again = grader_process("autograde", str(hub.course / "work" / "submitted"), "--work", str(tmp_path / "work"))
    assert again.returncode == 0, again.stderr
    regraded = cell_scores(default_db_url(tmp_path / "work"))
    assert {s: hub_grades[s][ASSIGNMENT] for s in hub.students} == {s: regraded[s][ASSIGNMENT] for s in hub.students}
    assert hub_grades[hub.students[1]][ASSIGNMENT] == expected[LAST], "the last submission is the one graded"
    assert sum(hub_grades[hub.students[0]][ASSIGNMENT].values()) == 12.0
    with sqlite3.connect(hub.course / "work" / "gradebook.db") as db:
        assert {row[0] for row in db.execute("SELECT id FROM student")} == set(hub.students)

    # Each student's page: their own points on every part, by part (the course's page), no hidden-test source.
    for student, text in feedback.items():
        assert "BEGIN HIDDEN TESTS" not in text
        for grade_id, label in PARTS.items():
            score = hub_grades[student][ASSIGNMENT][grade_id]
            points = 4 if grade_id.endswith("_hidden") else 2
            assert f"<b>{label}</b>: {score:g} / {points} points" in text, (student, label)
    assert feedback[hub.students[0]] != feedback[hub.students[1]]
