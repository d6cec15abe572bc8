"""The child's guard: what a watch of the submission's code (grader.observing.code_that_runs) cannot see by itself.

Every sandboxed child installs it (grader.inside_sandbox.fork_server) before it runs anything of the student's: an
audit hook, which Python has no way to remove. From then on it keeps apart the code the submission made at run time
(exec, eval, compile, types.FunctionType, a function's __code__ replaced, a module imported from a file it wrote)
from the code of the notebook's cells, of the installed libraries and of the grader: code is made at run time when
the frame that makes it, or a frame below it, runs the cells' code or code they made. namedtuple and dataclasses
generate code for a class; a module imported from the Python installation is the library's: neither is the
submission's. While a watch is open (`watching`), it notes how the watched code could have escaped it: a process
started (os.fork, os.posix_spawn, subprocess...), the profiler replaced or removed (sys.setprofile), and, where the
child has a PID namespace of its own, any process or thread started at all: the kernel numbers each new one in the
namespace, whatever made it. Once told (`refuse_processes`), it refuses every new process that Python starts.

What it does not protect against (docs/sandbox.md): a submission that rewrites the grader's own code in its process,
or reaches the interpreter's memory with ctypes; code it has namedtuple's or dataclasses' own helpers compile for it;
without a PID namespace of its own (no root), a thread started with `_thread` or a process started through C, which
Python raises no event for.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

from IPython.core.interactiveshell import InteractiveShell

# What starts a process, and what replaces the profiler: the audit events of Python 3.11 for them, and the notes
ESCAPES = {
    "os.fork": "a new process (os.fork)",
    "os.forkpty": "a new process (os.forkpty)",
    "os.posix_spawn": "a new process (os.posix_spawn)",
    "os.spawn": "a new process (os.spawn)",
    "os.exec": "a program run (os.exec)",
    "os.system": "a program run (os.system)",
    "subprocess.Popen": "a new process (subprocess)",
    "sys.setprofile": "the profiler replaced or removed (sys.setprofile)",
}
PROCESSES = set(ESCAPES) - {"sys.setprofile"}
MAKING = {"exec", "function.__new__", "object.__setattr__"}  # what hands over a code object about to run
LAST_PID = "/proc/sys/kernel/ns_last_pid"
GENERATORS = (collections.namedtuple, dataclasses._create_fn)  # the standard library's code generators for classes
CELL = InteractiveShell.run_code  # runs each of the notebook's cells


class Guard:
    """The audit hook's state: the code of the cells, the code the submission made, and the open watch's notes."""

    def __init__(self, own_pid_namespace: bool) -> None:
        self.cells: dict[int, types.CodeType] = {}  # by id: each code object stays alive, so ids stay unique
        self.made: dict[int, types.CodeType] = {}
        self.notes: list[str] | None = None  # the open watch's, None when none is open
        self.refusing = False  # whether a new process is refused (refuse_processes)
        self.own_pid_namespace = own_pid_namespace
        self.cell_code = CELL.__code__
        self.import_code = sys.modules["_frozen_importlib"]._call_with_frames_removed.__code__
        self.generators = {function.__code__ for function in GENERATORS}
        prefixes = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
        self.installation = tuple(dict.fromkeys(prefix.rstrip("/") + "/" for prefix in prefixes)) + ("<frozen ",)
        self.getframe, self.open, self.read, self.close = sys._getframe, os.open, os.read, os.close

    def hook(self, event: str, args: tuple) -> None:
        """The audit hook: called by Python for every audited event of the process, in the thread that raised it."""
        if event in ESCAPES:
            if self.notes is not None:
                self.notes.append(ESCAPES[event])
            if self.refusing and event in PROCESSES:
                raise PermissionError(f"{event}: the grading sandbox starts no process while the hidden tests run")
        elif event in MAKING:
            code = args[2] if event == "object.__setattr__" else args[0]
            if type(code) is types.CodeType and (event != "object.__setattr__" or args[1] == "__code__"):
                self.judge(code, self.getframe(0).f_back)  # the frame that runs exec... (None from C alone)

    def judge(self, code: types.CodeType, caller: types.FrameType | None) -> None:
        """Keep code about to run as the cells' (IPython runs a cell), the submission's (made by the cells' code or
        code they made) or neither (the grader's, a library's)."""
        maker = caller.f_code if caller is not None else None
        if maker in self.generators or maker is self.import_code and self.installed(code.co_filename):
            return
        frame: types.FrameType | None = caller
        while frame is not None:
            if id(frame.f_code) in self.cells or id(frame.f_code) in self.made:
                _keep(code, self.made)
                return
            frame = frame.f_back
        if maker is self.cell_code:
            _keep(code, self.cells)

    def installed(self, filename: str) -> bool:
        """Whether a module's file is the Python installation's (which the sandbox mounts read-only)."""
        return filename.startswith(self.installation) and "/.." not in filename

    def refuse_processes(self) -> None:
        """From now on, refuse every new process that Python starts (its audit event raises PermissionError): the
        hidden tests of a part with a "must not" rule run in this process alone, and a shortcut that forks for each
        call fails at once instead of running past the time limit."""
        self.refusing = True

    def made_at_run_time(self, code: types.CodeType) -> bool:
        return id(code) in self.made and self.made[id(code)] is code

    @contextmanager
    def watching(self) -> Iterator[list[str]]:
        """While the block runs, note (in the list it gets) each process started and each change of the profiler;
        where the child has a PID namespace of its own, note after it whether any process or thread was started."""
        notes: list[str] = []
        before = self.last_pid()
        self.notes = notes
        try:
            yield notes
        finally:
            self.notes = None
            if before != self.last_pid():
                notes.append("a new process or thread (the kernel counted it)")

    def last_pid(self) -> bytes:
        """The last PID (process or thread id) the kernel gave in this child's namespace; b"" without one."""
        if not self.own_pid_namespace:
            return b""
        fd = self.open(LAST_PID, os.O_RDONLY)
        try:
            return self.read(fd, 32)
        finally:
            self.close(fd)


def _keep(code: types.CodeType, where: dict[int, types.CodeType]) -> None:
    """A code object and every one nested in it (the functions and classes it defines)."""
    todo = [code]
    while todo:
        inner = todo.pop()
        where[id(inner)] = inner
        todo += [const for const in inner.co_consts if type(const) is types.CodeType]


GUARD: Guard | None = None  # this process's, once installed: an audit hook lasts as long as the process


def install(own_pid_namespace: bool) -> None:
    """Install the guard in this process (a child, before any of the submission's code runs)."""
    global GUARD
    GUARD = Guard(own_pid_namespace)
    sys.addaudithook(GUARD.hook)
