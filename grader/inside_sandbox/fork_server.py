"""The warm process: imports torch and IPython once, then forks one fresh child per request.

Started by grader.sandbox (inside bubblewrap when it is available) as `python -m fork_server CONTROL_FD FILTER_FD
SCRATCH PRELOAD...`; FILTER_FD holds the children's syscall filter, a compiled seccomp program
(grader.syscall_filter; empty for none), read once. The control socket (SOCK_SEQPACKET, one JSON message per packet)
takes two requests:
- {"op": "spawn", "id": N, "uid": U or null, "isolate": bool, "limits": {...}, "threads": T, "env": {...}}: fork a
  child that runs grader.inside_sandbox.cell_runner; the reply {"pid": P} carries the grader's end of the child's
  socket.
- {"op": "finish", "id": N, "died": bool}: stop that child and everything it started; the reply {"ended": "..."}
  says how it ended.
- {"op": "warm", "source": "..."}: run an exercise's warm_up here, once (see _warm_up), so that every child forked
  afterwards starts with what torch readies on first use; the reply is {"warmed": true}.
A request that fails is answered {"error": "..."} and the server goes on. End of the control socket ends the run:
every child still alive is killed.

A child is forked before it is asked for: after each spawn the server forks a spare (isolated as the last request
was), which waits on its connection for its request (id, uid, limits, environment) and only then becomes that
child. So the forks, the namespaces and their init are made while the grader works on something else.

An isolated child (as root inside bubblewrap) is three processes. Its keeper unshares a PID, IPC, mount, network and
UTS namespace, then spawns the namespace's init (PID 1: `sleep infinity` with SIGCHLD ignored, so the kernel reaps
what is left to it; spawned, not forked, so none of this process's pages are copied for it) and forks the worker
(PID 2). The worker mounts its own /proc, one size-limited tmpfs for its home and /dev/shm, sets its namespace's IPC
limits, drops to a uid of its own, sets its limits, installs the syscall filter and serves cells. The server ends a
child by killing its init: the kernel then kills every process of the namespace, whatever it did to hide, and the
keeper (which the student's code can neither see nor signal) exits once they are all gone, the way the worker ended.
Nothing of the namespace outlives it.

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
import shutil
import signal
import socket
import sys
import time
from dataclasses import dataclass

import framing

PR_SET_PDEATHSIG, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 1, 22, 38
SECCOMP_MODE_FILTER = 2
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
MNT_DETACH = 2
LIBC = ctypes.CDLL(None, use_errno=True)
SLEEP = shutil.which("sleep") or "/bin/sleep"  # an isolated child's init
# The IPC of a child's namespace: SysV shared memory and message queues within a small budget, POSIX queues few.
IPC_LIMITS = {
    "kernel/shmmax": 64 << 20,
    "kernel/shmall": (64 << 20) // resource.getpagesize(),
    "kernel/shmmni": 64,
    "kernel/msgmni": 16,
    "kernel/msgmnb": 65536,
    "fs/mqueue/queues_max": 16,
}


@dataclass(frozen=True)
class Running:
    """A child the server forked: its keeper (or, not isolated, the child itself), the init of its namespace, and
    its memory cgroup."""

    pid: int
    init: int | None
    cgroup: str | None = None


class _Program(ctypes.Structure):
    """struct sock_fprog: a seccomp BPF program for prctl (its instructions kept alive in `code`)."""

    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    @classmethod
    def of(cls, compiled: bytes) -> _Program | None:
        """The program of these compiled instructions, made once here for every child; None for none."""
        if not compiled:
            return None
        code = ctypes.create_string_buffer(compiled, len(compiled))
        program = cls(len(compiled) // 8, ctypes.addressof(code))
        program.code = code
        return program


def main(control_fd: int, filter_fd: int, scratch: str, preload: list[str]) -> None:
    for module in preload:
        importlib.import_module(module)
    import cell_runner
    import guard  # noqa: F401 - imported here once; each child installs it (_serve)

    with os.fdopen(filter_fd, "rb") as program:  # written by the grader while this process imported
        syscalls = _Program.of(program.read())

    shell = cell_runner.new_shell()  # built once; every child gets its own copy, nothing run in it yet
    gc.freeze()  # the collector leaves what is here alone, so children do not copy these pages by touching them
    control = socket.socket(fileno=control_fd)
    children: dict[int, Running] = {}
    spares: dict[bool, tuple[socket.socket, Running]] = {}  # by whether they are isolated
    while True:
        packet = control.recv(1 << 16)  # grader.sandbox.CONTROL_PACKET
        if not packet:
            break
        fds: list[int] = []
        isolate = None
        try:
            request = json.loads(packet)
            if request["op"] == "spawn":
                isolate = bool(request.get("isolate"))
                waiting = _alive(spares.pop(isolate, None)) or _fork_child(isolate, scratch, shell, syscalls, control)
                connection, children[request["id"]] = _start(waiting, request)
                reply, fds = {"pid": children[request["id"]].pid}, [connection.fileno()]
            elif request["op"] == "warm":
                _warm_up(request["source"])
                _drop(spares)  # forked cold: the next spawns fork warm ones
                reply = {"warmed": True}
            elif request["op"] == "finish":
                grace = 1.0 if request.get("died") else 0.0
                reply = {"ended": _finish(children.pop(request["id"]), grace)}
            else:
                reply = {"error": f"unknown request {request['op']!r}"}
        except Exception as error:  # noqa: BLE001 - one failed request must not end the server of a whole run
            reply = {"error": f"{type(error).__name__}: {error}"}
        message = json.dumps(reply).encode()
        if fds:
            socket.send_fds(control, [message], fds)
            connection.close()
        else:
            control.send(message)
        if isolate is not None and isolate not in spares:
            with contextlib.suppress(Exception):  # no spare: the next spawn forks its child itself, and says why not
                spares[isolate] = _fork_child(isolate, scratch, shell, syscalls, control)
    _drop(spares)
    for child in children.values():
        _finish(child)


def _warm_up(source: str) -> None:
    """Define and call `warm_up()` from this text (an exercise's, never a solution's code): torch's first use of some
    operations (an LSTM's backward, say) costs every fresh process tens of milliseconds, paid here once instead.
    torch's generator and thread count are left as they were: each child still starts like a fresh kernel."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            namespace: dict = {}
            exec(compile(source, "warm_up", "exec"), namespace)
            namespace["warm_up"]()
    finally:
        torch.set_num_threads(threads)
    del namespace
    gc.collect()
    gc.freeze()


def _fork_child(
    isolate: bool, scratch: str, shell, syscalls: _Program | None, control: socket.socket
) -> tuple[socket.socket, Running]:
    """Fork a child that waits for its request on its connection; the server's end of that connection, and it."""
    ours, theirs = socket.socketpair()
    report_out, report_in = os.pipe()
    pid = os.fork()
    if pid == 0:
        control.close()
        ours.close()
        os.close(report_out)
        _become_child(theirs, report_in, isolate, scratch, shell, syscalls)  # never returns
    theirs.close()
    os.close(report_in)
    with os.fdopen(report_out, "rb") as report:
        said = report.read(1 << 12)  # the keeper writes the init's pid, or what failed; a plain child nothing
    if not said:
        return ours, Running(pid, None)
    found = json.loads(said)
    if "init" not in found:
        ours.close()
        _finish(Running(pid, None))
        raise RuntimeError(f"the child could not be isolated: {found.get('error')}")
    return ours, Running(pid, int(found["init"]))


def _drop(spares: dict[bool, tuple[socket.socket, Running]]) -> None:
    """Let every spare child go (it ends on its closed connection, or is killed) and forget them."""
    for connection, spare in spares.values():
        connection.close()
        _finish(spare)
    spares.clear()


def _alive(spare: tuple[socket.socket, Running] | None) -> tuple[socket.socket, Running] | None:
    """A spare child still waiting for its request (None if there is none, or it ended meanwhile)."""
    if spare is None or os.waitpid(spare[1].pid, os.WNOHANG)[0] == 0:
        return spare
    spare[0].close()  # it ended (reaped just now) before it ran anything; its keeper outlives nothing of it
    return None


def _start(waiting: tuple[socket.socket, Running], request: dict) -> tuple[socket.socket, Running]:
    """Give a waiting child its request: it becomes child request["id"]."""
    connection, child = waiting
    framing.send(connection, request)
    cgroup = os.path.join(request["cgroup"], str(request["id"])) if request.get("cgroup") else None
    return connection, Running(child.pid, child.init, cgroup)


def _finish(child: Running, grace: float = 0.0) -> str:
    """Kill a child and everything it started; how it ended.

    `grace`: seconds to wait first for a child that closed its connection to finish exiting by itself.
    """
    done, status = os.waitpid(child.pid, os.WNOHANG)
    deadline = time.monotonic() + grace
    while not done and time.monotonic() < deadline:
        time.sleep(0.01)
        done, status = os.waitpid(child.pid, os.WNOHANG)
    ended = _describe(status) if done else "stopped by the grader"
    if not done:
        # An isolated child: its init's death kills its namespace, and its keeper exits once that is empty.
        # A plain child: it and its process group.
        targets = [child.init] if child.init is not None else [child.pid, -child.pid]
        for target in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(target, signal.SIGKILL)
        os.waitpid(child.pid, 0)
    if child.cgroup is not None:
        with contextlib.suppress(OSError):
            os.rmdir(child.cgroup)  # empty now: every process of the child is gone
    return ended


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        names = {
            signal.SIGSEGV: "a segmentation fault",
            signal.SIGKILL: "SIGKILL (a limit or the grader)",
            signal.SIGXCPU: "its CPU time limit",
            signal.SIGXFSZ: "its file size limit",
        }
        try:
            name = signal.Signals(number).name
        except ValueError:  # real-time signals have no name
            name = f"signal {number}"
        return f"killed by {names.get(number, name)}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _become_child(
    connection: socket.socket, report: int, isolate: bool, scratch: str, shell, syscalls: _Program | None
) -> None:
    code = 1
    try:
        os.setsid()  # its own process group, so the child and anything it starts can be killed together
        _die_with_parent()
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as oom:
            oom.write("1000")  # short of memory, the kernel kills students' processes first, not the grader
        for signum in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(signum, signal.SIG_DFL)
        _keep_only_fds(connection.fileno(), report)
        if isolate:
            _keep(connection, report, scratch, shell, syscalls)  # never returns
        os.close(report)
        request = _request(connection)
        _serve(connection, request, os.path.join(scratch, str(request["id"])), shell, syscalls, isolated=False)
        code = 0
    finally:
        os._exit(code)


def _keep(connection: socket.socket, report: int, scratch: str, shell, syscalls: _Program | None) -> None:
    """The keeper of an isolated child: new namespaces, their init, the worker; then wait and end as it ended."""
    try:
        _check(LIBC.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS), "unshare")
        _check(LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    except OSError as error:
        os.write(report, json.dumps({"error": str(error)}).encode())
        os._exit(1)
    init = _spawn_init()
    worker = os.fork()
    if worker == 0:
        os.close(report)
        code = 1
        try:
            _serve(connection, _request(connection), scratch, shell, syscalls, isolated=True)
            code = 0
        finally:
            os._exit(code)
    os.write(report, json.dumps({"init": init}).encode())
    os.close(report)
    connection.close()
    _pid, status = os.waitpid(worker, 0)
    with contextlib.suppress(ProcessLookupError):
        os.kill(init, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):  # reaped already, had it ended while its SIGCHLD was ignored here
        os.waitpid(init, 0)  # returns once every process of the namespace is gone
    _end_like(status)


def _request(connection: socket.socket) -> dict:
    """The request that makes a waiting child a particular child (the server sends it first on the connection)."""
    request = framing.receive(connection, limit=1 << 20)
    if type(request) is not dict:
        os._exit(1)  # the server let this spare go
    return request


def _spawn_init() -> int:
    """PID 1 of the namespace just unshared: `sleep infinity`, with SIGCHLD ignored (kept across exec), so the kernel
    reaps whatever is left to it. It holds no file but /dev/null, and dies with its namespace, killed by its keeper
    or the server (or with bubblewrap's own namespace, if the server dies)."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        return os.posix_spawn(SLEEP, [SLEEP, "infinity"], {})
    finally:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)


def _end_like(status: int) -> None:
    """Exit as the worker did: killed by the same signal, or with the same status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _serve(
    connection: socket.socket, request: dict, home: str, shell, syscalls: _Program | None, isolated: bool
) -> None:
    """Become the worker: own files (and namespaces when isolated), own uid, limits, the syscall filter, the guard
    (grader.inside_sandbox.guard); then run cells."""
    uid, limits = request.get("uid"), request["limits"]
    if isolated:
        if request.get("cgroup"):
            _join_memory_cgroup(os.path.join(request["cgroup"], str(request["id"])), limits["memory_bytes"])
            _check(LIBC.umount2(request["cgroup"].encode(), MNT_DETACH), "unmounting the cgroups")
        home = _own_filesystems(home, limits)
    else:
        os.mkdir(home, 0o700)  # made here, still with the server's rights: no child can make or take another's
    if uid is not None:
        os.chown(home, uid, uid)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # drops every capability
    _die_with_parent()  # after setuid, which clears it
    os.chdir(home)
    os.environ.clear()
    os.environ.update(request["env"], HOME=home, TMPDIR=home)
    _apply_limits(limits)
    _filter_syscalls(syscalls)  # before any thread starts: every thread and process of the child inherits it
    _fresh_randomness(request["threads"])
    import cell_runner
    import guard

    guard.install(own_pid_namespace=isolated)  # last: it judges all code that runs from here on
    cell_runner.serve(connection, shell)


def _join_memory_cgroup(folder: str, limit: int) -> None:
    """Make a memory cgroup of its own with this limit and move into it: all the child's memory counts there."""
    os.mkdir(folder)
    with open(os.path.join(folder, "memory.limit_in_bytes"), "w") as setting:
        setting.write(str(limit))
    with contextlib.suppress(OSError), open(os.path.join(folder, "memory.memsw.limit_in_bytes"), "w") as setting:
        setting.write(str(limit))  # where swap is counted too
    with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
        procs.write("0")  # this process; everything it starts inherits the group


def _own_filesystems(scratch: str, limits: dict) -> str:
    """The worker's /proc, and one tmpfs (the child's whole disk budget) for its home and /dev/shm. The sandbox's
    /tmp, which no child may write to, stays: the Python installation may be bound under it."""
    _check(LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mounting /proc")
    _check(LIBC.umount2(scratch.encode(), MNT_DETACH), "unmounting the shared scratch")  # the host's folder
    budget = f"size={limits['disk_bytes']},nr_inodes={limits['inodes']},mode=0755".encode()
    _check(LIBC.mount(b"tmpfs", scratch.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, budget), "mounting the scratch")
    home = os.path.join(scratch, "home")
    os.mkdir(home, 0o700)
    shared = os.path.join(scratch, "shm")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    if os.path.isdir("/dev/shm"):
        _check(LIBC.mount(shared.encode(), b"/dev/shm", None, MS_BIND, None), "binding /dev/shm")
    for name, value in IPC_LIMITS.items():
        with open(f"/proc/sys/{name}", "w") as setting:
            setting.write(str(value))
    return home


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _die_with_parent() -> None:
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _keep_only_fds(*keep: int) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)  # what is written to the file descriptors themselves goes nowhere
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 16)


def _apply_limits(limits: dict) -> None:
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    settings = {
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_AS: mapped + limits["memory_bytes"],  # on top of what the warm process already maps
        resource.RLIMIT_FSIZE: limits["file_bytes"],
        resource.RLIMIT_NOFILE: limits["open_files"],
        resource.RLIMIT_CPU: limits["cpu_seconds"],
        resource.RLIMIT_MSGQUEUE: 1 << 18,  # bytes in POSIX message queues
    }
    if limits.get("processes"):
        settings[resource.RLIMIT_NPROC] = limits["processes"]
    for kind, value in settings.items():
        _soft, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))


def _filter_syscalls(program: _Program | None) -> None:
    """Install the seccomp filter (nothing for None): two system calls. No new privileges first: no setuid program
    can then be run, and no capability is needed to install it."""
    if program is None:
        return
    _check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "forbidding new privileges")
    _check(
        LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0), "installing the syscall filter"
    )


def _fresh_randomness(threads: int) -> None:
    """Reseed what a fresh kernel seeds from entropy; torch's default generator starts fixed in any new process."""
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # every child is reaped and nothing is left to write: torch's and IPython's teardown would take 0.1 s
