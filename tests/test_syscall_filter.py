"""Every sandboxed child runs under the syscall allow-list (grader/syscall_filter.py): each call docs/sandbox.md lists
as refused is refused in a child, its threads and the processes it starts inherit the filter, and a call on no list
is refused too. (That an honest class of every assignment grades unchanged under it: tests/test_autograde.py, whose
graded classes check that their sandbox's children were filtered.)"""

from __future__ import annotations

import errno
import json
import os

import pytest

from grader.sandbox import Limits, Sandbox
from tests.integrity.vectors import FORBIDDEN_CALLS, SYSCALLS


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    with Sandbox(tmp_path_factory.mktemp("filtered"), limits=Limits(cell_seconds=60)) as running:
        assert running.syscall_filter, "libseccomp (Debian's libseccomp2) and pyseccomp are part of the course"
        yield running


def printed(sandbox: Sandbox, source: str, tag: str) -> dict:
    with sandbox.child() as child:
        reply = child.run(source)
    text = "".join(o.get("text", "") for o in reply["outputs"] if o["output_type"] == "stream")
    errors = [f"{o['ename']}: {o['evalue']}" for o in reply["outputs"] if o["output_type"] == "error"]
    lines = [line for line in text.splitlines() if line.startswith(f"INTEGRITY-{tag} ")]
    assert lines, f"the child printed no report: {errors}"
    return json.loads(lines[0].split(" ", 1)[1])


def test_every_listed_call_is_refused_in_a_child(sandbox: Sandbox) -> None:
    """Keyrings, namespaces (unshare, setns, clone with CLONE_NEWUSER), mount, umount, pivot_root, chroot, bpf,
    perf_event_open, userfaultfd, io_uring, kernel modules, kexec, ptrace, another process's memory, personality
    changes, handles to any file, the new mount API, packet sockets: each refused before it reaches the kernel (the
    arguments are such that the kernel itself would answer anything but EPERM); clone3 says it does not exist, so
    that the C library falls back to clone, whose flags are checked."""
    report = printed(sandbox, SYSCALLS + FORBIDDEN_CALLS, "CALLS")
    expected = {name: os.strerror(errno.ENOSYS if name == "clone3" else errno.EPERM) for name in report}
    assert report == expected
    assert len(report) == FORBIDDEN_CALLS.count('": (')


INHERITED = (
    SYSCALLS
    + """
import os, subprocess, sys, threading, torch
torch.set_num_threads(2)
torch.randn(512, 512) @ torch.randn(512, 512)
def status(path):
    return [line.split()[1] for line in open(path) if line.startswith("Seccomp:")][0]
seen = {}
def in_thread():
    seen.update(thread=status("/proc/thread-self/status"), key=_call(248, b"user", b"k", b"v", 1, -3))
worker = threading.Thread(target=in_thread)
worker.start(); worker.join()
tasks = sorted(os.listdir("/proc/self/task"))
seen["tasks"] = sorted({status(f"/proc/self/task/{t}/status") for t in tasks})
seen["count"] = len(tasks)
code = (
    "import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.unshare(0x10000000); "
    "print(r, ctypes.get_errno(), [x.split()[1] for x in open('/proc/self/status') if x.startswith('Seccomp:')][0])"
)
seen["process"] = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
# syslog, acct, sethostname, sync, inotify_init1, io_setup, and a number no kernel has
seen["unlisted"] = [_call(103, 3, None, 0), _call(163, None), _call(170, b"x", 1), _call(162), _call(294, 0)]
seen["unlisted"] += [_call(206, 1, None), _call(999)]
print("INTEGRITY-INHERITED " + _json.dumps(seen))
"""
)


def test_threads_processes_and_unlisted_calls(sandbox: Sandbox) -> None:
    """torch's threads, a thread of the student's and a process it starts are all filtered (mode 2); and calls on no
    list at all (syslog, acct, sethostname, sync, inotify, Linux AIO, a number no kernel has) are refused: it is an
    allow-list."""
    seen = printed(sandbox, INHERITED, "INHERITED")
    assert seen["thread"] == "2" and seen["key"] == os.strerror(errno.EPERM)
    assert seen["tasks"] == ["2"] and seen["count"] >= 2, seen
    assert seen["process"] == ["-1", str(errno.EPERM), "2"]
    assert seen["unlisted"] == [os.strerror(errno.EPERM)] * 7
