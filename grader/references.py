"""The solution's observations where a hidden-test block runs in a notebook (stock nbgrader, `grader validate`).

They are computed on the machine that compares them, by the trusted check's own machinery (the instructor's solution
run in a sandboxed child, the checks' observers on it), and cached in the work folder (work/references/, which git
ignores) under a key of everything they derive from: the checks, grader/observing.py, the solution's code cells,
Python, torch and the CPU kernels torch picked. Nothing of them is stored in a hand-written file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
import types
from pathlib import Path

from grader import observing
from grader.course import checks_file, relative, solutions, work
from grader.notebooks import assignment_notebooks, read_notebook
from grader.sandbox import start_sandbox
from grader.trusted import TrustedChecker, cells_to_run

_loaded: dict[str, tuple[str, types.ModuleType]] = {}
_computing = threading.Lock()


def load_checks(assignment: str) -> types.ModuleType:
    """The exercise's checks module, loaded once per process and again when its text changes."""
    path = checks_file(assignment)
    text = path.read_text(encoding="utf-8")
    cached = _loaded.get(assignment)
    if cached is None or cached[0] != text:
        cached = text, observing.load_checks(observing, text, relative(path))
        _loaded[assignment] = cached
    return cached[1]


def solution_observations(assignment: str) -> dict:
    """What the checks' observers see of the instructor's solution on this machine (CourseError if the solution
    fails them): read from work/references/ when its key is current, else computed and stored there."""
    stored = _read(_path(assignment))
    if stored.get("key") == fingerprint(assignment):
        return stored["observations"]
    with _computing:  # the threads of one process compute it once
        make_current([assignment])
        return _read(_path(assignment))["observations"]


def make_current(assignments: list[str]) -> None:
    """Compute and store the solution's observations of these assignments where they are not current, all in one
    sandbox (CourseError naming the checks if a solution fails them)."""
    keys = {name: fingerprint(name) for name in assignments}
    stale = [name for name, key in keys.items() if _read(_path(name)).get("key") != key]
    if not stale:
        return
    with tempfile.TemporaryDirectory(prefix="grader-reference-") as scratch, start_sandbox(Path(scratch), 1) as box:
        for name in stale:
            checker = TrustedChecker(name, box)
            checker.warm_sandbox()
            _write(_path(name), {"key": keys[name], "observations": checker.reference()})


def _path(assignment: str) -> Path:
    return work() / "references" / f"{assignment}.json"


def fingerprint(assignment: str) -> str:
    """A digest of everything the solution's observations derive from on this machine."""
    import torch  # the notebook that runs a hidden block has imported it already

    [notebook] = assignment_notebooks(solutions() / assignment)
    parts = [
        checks_file(assignment).read_text(encoding="utf-8"),
        Path(observing.__file__).read_text(encoding="utf-8"),
        json.dumps(cells_to_run(read_notebook(notebook))),
        sys.version,
        torch.__version__,
        torch.backends.cpu.get_cpu_capability(),
        os.environ.get("MKL_ENABLE_INSTRUCTIONS", ""),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _read(path: Path) -> dict:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if type(stored) is dict and type(stored.get("observations")) is dict else {}


def _write(path: Path, stored: dict) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}-", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump(stored, file)
    os.replace(temporary, path)
