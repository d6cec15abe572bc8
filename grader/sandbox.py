"""The grading sandbox: one warm fork server per grading run, inside bubblewrap, and the children it forks.

Inside bubblewrap the server and its children see the Python installation and the virtual environment read-only,
grader/inside_sandbox/ read-only, an empty /tmp, of /sys only the processors' and memory nodes' topology, and one
scratch folder; not this repository (solutions, tests, gradebook, other students' submissions), not the network (a
network namespace of their own with no interface but loopback), not the host's processes (a PID namespace), not the
host's control groups. Every child runs under a syscall allow-list (grader.syscall_filter), bubblewrap or not. Run
as root, each child is also isolated from every other (see grader.inside_sandbox.fork_server): PID, IPC, mount,
network and UTS namespaces of its own, whose end kills everything it started; one size-limited tmpfs for its home
and /dev/shm; a user id of its own. Every child has resource limits (memory, CPU time, file size, disk, open files,
processes) and the grader puts a wall-clock limit, by its own clock, on every cell and every notebook. Without
bubblewrap the same server runs unconfined, with a warning. A server that dies or stops answering is a
SandboxFailure (the grader's fault, never a student's): `restart` starts a new one. The whole picture, with what is
not protected: docs/sandbox.md.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from grader.inside_sandbox import framing
from grader.memory_cgroup import make_run_cgroup, remove_run_cgroup
from grader.syscall_filter import compiled as compiled_syscall_filter

INSIDE = Path(__file__).resolve().parent / "inside_sandbox"
PRELOAD = ["numpy", "numpy.random", "torch", "torch.nn", "IPython"]
KERNEL_CHOICE = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS")  # passed on to the server and every child
UID_BASE = 1_500_000  # far above any account's or subordinate range
UID_RUNS = 4096  # the children of one process take uids from a block of UID_BLOCK of their own, picked by its pid
UID_BLOCK = 1 << 16
# Every sandbox of this process (a grading run's, the Formgrader's one per notebook, a Dask worker's) numbers its
# children's uids from this one counter: no two children of the process ever share a uid.
_CHILD_UIDS = itertools.count(1)
_CHILD_UIDS_LOCK = threading.Lock()
# What of the host's /sys a child sees: the processors and memory nodes (torch and OpenMP read their topology),
# nothing else (no control group, so nothing of another child or of the host's other work).
SYS_SEEN = ("/sys/devices/system/cpu", "/sys/devices/system/node")
MOUNTED_INSIDE, SCRATCH_INSIDE, CGROUP_INSIDE = "/opt/grader", "/scratch", "/opt/cgroup"
CONTROL_PACKET = 1 << 16  # the largest request or reply on the control socket (see fork_server)
CONTROL_SECONDS = 60.0  # a server that takes longer to answer a request is unhealthy


@dataclass(frozen=True)
class Limits:
    """What one child may use."""

    cell_seconds: float = 120.0  # wall clock, per cell
    notebook_seconds: float = 600.0  # wall clock for the child's whole life, and its CPU seconds
    memory_mb: int = 1024  # address space of each process on top of the warm process's; all its memory together
    # (processes, files, shared memory) where a memory cgroup can be made
    file_mb: int = 64  # largest file it may write
    disk_mb: int = 256  # all its files together (home, /tmp, /dev/shm: one tmpfs; only where children are isolated)
    inodes: int = 10_000  # files and folders it may make there
    processes: int = 16  # processes and threads of its uid (only where children get a uid of their own)
    open_files: int = 256
    reply_mb: int = 64  # largest message the grader reads from it

    def for_child(self, own_uid: bool) -> dict:
        return {
            "memory_bytes": self.memory_mb << 20,
            "file_bytes": self.file_mb << 20,
            "disk_bytes": self.disk_mb << 20,
            "inodes": self.inodes,
            "open_files": self.open_files,
            "cpu_seconds": int(self.notebook_seconds) + 1,
            "processes": self.processes if own_uid else 0,
        }


class SandboxFailure(Exception):
    """The sandbox itself failed (its server died or stopped answering): nothing a submission is to blame for.

    `generation`: the server that failed (see Sandbox.restart).
    """

    def __init__(self, message: str, generation: int) -> None:
        super().__init__(message)
        self.generation = generation


class ChildDied(Exception):
    """The child ended (or was ended) before it answered; the message says how."""

    kind = "the child died"  # the same for every submission (the class's common mistakes), unlike the message


class CellTimeout(Exception):
    """A request ran past its wall-clock limit; the child has been killed."""

    kind = "it ran past its time limit"


def bubblewrap_available() -> bool:
    """True where bubblewrap is installed and can make a sandbox here (it needs user namespaces, or root)."""
    if not shutil.which("bwrap"):
        return False
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--proc", "/proc", "--dev", "/dev", "true"],
        capture_output=True,
    )
    return probe.returncode == 0


class Sandbox:
    """The fork server of one grading run (see grader.inside_sandbox.fork_server), shared by every worker thread."""

    def __init__(self, run_dir: Path, threads_per_child: int = 1, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.threads = threads_per_child
        self.confined = bubblewrap_available()
        if not self.confined:
            warnings.warn(
                "bubblewrap (bwrap) is not available: grading kernels run unconfined, with resource limits only; "
                "they can read the repository and reach the network. Install the Debian package bubblewrap.",
                stacklevel=2,
            )
        self.own_uids = self.confined and os.geteuid() == 0  # outside it, another uid could not read /root
        # Two runs at once (other work folders) never give two children one uid, nor one process count.
        self.uid_base = UID_BASE + (os.getpid() % UID_RUNS) * UID_BLOCK
        self.syscall_filter = b""  # compiled while the first server imports torch (see _start)
        if self.confined:
            _check_visible_inside(Path(sys.prefix), Path(sys.base_prefix))
        self.scratch = run_dir / "scratch"
        shutil.rmtree(self.scratch, ignore_errors=True)  # what a killed run left: children are numbered from 1 again
        self.scratch.mkdir(parents=True)
        os.chmod(self.scratch, 0o755 if self.own_uids else 0o700)  # children write only in their own folders
        self.cgroup = make_run_cgroup() if self.own_uids else None  # each isolated child's memory, all of it
        self._lock = threading.Lock()
        self._count = 0
        self.environment = self._environment(MOUNTED_INSIDE if self.confined else str(INSIDE))  # every child's too
        self.transformed: dict[str, str] = {}  # cell source -> IPython's transformation, made here (see prepare)
        self.generation = 0  # how many servers this run has started
        self.warm_ups: list[str] = []  # the warm_up functions every server of this run ran (see warm_up)
        self._start()

    def _start(self) -> None:
        """Start a warm server (the caller holds the lock, or nothing else uses the sandbox yet)."""
        self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control.settimeout(CONTROL_SECONDS)
        program, writing = os.pipe()  # the syscall filter, read once by the server (a few KiB: the pipe holds it)
        scratch = SCRATCH_INSIDE if self.confined else str(self.scratch)
        command = [sys.executable, "-m", "fork_server", str(theirs.fileno()), str(program), scratch, *PRELOAD]
        if self.confined:
            command = self._bubblewrap() + command
        try:
            with open(self.scratch.parent / "sandbox.log", "ab") as log:
                self._process = subprocess.Popen(
                    command,
                    pass_fds=[theirs.fileno(), program],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=self.environment,
                    cwd=scratch if not self.confined else None,
                )
        except BaseException:
            os.close(writing)
            raise
        finally:
            os.close(program)
        theirs.close()
        # Sent while the server imports; one that died already is found out by the first request (SandboxFailure).
        with contextlib.suppress(BrokenPipeError), open(writing, "wb", buffering=0) as sending:
            self.syscall_filter = self.syscall_filter or _syscall_filter()
            sending.write(self.syscall_filter)
        self.generation += 1
        for source in self.warm_ups:
            self._exchange({"op": "warm", "source": source})

    def restart(self, generation: int) -> None:
        """Replace server number `generation` with a new one if it is dead or unhealthy (once, however many ask)."""
        with self._lock:
            if generation != self.generation:
                return  # another worker restarted it already
            self._control.close()
            self._process.kill()
            self._process.wait()
            self._start()

    def _bubblewrap(self) -> list[str]:
        command = ["bwrap", "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid", "--unshare-ipc"]
        command += ["--unshare-uts", "--unshare-cgroup-try", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for system in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"):
            command += ["--ro-bind-try", system, system]
        for folder in ("/sys", "/sys/devices", "/sys/devices/system"):  # made by bwrap, readable by a child's uid
            command += ["--perms", "0755", "--dir", folder]
        for seen in SYS_SEEN:
            command += ["--ro-bind-try", seen, seen]
        for python in dict.fromkeys([sys.base_prefix, sys.prefix]):
            for folder in reversed(Path(python).parents[:-1]):  # made by bwrap, readable by a child's uid
                command += ["--perms", "0755", "--dir", str(folder)]
            command += ["--ro-bind", python, python]
        command += ["--ro-bind", str(INSIDE), MOUNTED_INSIDE, "--bind", str(self.scratch), SCRATCH_INSIDE]
        if self.cgroup is not None:
            command += ["--bind", str(self.cgroup), CGROUP_INSIDE]
        command += ["--chdir", SCRATCH_INSIDE]
        if self.own_uids:  # the server's, for isolating children; their workers drop them all
            for capability in ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN", "CAP_SYS_ADMIN"):
                command += ["--cap-add", capability]
        return command

    @staticmethod
    def _environment(python_path: str) -> dict[str, str]:
        return {
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "LANG": "C.UTF-8",
            "PYTHONPATH": python_path,
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": "/tmp/matplotlib",
            "OMP_NUM_THREADS": "1",
            # the CPU kernels torch and MKL are told to use, where the instructor forces them (see `make portability`)
            **{name: os.environ[name] for name in KERNEL_CHOICE if name in os.environ},
        }

    def _ask(self, request: dict, generation: int) -> tuple[dict, list[int]]:
        """The reply of server number `generation`; SandboxFailure if it is not the current one, is dead, does not
        answer in time, or says it failed."""
        with self._lock:
            if generation != self.generation:
                raise SandboxFailure("the sandbox's server was restarted while this child ran", generation)
            return self._exchange(request)

    def _exchange(self, request: dict) -> tuple[dict, list[int]]:
        """The current server's reply (the caller holds the lock, or nothing else uses the sandbox yet)."""
        try:
            self._control.send(json.dumps(request).encode())
            packet, fds, _flags, _address = socket.recv_fds(self._control, CONTROL_PACKET, 1)
        except OSError as error:  # a timeout included
            why = f"the sandbox's server did not answer ({type(error).__name__})"
            raise SandboxFailure(why, self.generation) from None
        if not packet:
            raise SandboxFailure(f"the sandbox's server ended (status {self._process.poll()})", self.generation)
        reply = json.loads(packet)
        if "error" in reply:
            for fd in fds:
                os.close(fd)
            raise SandboxFailure(f"the sandbox's server failed: {reply['error']}", self.generation)
        return reply, fds

    @contextmanager
    def child(self, env: dict[str, str] | None = None) -> Iterator[Child]:
        """A fresh child forked from the warm server, killed (with all it started) when the block ends."""
        with self._lock:
            self._count += 1
            number, generation = self._count, self.generation
        uid = self.uid_base + _next_child_uid() % UID_BLOCK if self.own_uids else None
        environment = {**self.environment, **(env or {})}
        request = {"op": "spawn", "id": number, "uid": uid, "threads": self.threads, "env": environment}
        request |= {"isolate": self.own_uids, "limits": self.limits.for_child(uid is not None)}
        request["cgroup"] = CGROUP_INSIDE if self.cgroup is not None else None
        _reply, fds = self._ask(request, generation)
        child = Child(self, number, generation, socket.socket(fileno=fds[0]))
        try:
            yield child
        finally:
            child.close()
            shutil.rmtree(self.scratch / str(number), ignore_errors=True)

    def prepare(self, sources: list[str]) -> None:
        """Transform these cells (IPython's input transformation) once, here in the grader, for every later child.

        Only the transformed text of cells the child is sent anyway travels with them: a child never holds a cell
        before it runs it, hidden tests included.
        """
        self.transformed.update(transformed_cells(sources))

    def warm_up(self, source: str) -> None:
        """Have the warm server run this `warm_up()` function (an exercise's, see grader.trusted) before it forks
        the next child, and every server this run restarts too; SandboxFailure, naming the error, if it fails."""
        with self._lock:
            self._exchange({"op": "warm", "source": source})
            self.warm_ups.append(source)

    def finish(self, number: int, generation: int, died: bool = False) -> str:
        """Kill child `number` and all it started; how it ended (`died`: it closed its connection first)."""
        reply, _fds = self._ask({"op": "finish", "id": number, "died": died}, generation)
        return str(reply["ended"])

    def cpu_seconds(self) -> tuple[float, float]:
        """CPU time so far of the warm server itself (its imports) and of the children it forked and reaped."""
        pid = self._process.pid
        try:  # inside bubblewrap the server is bwrap's grandchild (bwrap, then bwrap as the PID namespace's init)
            for _ in range(2 if self.confined else 0):
                pid = int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            return 0.0, 0.0
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        utime, stime, cutime, cstime = (int(value) / tick for value in fields[11:15])
        return utime + stime, cutime + cstime

    def close(self) -> None:
        """End the server; it kills every child still running."""
        with self._lock:
            self._control.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self.cgroup is not None:
            remove_run_cgroup(self.cgroup)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _next_child_uid() -> int:
    with _CHILD_UIDS_LOCK:
        return next(_CHILD_UIDS)


def _syscall_filter() -> bytes:
    """The children's syscall filter (grader.syscall_filter), compiled; empty, with a warning, where libseccomp is
    missing (the children then run without one)."""
    try:
        return compiled_syscall_filter()
    except (ImportError, RuntimeError, OSError) as error:
        warnings.warn(
            f"no syscall filter for the grading children ({error}): install the Debian package libseccomp2",
            stacklevel=3,
        )
        return b""


def _check_visible_inside(*pythons: Path) -> None:
    """Refuse a Python installation that a child could not see: one under a folder the sandbox mounts its own."""
    for python in pythons:
        for hidden in ("/proc", "/dev", "/sys", MOUNTED_INSIDE, SCRATCH_INSIDE):
            if python.is_relative_to(hidden) or python.resolve().is_relative_to(hidden):
                raise RuntimeError(
                    f"{python}: the grading sandbox mounts a folder of its own at {hidden}, so it cannot run this "
                    "Python; make the virtual environment elsewhere (e.g. in the course folder, as `make` does)"
                )


def transformed_cells(sources: list[str]) -> dict[str, str]:
    """IPython's input transformation of each cell that a shell transforms without its own state (see prepare)."""
    from IPython.core.inputtransformer2 import TransformerManager

    manager, transformed = TransformerManager(), {}
    for source in sources:
        text = manager.transform_cell(source)
        if len(text.splitlines()) > 1:  # one-line cells also go through the shell's prefilter
            transformed[source] = text
    return transformed


def worker_count(requested: int | None = None) -> int:
    """Submissions graded at once: as asked, or one per core."""
    return max(1, requested or os.cpu_count() or 1)


def start_sandbox(work_dir: Path, workers: int, limits: Limits | None = None) -> Sandbox:
    """The sandbox for a grading run in `work_dir`/sandbox/, torch threads shared out between workers."""
    return Sandbox(work_dir / "sandbox", max(1, (os.cpu_count() or 1) // workers), limits)


class Child:
    """The grader's side of one child: send a request, wait (with a deadline) for its one reply."""

    def __init__(self, sandbox: Sandbox, number: int, generation: int, connection: socket.socket) -> None:
        self.sandbox, self.number, self.generation, self.connection = sandbox, number, generation, connection
        self.deadline = time.monotonic() + sandbox.limits.notebook_seconds
        self.ended: str | None = None

    def run(self, source: str) -> dict:
        """Run one cell; the child's reply (see request)."""
        request = {"op": "run", "source": source}
        if source in self.sandbox.transformed:
            request["transformed"] = self.sandbox.transformed[source]
        return self.request(request)

    def request(self, message: dict) -> dict:
        """The child's reply; CellTimeout or ChildDied (with how it ended) when there is none, by the grader's
        clock whatever the child sends; SandboxFailure when the sandbox itself failed."""
        if self.ended is not None:
            raise ChildDied(self.ended)
        limits = self.sandbox.limits
        timeout = min(limits.cell_seconds, self.deadline - time.monotonic())
        try:
            framing.send(self.connection, message)
            reply = framing.receive(self.connection, limit=limits.reply_mb << 20, deadline=time.monotonic() + timeout)
        except TimeoutError:
            self.close()
            raise CellTimeout(f"it ran past its time limit ({timeout:.0f} s)") from None
        except framing.MessageTooLarge as error:
            self.close()
            raise ChildDied(f"it sent {error}") from None
        except (OSError, ValueError, RecursionError):  # a closed socket, or a reply that is not a message
            reply = None
        if type(reply) is not dict:
            raise ChildDied(f"the kernel died: {self.close(died=True)}")
        return reply

    def close(self, died: bool = False) -> str:
        """Kill the child (if alive) and everything it started; how it ended."""
        if self.ended is None:
            self.connection.close()
            self.ended = "ended"  # set first: a failing finish must not be retried by the caller's cleanup
            self.ended = self.sandbox.finish(self.number, self.generation, died)
        return self.ended
