"""A real PostgreSQL server for the tests: Debian's `postgresql` package, a data folder of its own on loopback.

Without the server binaries the tests that need it are skipped, except under CI (`CI=true`), where that is a failure:
`.ci/run` installs the package with apt. Run as root (as CI runs), the server runs as the `postgres` account, which
PostgreSQL requires.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_BINARIES = Path("/usr/lib/postgresql")
START_SECONDS = 60.0


def server_binaries() -> Path:
    """The newest installed /usr/lib/postgresql/<version>/bin; skips (fails under CI) when there is none."""
    found = sorted(SERVER_BINARIES.glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name))
    if found:
        return found[-1].parent
    missing = f"no PostgreSQL server under {SERVER_BINARIES} (apt-get install postgresql)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {missing}: .ci/run should have installed it", pytrace=False)
    pytest.skip(f"{missing}: PostgreSQL gradebook tests skipped")


@dataclass(frozen=True)
class Postgres:
    """A running server: make a database on it, get its SQLAlchemy URL."""

    binaries: Path
    port: int

    def new_database(self, name: str) -> str:
        """An empty database `name`; its URL (`postgresql://`, SQLAlchemy's psycopg driver)."""
        subprocess.run(
            [self.binaries / "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "grader", name],
            check=True,
            capture_output=True,
        )
        return f"postgresql://grader@127.0.0.1:{self.port}/{name}"


@contextmanager
def running_postgres() -> Iterator[Postgres]:
    """A fresh server in a temporary folder, listening on 127.0.0.1 only, its only role `grader` (trusted).

    The server is stopped (a fast shutdown, by its PID) and its folder removed when the block ends.
    """
    binaries = server_binaries()
    account = _server_account()
    folder = Path(tempfile.mkdtemp(prefix="grader-postgres-"))
    try:
        if account:
            os.chown(folder, account.pw_uid, account.pw_gid)
        as_account = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []} if account else {}
        data = folder / "data"
        subprocess.run(
            [binaries / "initdb", "-D", data, "-U", "grader", "--auth=trust", "--no-sync", "-E", "UTF8"],
            check=True,
            capture_output=True,
            **as_account,
        )
        port = _free_port()
        server = subprocess.Popen(
            [binaries / "postgres", "-D", data, "-h", "127.0.0.1", "-p", str(port), "-k", folder, "-c", "fsync=off"],
            stdout=subprocess.DEVNULL,
            stderr=(folder / "server.log").open("wb"),
            **as_account,
        )
        try:
            _wait_until_ready(binaries, port, server, folder)
            yield Postgres(binaries, port)
        finally:
            server.send_signal(signal.SIGINT)  # fast shutdown: open sessions are ended, the data folder is consistent
            server.wait(timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _server_account() -> pwd.struct_passwd | None:
    """The account the server runs as: `postgres` when this process is root (PostgreSQL refuses root), else none."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        pytest.fail("running as root needs the `postgres` account (made by Debian's postgresql package)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_until_ready(binaries: Path, port: int, server: subprocess.Popen, folder: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"PostgreSQL exited at start: {(folder / 'server.log').read_text()[-2000:]}", pytrace=False)
        ready = subprocess.run([binaries / "pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True)
        if ready.returncode == 0:
            return
        time.sleep(0.2)
    pytest.fail(f"PostgreSQL did not accept connections within {START_SECONDS:g} s", pytrace=False)
