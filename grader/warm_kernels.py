"""Jupyter kernels forked from a warm process, for nbclient and nbgrader, instead of a cold `python` per notebook."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner

from grader.course import REPOSITORY

PRELOAD = ["numpy", "torch", "torch.nn", "ipykernel.kernelapp", "IPython", "matplotlib"]


class ForkServer:
    """The warm process (see grader.fork_server): one per grading run, shared by every worker thread."""

    def __init__(self, log: Path, threads_per_kernel: int = 1, preload: list[str] = PRELOAD) -> None:
        self.log, self.threads = log, threads_per_kernel
        self._lock = threading.Lock()
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
        )
        self._process = subprocess.Popen(
            [sys.executable, "-m", "grader.fork_server", *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )

    def fork_kernel(self, argv: list[str], cwd: str, env: dict[str, str]) -> int:
        """Start a kernel with these ipykernel arguments; return its pid (also its process group)."""
        request = {"argv": argv, "cwd": cwd, "env": env, "threads": self.threads, "log": str(self.log)}
        with self._lock:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            reply = self._process.stdout.readline()
        if not reply:
            raise RuntimeError(f"the warm kernel process exited (status {self._process.poll()}); see {self.log}")
        return int(json.loads(reply)["pid"])

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU time so far of the warm process itself (its imports) and of the kernels it forked and reaped."""
        fields = Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        utime, stime, cutime, cstime = (int(value) / tick for value in fields[11:15])
        return utime + stime, cutime + cstime

    def close(self) -> None:
        """End the warm process; it kills every kernel still running."""
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process.stdout.close()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def worker_count(requested: int | None = None) -> int:
    """Submissions graded at once: as asked, or one per core."""
    return max(1, requested or os.cpu_count() or 1)


def start_warm_process(work_dir: Path, workers: int) -> ForkServer:
    """The fork server for a grading run: kernels log to work/logs/, torch threads shared out between workers."""
    logs = work_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    return ForkServer(logs / "kernels.log", threads_per_kernel=max(1, (os.cpu_count() or 1) // workers))


class ForkedKernelProcess:
    """The subset of subprocess.Popen that jupyter_client uses, for a kernel that is not our child."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                self.returncode = 0  # reaped by the warm process; its status is not ours to read
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ForkedProvisioner(LocalProvisioner):
    """Launches the kernel by asking the fork server, not by running the kernel spec's command."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> dict:
        argv = cmd[cmd.index("-m") + 2 :] if "-m" in cmd else cmd[1:]  # ipykernel's own arguments (-f FILE ...)
        env = kwargs.get("env") or dict(os.environ)
        cwd = str(kwargs.get("cwd") or os.getcwd())
        pid = FORK_SERVER.current().fork_kernel(argv, cwd, env)
        self.process = ForkedKernelProcess(pid)
        self.pid = self.pgid = pid
        self.cwd = cwd
        return self.connection_info


class ForkedKernelManager(AsyncKernelManager):
    """An AsyncKernelManager whose kernels come from the fork server of the current grading run."""

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = ForkedProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)


class _Current:
    """The fork server that ForkedKernelManager uses, set for the duration of a grading run."""

    def __init__(self) -> None:
        self._server: ForkServer | None = None

    def current(self) -> ForkServer:
        if self._server is None:
            raise RuntimeError("no warm kernel process is running (use `with FORK_SERVER.serving(server):`)")
        return self._server

    def set(self, server: ForkServer | None) -> None:
        self._server = server


FORK_SERVER = _Current()
