"""One child never reaches another, and nothing of it outlives it: IPC, files, processes, the warm server's memory.

These need the isolation children get as root inside bubblewrap (as CI runs). Each plants something in one child
and looks for it from a later one, or from the host once the child has ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from grader.sandbox import CellTimeout, ChildDied, Limits, Sandbox, SandboxFailure, bubblewrap_available

pytestmark = pytest.mark.skipif(
    not (bubblewrap_available() and os.geteuid() == 0), reason="children are isolated as root inside bubblewrap"
)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    with Sandbox(tmp_path_factory.mktemp("sandbox"), limits=Limits(cell_seconds=4, disk_mb=64)) as running:
        yield running


def last_value(reply: dict) -> str:
    for output in reversed(reply["outputs"]):
        if output["output_type"] == "execute_result":
            return output["data"]["text/plain"]
        if output["output_type"] == "error":
            return f"{output['ename']}: {output['evalue']}"
    return ""


def in_child(sandbox: Sandbox, source: str) -> str:
    with sandbox.child() as child:
        return last_value(child.run(source))


IPC = """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
def shm(size, flags):
    got = libc.shmget(0x5EC7, ctypes.c_size_t(size), flags)
    return got if got >= 0 else errno.errorcode[ctypes.get_errno()]
def msg(flags):
    got = libc.msgget(0x5EC7, flags)
    return got if got >= 0 else errno.errorcode[ctypes.get_errno()]
"""


def test_ipc_objects_end_with_their_child_and_stay_small(sandbox: Sandbox) -> None:
    made = in_child(sandbox, IPC + "[shm(1 << 20, IPC_CREAT | 0o666), msg(IPC_CREAT | 0o666), shm(2 << 30, IPC_CREAT)]")
    first_shm, first_msg, huge = eval(made)  # noqa: S307 - our own cell's repr of ints and strings
    assert type(first_shm) is int and type(first_msg) is int, made
    assert huge == "EINVAL", "a 2 GiB SysV segment must be beyond a child's IPC limits"
    assert in_child(sandbox, IPC + "[shm(0, 0o666), msg(0o666)]") == "['ENOENT', 'ENOENT']"


def test_files_end_with_their_child_wherever_it_writes(sandbox: Sandbox) -> None:
    where = ["/dev/shm/left", "left"]
    planted = in_child(sandbox, f"for p in {where!r}:\n    open(p, 'w').write('x')\nimport os\nos.getcwd()")
    assert planted.startswith("'/scratch")
    found = in_child(sandbox, f"import os\n[os.path.exists(p) for p in {where!r}]")
    assert found == "[False, False]"
    assert in_child(sandbox, "open('/tmp/left', 'w')").startswith("PermissionError"), "no child writes the shared /tmp"


def test_a_child_has_a_disk_budget_in_bytes_and_in_files(sandbox: Sandbox) -> None:
    bytes_ = in_child(sandbox, "for n in range(16):\n    open(f'/dev/shm/f{n}', 'wb').write(b'x' * (8 << 20))")
    files = in_child(sandbox, "for n in range(30_000):\n    open(f'f{n}', 'w').close()")
    assert bytes_.startswith("OSError") and "No space left" in bytes_
    assert files.startswith("OSError") and "No space left" in files


def test_a_child_sees_only_its_own_processes(sandbox: Sandbox) -> None:
    assert in_child(sandbox, "import os\nsorted(int(p) for p in os.listdir('/proc') if p.isdigit())") == "[1, 2]"


HOPPER = """
import os
def hop():
    while True:
        if os.fork():
            os._exit(0)
if os.fork() == 0:
    os.setsid()
    hop()
if os.fork() == 0:
    import time
    while True:
        time.sleep(1)
"""


def processes_of(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except FileNotFoundError:
                pass
    return found


def test_nothing_a_child_started_outlives_it_however_it_hops(sandbox: Sandbox) -> None:
    """Hundreds of times: processes that fork a successor and exit, and a sleeper, left behind; the moment the child
    is finished, no process of its uid is left on the machine."""
    survivors = {}
    for _attempt in range(300):
        with sandbox.child() as child:
            child.request({"op": "run", "source": HOPPER})
            uid = sandbox.uid_base + child.number
        left = processes_of(uid)
        if left:
            survivors[uid] = left
            for pid in left:
                os.kill(pid, signal.SIGKILL)
    assert survivors == {}


def test_a_reply_sent_a_byte_at_a_time_is_cut_by_the_graders_clock(sandbox: Sandbox) -> None:
    drip = (
        "import os, socket, stat, struct, time\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        if stat.S_ISSOCK(os.fstat(fd).st_mode):\n"
        "            for byte in struct.pack('!I', 1000) + b'[' * 1000:\n"
        "                os.write(fd, bytes([byte]))\n"
        "                time.sleep(0.5)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    started = time.monotonic()
    with pytest.raises(CellTimeout), sandbox.child() as child:
        child.run(drip)
    assert time.monotonic() - started < 4 + 3


def test_any_death_of_a_child_is_its_own(sandbox: Sandbox) -> None:
    for number in (signal.SIGRTMIN + 3, signal.SIGRTMAX, signal.SIGUSR1, signal.SIGABRT):
        with pytest.raises(ChildDied, match="killed by"), sandbox.child() as child:
            child.run(f"import os\nos.kill(os.getpid(), {int(number)})")
    assert in_child(sandbox, "1 + 1") == "2", "the warm server must outlive any child's death"


def test_a_child_cannot_reach_the_warm_server(sandbox: Sandbox) -> None:
    """Its namespace's init is the only process outside its uid it can see, and it can signal none of them."""
    reply = in_child(sandbox, "import os\ntry:\n    os.kill(1, 9)\nexcept OSError as e:\n    r = type(e).__name__\nr")
    assert reply == "'PermissionError'"


def test_a_dead_server_is_a_sandbox_failure_and_is_restarted(tmp_path: Path) -> None:
    with Sandbox(tmp_path) as running:
        assert in_child(running, "1 + 1") == "2"
        generation = running.generation
        with running.child() as child:
            os.kill(running._process.pid, signal.SIGKILL)  # bubblewrap, and with it the server and its children
            running._process.wait()
            with pytest.raises(SandboxFailure):
                child.run("1 + 1")
        running.restart(generation)
        running.restart(generation)  # a second worker asking for the same restart starts nothing more
        assert running.generation == generation + 1
        assert in_child(running, "2 + 2") == "4"


HOLDERS = """
import subprocess, sys
hold = "import time\\nx = bytearray(300 << 20)\\nx[::4096] = b'1' * len(x[::4096])\\n"
hold += "print('held', flush=True)\\ntime.sleep(60)"
holders = [subprocess.Popen([sys.executable, '-c', hold], stdout=subprocess.PIPE) for _ in range(3)]
sum(holder.stdout.readline() == b'held\\n' for holder in holders)
"""


TOUCH_400_MIB = "x = bytearray(400 << 20)\nx[::4096] = b'1' * len(x[::4096])"


def test_all_a_childs_memory_counts_against_one_limit(tmp_path: Path) -> None:
    """Processes under their own limits, and files in the child's tmpfs: together no more than the child's limit."""
    with Sandbox(tmp_path, limits=Limits(memory_mb=512, cell_seconds=60)) as running:
        if running.cgroup is None:
            pytest.skip("no memory cgroup can be made here")
        assert int(in_child(running, HOLDERS)) <= 1, "three processes of 300 MiB each held more than 512 MiB"
        with pytest.raises(ChildDied, match="SIGKILL"), running.child() as child:
            child.run("for n in range(4):\n    open(f'/dev/shm/{n}', 'wb').write(b'x' * (50 << 20))\n" + TOUCH_400_MIB)
        assert in_child(running, "1 + 1") == "2"
    assert not running.cgroup.exists(), "the run's memory cgroup must be removed with the sandbox"


def test_a_child_does_not_learn_where_the_grading_run_lives(sandbox: Sandbox) -> None:
    mounts = in_child(sandbox, "open('/proc/self/mountinfo').read()")
    assert str(sandbox.scratch) not in mounts
    assert sandbox.cgroup is None or sandbox.cgroup.name not in mounts


def test_a_child_forked_ahead_becomes_the_child_asked_for_and_ends_with_the_sandbox(tmp_path: Path) -> None:
    """The server forks each next child before it is asked for; it still takes its uid and environment from the
    request, and no spare outlives the sandbox."""
    who = "import os\n(os.getuid(), os.environ.get('MARK'))"
    with Sandbox(tmp_path) as running:
        first = in_child(running, who)
        with running.child(env={"MARK": "asked"}) as child:
            second = last_value(child.run(who))
        processes = psutil.Process(running._process.pid).children(recursive=True)
        forks = [p for p in processes if p.cmdline()[1:3] == ["-m", "fork_server"]]  # the server and its children
        [server] = [p for p in forks if p.ppid() not in {fork.pid for fork in forks}]
        spares = [process for keeper in server.children() for process in [keeper, *keeper.children(recursive=True)]]
        for spare in spares:  # a spare that died before it was asked for is replaced
            spare.kill()
        _wait_until_ended(spares)
        third = in_child(running, who)
        processes = psutil.Process(running._process.pid).children(recursive=True)
        assert len(processes) >= 3, "a spare child (keeper, init, worker) waits beside the server"
    assert [eval(text)[1] for text in (first, second, third)] == [None, "asked", None]  # noqa: S307 - our own repr
    assert len({eval(text)[0] for text in (first, second, third)}) == 3, "each child has a uid of its own"  # noqa: S307
    assert not _wait_until_ended(processes)


def _wait_until_ended(processes: list[psutil.Process], seconds: float = 10) -> list[psutil.Process]:
    """Wait until each process has ended (a zombie counts as ended); those still running after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        running = []
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                if process.status() != psutil.STATUS_ZOMBIE:
                    running.append(process)
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def test_no_two_sandboxes_of_one_process_give_a_uid_twice(sandbox: Sandbox, tmp_path: Path) -> None:
    """The Formgrader starts a sandbox per notebook and a Dask worker keeps its own: all of one process's sandboxes
    number their children's uids from one counter, so no child of one ever has the uid of a child of another (a
    uid's keyrings, process count and files would be shared)."""
    with Sandbox(tmp_path, limits=Limits(cell_seconds=20)) as other:
        uids = [in_child(running, "import os\nos.getuid()") for running in (sandbox, other, sandbox, other)]
    assert len(set(uids)) == 4, uids
