"""`make lab` serves JupyterLab on the course: chapters and exercises open, nbgrader's extension is there."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    def __init__(self, port: int, token: str) -> None:
        self.base, self.token = f"http://127.0.0.1:{port}", token

    def get(self, path: str) -> tuple[int, bytes]:
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()

    def json(self, path: str) -> dict:
        status, body = self.get(path)
        assert status == 200
        return json.loads(body)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    port, token = _free_port(), secrets.token_hex(16)
    runtime = tmp_path_factory.mktemp("jupyter-runtime")
    args = f"--no-browser --ServerApp.port={port} --IdentityProvider.token={token}"
    log = (runtime / "lab.log").open("w")
    process = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={args}"],
        cwd=REPO,
        env=dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime)),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # make and jupyter share a process group we can stop by its PID
    )
    server = Lab(port, token)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                server.get("/api/status")
                break
            except OSError:
                assert process.poll() is None, Path(log.name).read_text()
                assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
                time.sleep(0.5)
        yield server
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def test_lab_page_is_served(lab: Lab) -> None:
    status, body = lab.get("/lab")
    assert status == 200 and b"JupyterLab" in body


@pytest.mark.parametrize(
    "path",
    sorted(str(p.relative_to(REPO)) for p in [*REPO.glob("chapters/*.ipynb"), *REPO.glob("exercises/*/*.ipynb")]),
)
def test_course_notebooks_open(lab: Lab, path: str) -> None:
    model = lab.json(f"/api/contents/{path}?content=1")
    assert model["type"] == "notebook"
    assert model["content"]["cells"], f"{path} opened with no cells"


def test_nbgrader_lab_extension_is_installed(lab: Lab) -> None:
    _, body = lab.get("/lab")
    page_config = re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>', body, re.S)
    names = {extension["name"] for extension in json.loads(page_config.group(1))["federated_extensions"]}
    assert "@jupyter/nbgrader" in names, names
