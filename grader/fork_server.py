"""The warm process: imports torch and the kernel machinery once, then forks one fresh kernel per request.

Run as `python -m grader.fork_server MODULE ...` by `grader.warm_kernels`. Protocol: one JSON request per line on
stdin ({"argv": [...], "cwd": "...", "env": {...}, "threads": N}), one JSON reply per line on stdout
({"pid": N}). End of stdin means the grading run is over: every kernel still alive is killed.

Fork safety: this process never starts a thread and never touches CUDA; it only imports. Each child starts its
own threads (ipykernel's) after the fork.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(preload: list[str]) -> None:
    for module in preload:
        importlib.import_module(module)
    children: set[int] = set()

    def reap(*_: object) -> None:
        while children:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            children.discard(pid)

    signal.signal(signal.SIGCHLD, reap)
    requests, replies = sys.stdin, sys.stdout
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _become_kernel(request)  # never returns
        children.add(pid)
        replies.write(json.dumps({"pid": pid}) + "\n")
        replies.flush()
    for pid in list(children):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _become_kernel(request: dict) -> None:
    """In the forked child: detach, get fresh randomness, and run an ipykernel on the given connection file."""
    code = 1
    try:
        os.setsid()  # its own process group, so the kernel and anything it starts can be killed together
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # die with the warm process
        for signum in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDWR)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(devnull, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _fresh_randomness(request["threads"])
        from ipykernel.kernelapp import IPKernelApp

        app = IPKernelApp.instance()
        app.initialize(request["argv"])
        app.start()
        code = 0
    finally:
        os._exit(code)


def _fresh_randomness(threads: int) -> None:
    """Give this kernel what a freshly started one has.

    Python's `random` and NumPy's global generator seed themselves from OS entropy at import; after a fork every
    child would share the warm process's state, so they are reseeded from entropy. torch's default generator
    starts at the same fixed seed in every fresh process and the warm process never draws from it, so it is left
    exactly as a new kernel has it.
    """
    import random

    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


if __name__ == "__main__":
    main(sys.argv[1:])
