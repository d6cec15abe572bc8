"""A memory cgroup per grading run, in which the sandbox's server makes one per child: everything a child holds
(its processes, its tmpfs, its SysV shared memory) counts against one limit.

Control groups version 1 (the memory controller mounted at /sys/fs/cgroup/memory), as root. Where none can be made
(no such controller, not root, cgroups version 2 only), grading goes on with per-process limits and a warning.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from pathlib import Path

MOUNT = Path("/sys/fs/cgroup/memory")


def make_run_cgroup() -> Path | None:
    """A fresh memory cgroup for one grading run, under this process's own; None where it cannot be made."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _number, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                folder = MOUNT / path.lstrip("/") / f"grader-run-{os.getpid()}-{id(line)}"
                folder.mkdir()
                if (folder / "memory.limit_in_bytes").is_file():
                    return folder
                folder.rmdir()
    except OSError:
        pass
    warnings.warn(
        "no memory cgroup can be made here: a child's memory is limited per process only "
        "(its tmpfs and IPC have limits of their own)",
        stacklevel=2,
    )
    return None


def remove_run_cgroup(folder: Path) -> None:
    """Remove a run's cgroup and what its children left (their processes are gone by then)."""
    for child in folder.iterdir():
        if child.is_dir():
            with contextlib.suppress(OSError):
                child.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()
