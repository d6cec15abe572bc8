"""The student's workspace: a git-ignored copy of exercises/ to work in, so the tracked release stays as released.

Filling it copies only what the workspace lacks; a file already there (the student's work) is never overwritten,
so a course update (`git pull`, new exercises) never conflicts with it.
"""

from __future__ import annotations

from pathlib import Path

from grader.course import exercises, root


def workspace() -> Path:
    """Where students work: `workspace/<assignment>/<notebook>.ipynb`, ignored by git."""
    return root() / "workspace"


def fill_workspace() -> list[Path]:
    """Copy every released file the workspace lacks into it; return the files copied, in order."""
    copied = []
    for source in sorted(p for p in exercises().rglob("*") if p.is_file()):
        target = workspace() / source.relative_to(exercises())
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            # Exclusive creation: whatever exists at the target (a file, a link, a folder) is left alone.
            with target.open("xb") as copy:
                copy.write(source.read_bytes())
        except (FileExistsError, IsADirectoryError):
            continue
        copied.append(target)
    return copied
