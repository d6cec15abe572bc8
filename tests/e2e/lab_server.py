"""`make lab` as a test fixture: JupyterLab on the course root, 127.0.0.1, a free port, a token, stopped by PID.

Shared by tests/test_lab.py (HTTP checks) and tests/e2e/ (a real browser).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent

START_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    """A running JupyterLab: its base URL, its token and a few authenticated HTTP helpers."""

    def __init__(self, port: int, token: str, log: Path) -> None:
        self.base, self.token, self.log = f"http://127.0.0.1:{port}", token, log

    def url(self, path: str) -> str:
        """A browser URL that logs in with the token (the first page sets the session cookie)."""
        return f"{self.base}{path}{'&' if '?' in path else '?'}token={self.token}"

    def request(self, path: str, method: str = "GET", body: object = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()

    def get(self, path: str) -> tuple[int, bytes]:
        return self.request(path)

    def json(self, path: str) -> dict:
        status, body = self.get(path)
        assert status == 200
        return json.loads(body)


@contextlib.contextmanager
def running_lab(
    runtime: Path, extra_args: tuple[str, ...] = (), make_vars: tuple[str, ...] = (), root: Path = REPO
) -> Iterator[Lab]:
    """Start `make lab` in `root` (the course, or a student edition) with LAB_ARGS (port, token, `extra_args`) and
    `make_vars` (`NAME=value`, or make's options), wait until it answers, stop its process group.

    `runtime` is a fresh folder for the server's runtime files and its log (`lab.log`).
    """
    port, token = free_port(), secrets.token_hex(16)
    args = " ".join((f"--no-browser --ServerApp.port={port} --IdentityProvider.token={token}", *extra_args))
    log_path = runtime / "lab.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={args}", *make_vars],
        cwd=root,
        env=dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime)),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # make and jupyter share a process group we can stop by its PID
    )
    server = Lab(port, token, log_path)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                server.get("/api/status")
                break
            except OSError:
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, f"JupyterLab did not answer within {START_TIMEOUT_S} s"
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
