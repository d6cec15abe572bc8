"""The student's workspace: a git-ignored copy of the chapters and of exercises/ to work in, so that working through
the course never changes a tracked file and a course update (`git pull`) never conflicts.

The chapters land at the top of workspace/ (`workspace/01_what_the_object_holds.ipynb`, beside the helper module
they import), so a chapter's link to its exercise, `../workspace/ex01_slots/ex01_slots.ipynb`, leads to the
student's copy from there as from chapters/; the exercises land as released (`workspace/ex01_slots/...`).

Filling it copies what the workspace lacks and refreshes a copy the student never changed when the course has a new
version of it; a copy the student changed is never overwritten, and is reported. Which version of the course each
copy came from is recorded (its sha256) in workspace/.copied.json. Whatever is not a plain file at a copy's place
(a link, a folder) is left alone and never written through.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.course import exercises, root

RECORD = ".copied.json"
JUNK = {"__pycache__", ".ipynb_checkpoints"}  # what Python and JupyterLab leave beside the course's files


@dataclass(frozen=True)
class Copy:
    """What filling the workspace did to one course file's copy: "new", "updated" (the course changed it and the
    student had not) or "kept" (both changed it: the student's copy stays, the course's version is at `source`)."""

    action: str
    path: Path
    source: Path


def workspace() -> Path:
    """Where students work (git ignores it): `workspace/<chapter>.ipynb`, `workspace/<assignment>/<notebook>.ipynb`."""
    return root() / "workspace"


def course_files() -> dict[Path, Path]:
    """{copy in the workspace: its source in the course}: every file of chapters/ and exercises/."""
    files = {}
    for folder in (root() / "chapters", exercises()):
        for source in sorted(p for p in folder.rglob("*") if p.is_file() and not JUNK & set(p.parts)):
            files[workspace() / source.relative_to(folder)] = source
    return files


def fill_workspace() -> list[Copy]:
    """Bring every copy up to date where the student's work allows it; return what was done, in order."""
    recorded = _read_record()
    done = []
    for target, source in course_files().items():
        key = target.relative_to(workspace()).as_posix()
        content = source.read_bytes()
        latest = _digest(content)
        if target.is_symlink() or (target.exists() and not target.is_file()):
            continue  # not the student's copy of this file: never touched
        if not target.exists():
            if _create(target, content):
                recorded[key] = latest
                done.append(Copy("new", target, source))
            continue
        copied_from = recorded.setdefault(key, latest)  # a copy made before the record: its version is the course's
        if copied_from == latest:
            continue
        if _digest(target.read_bytes()) == copied_from:
            _replace(target, content)
            recorded[key] = latest
            done.append(Copy("updated", target, source))
        else:
            done.append(Copy("kept", target, source))
    _write_record(recorded)
    return done


def _digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _create(target: Path, content: bytes) -> bool:
    """Write a new file; False if something appeared at its place meanwhile (it is left alone)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("xb") as copy:  # exclusive creation: never through a link, never over a file
            copy.write(content)
    except (FileExistsError, IsADirectoryError):
        return False
    return True


def _replace(target: Path, content: bytes) -> None:
    """Swap a plain file for new content in one step (the directory entry is replaced, never written through)."""
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".copy-", delete=False) as scratch:
        scratch.write(content)
    os.replace(scratch.name, target)


def _read_record() -> dict[str, str]:
    """{copy's path in the workspace: sha256 of the course's version it came from}; empty if unreadable."""
    path = workspace() / RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8")) if not path.is_symlink() else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(record, dict):
        return {}
    return {key: value for key, value in record.items() if isinstance(value, str)}


def _write_record(record: dict[str, str]) -> None:
    workspace().mkdir(parents=True, exist_ok=True)
    _replace(workspace() / RECORD, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode())
