"""The warm process: imports torch and IPython once, then forks one fresh child per request.

Started by grader.sandbox (inside bubblewrap when it is available) as
`python -m fork_server CONTROL_FD SCRATCH PRELOAD...`. The control socket (SOCK_SEQPACKET, one JSON message per
packet) takes three requests:
- {"op": "spawn", "id": N, "uid": U or null, "limits": {...}, "threads": T, "env": {...}}: fork a child that runs
  grader.inside_sandbox.cell_runner; the reply {"pid": P} carries the grader's end of the child's socket.
- {"op": "finish", "id": N}: stop that child and everything it started; the reply {"ended": "..."} says how it ended.
- {"op": "remember", "sources": [...]}: let IPython transform these cells now, once, for every later child.
End of the control socket ends the run: every child still alive is killed.

Fork safety: this process never starts a thread and never touches CUDA before forking.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import random
import resource
import signal
import socket
import sys
import time

PR_SET_PDEATHSIG = 1


def main(control_fd: int, scratch: str, preload: list[str]) -> None:
    for module in preload:
        importlib.import_module(module)
    import cell_runner

    shell = cell_runner.new_shell()  # built once; every child gets its own copy, nothing run in it yet
    gc.freeze()  # the collector leaves what is here alone, so children do not copy these pages by touching them
    control = socket.socket(fileno=control_fd)
    children: dict[int, tuple[int, int | None]] = {}  # id -> (pid, uid)
    while True:
        packet = control.recv(1 << 16)  # grader.sandbox.CONTROL_PACKET
        if not packet:
            break
        request = json.loads(packet)
        if request["op"] == "spawn":
            ours, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                control.close()
                ours.close()
                _become_child(theirs, request, scratch, shell)  # never returns
            theirs.close()
            children[request["id"]] = (pid, request.get("uid"))
            socket.send_fds(control, [json.dumps({"pid": pid}).encode()], [ours.fileno()])
            ours.close()
        elif request["op"] == "remember":
            shell.remember(request["sources"])  # adds to what earlier requests remembered
            gc.freeze()
            control.send(b"{}")
        elif request["op"] == "finish":
            pid, uid = children.pop(request["id"])
            ended = _finish(pid, uid, grace=1.0 if request.get("died") else 0.0)
            control.send(json.dumps({"ended": ended}).encode())
    for pid, uid in children.values():
        _finish(pid, uid)


def _finish(pid: int, uid: int | None, grace: float = 0.0) -> str:
    """Kill a child, its process group and (when it ran as a uid of its own) every process of that uid.

    `grace`: seconds to wait first for a child that closed its connection to finish exiting by itself.
    """
    done, status = os.waitpid(pid, os.WNOHANG)
    deadline = time.monotonic() + grace
    while not done and time.monotonic() < deadline:
        time.sleep(0.01)
        done, status = os.waitpid(pid, os.WNOHANG)
    ended = _describe(status) if done else "stopped by the grader"
    for target in (pid, -pid):
        try:
            os.kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if uid is not None:
        _kill_all_of(uid)
    if not done:
        os.waitpid(pid, 0)
    return ended


def _kill_all_of(uid: int) -> None:
    """Kill every process running as `uid` (a background process that left the child's group included)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    os.kill(int(entry), signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        names = {
            signal.SIGSEGV: "a segmentation fault",
            signal.SIGKILL: "SIGKILL (a limit or the grader)",
            signal.SIGXCPU: "its CPU time limit",
            signal.SIGXFSZ: "its file size limit",
        }
        return f"killed by {names.get(number, signal.Signals(number).name)}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _become_child(connection: socket.socket, request: dict, scratch: str, shell) -> None:
    code = 1
    try:
        os.setsid()  # its own process group, so the child and anything it starts can be killed together
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as oom:
            oom.write("1000")  # short of memory, the kernel kills students' processes first, not the grader
        for signum in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        _keep_only_fd(connection.fileno())
        home = os.path.join(scratch, str(request["id"]))
        os.mkdir(home, 0o700)  # made here, still with the server's rights: no child can make or take another's
        uid = request.get("uid")
        if uid is not None:
            os.chown(home, uid, uid)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)  # drops every capability
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
        os.chdir(home)
        os.environ.clear()
        os.environ.update(request["env"], HOME=home, TMPDIR=home)
        _apply_limits(request["limits"])
        _fresh_randomness(request["threads"])
        import cell_runner

        cell_runner.serve(connection, shell)
        code = 0
    finally:
        os._exit(code)


def _keep_only_fd(keep: int) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)  # what is written to the file descriptors themselves goes nowhere
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)


def _apply_limits(limits: dict) -> None:
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    settings = {
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_AS: mapped + limits["memory_bytes"],  # on top of what the warm process already maps
        resource.RLIMIT_FSIZE: limits["file_bytes"],
        resource.RLIMIT_NOFILE: limits["open_files"],
        resource.RLIMIT_CPU: limits["cpu_seconds"],
    }
    if limits.get("processes"):
        settings[resource.RLIMIT_NPROC] = limits["processes"]
    for kind, value in settings.items():
        resource.setrlimit(kind, (value, value))


def _fresh_randomness(threads: int) -> None:
    """Reseed what a fresh kernel seeds from entropy; torch's default generator starts fixed in any new process."""
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
