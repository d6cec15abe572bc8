"""Where the course lives on disk, and the nbgrader configuration that points at it.

The course folder is GRADER_COURSE_ROOT when set; else the working folder or the nearest parent that looks like a
course (an `nbgrader_config.py` beside `solutions/` or `exercises/`); else the checkout this package runs from (an
editable install or `python -m grader` in the checkout). Otherwise it is a CourseError that says how to point at one
(docs/instructor.md, "Installing the grader").
"""

from __future__ import annotations

import os
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

REPOSITORY = Path(__file__).resolve().parent.parent


def root() -> Path:
    """The course directory: GRADER_COURSE_ROOT, the working folder or a parent of it, or this package's checkout."""
    named = os.environ.get("GRADER_COURSE_ROOT")
    if named:
        return Path(named).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents, REPOSITORY):
        if _looks_like_a_course(folder):
            return folder
    raise CourseError(
        f"no course found in {here} or its parents (a folder with nbgrader_config.py and solutions/): "
        "run the command in the course folder, or set GRADER_COURSE_ROOT=/path/to/course"
    )


def _looks_like_a_course(folder: Path) -> bool:
    """The course's own layout, or a student edition's (exercises/ but no solutions/)."""
    layout = ((folder / name).is_dir() for name in ("solutions", "exercises"))
    return (folder / "nbgrader_config.py").is_file() and any(layout)


def solutions() -> Path:
    """nbgrader's source directory: one folder per assignment, with solutions and hidden tests."""
    return root() / "solutions"


def checks_file(assignment: str) -> Path:
    """An exercise's checks: the only hand-written form of its graded tests' cases and observers."""
    return solutions() / assignment / "checks.py"


def mistakes_file(assignment: str) -> Path:
    """An exercise's scripted mistakes (ANSWERS) and the points each graded cell must give them (EXPECTED)."""
    return solutions() / assignment / "mistakes.py"


def exercises() -> Path:
    """nbgrader's release directory: the student versions, generated from solutions/."""
    return root() / "exercises"


def work() -> Path:
    """The git-ignored folder for everything a grading run writes."""
    return root() / "work"


class CourseError(Exception):
    """Bad course input: the message names the file and the problem, in one line."""


def relative(path: Path) -> str:
    """The path as a newcomer reads it: relative to the repository when inside it."""
    try:
        return str(Path(path).resolve().relative_to(root()))
    except ValueError:
        return str(path)


def assignment_names(requested: list[str] | None = None) -> list[str]:
    """Assignment folders under solutions/, sorted; `requested` names must exist."""
    available = sorted(p.name for p in solutions().iterdir() if p.is_dir() and not p.name.startswith("."))
    if not requested:
        return available
    unknown = [name for name in requested if name not in available]
    if unknown:
        raise CourseError(f"{relative(solutions())}: no assignment folder named {', '.join(unknown)}")
    return list(requested)


def nbgrader_config(work_dir: Path | None = None, release: Path | None = None, db_url: str | None = None) -> Config:
    """The course's nbgrader settings, with the grading folders under `work_dir` and the release in `release`."""
    work_dir = work_dir or work()
    config = PyFileConfigLoader("nbgrader_config.py", path=str(Path(__file__).parent)).load_config()
    course = config.CourseDirectory
    course.root = str(root())
    course.release_directory = str(release or exercises())
    course.submitted_directory = str(work_dir / "submitted")
    course.autograded_directory = str(work_dir / "autograded")
    course.feedback_directory = str(work_dir / "feedback")
    course.solution_directory = str(work_dir / "solution")
    course.db_url = db_url or default_db_url(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    return config


def default_db_url(work_dir: Path) -> str:
    """The gradebook of a work folder: an SQLite file inside it."""
    return f"sqlite:///{Path(work_dir).resolve() / 'gradebook.db'}"
