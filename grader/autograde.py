"""work/submitted/ -> work/autograded/ and the gradebook, with stock nbgrader autograde."""

from __future__ import annotations

import tempfile
from pathlib import Path

from nbgrader.converters import Autograde
from nbgrader.converters.base import NbGraderException
from nbgrader.coursedir import CourseDirectory

from grader.course import CourseError, assignment_names, nbgrader_config, ready_nbgrader, relative
from grader.release import generate


def autograde(assignment: str, work_dir: Path, db_url: str | None = None) -> None:
    """Grade every submission of `assignment` under `work_dir`/submitted/<student>/<assignment>/."""
    [assignment] = assignment_names([assignment])
    submitted = work_dir / "submitted"
    if not any(submitted.glob(f"*/{assignment}/*.ipynb")):
        layout = f"<student>/{assignment}/*.ipynb"
        raise CourseError(f"{relative(submitted)}: no submission of {assignment} (expected {layout})")
    with tempfile.TemporaryDirectory(prefix="grader-release-") as scratch:
        # Recording the assignment stores each graded cell, hidden tests included, in the gradebook.
        generate(assignment, nbgrader_config(work_dir=work_dir, release=Path(scratch), db_url=db_url))
    config = nbgrader_config(work_dir=work_dir, db_url=db_url)
    ready_nbgrader()
    converter = Autograde(coursedir=CourseDirectory(config=config), config=config)
    converter.coursedir.assignment_id = assignment
    converter.force = True
    converter.create_student = True
    try:
        converter.start()
    except NbGraderException as error:
        raise CourseError(f"{relative(submitted)}: nbgrader autograde failed for {assignment}: {error}") from None
