"""work/autograded/ -> work/feedback/: one HTML page per student and notebook (nbgrader generate_feedback)."""

from __future__ import annotations

from pathlib import Path

from nbgrader.converters import GenerateFeedback
from nbgrader.converters.base import NbGraderException
from nbgrader.coursedir import CourseDirectory

from grader.course import CourseError, nbgrader_config, relative
from grader.nbgrader_setup import ready_nbgrader


def feedback(work_dir: Path, db_url: str | None = None) -> list[Path]:
    """Write feedback for every autograded submission; return the HTML files."""
    autograded = work_dir / "autograded"
    assignments = sorted({p.name for p in autograded.glob("*/*") if p.is_dir()})
    if not assignments:
        raise CourseError(f"{relative(autograded)}: nothing autograded yet; run `python -m grader autograde` first")
    ready_nbgrader()
    config = nbgrader_config(work_dir=work_dir, db_url=db_url)
    for assignment in assignments:
        converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
        converter.coursedir.assignment_id = assignment
        converter.force = True
        try:
            converter.start()
        except NbGraderException as error:
            raise CourseError(f"{relative(autograded)}: generate_feedback failed for {assignment}: {error}") from None
    return sorted((work_dir / "feedback").glob("*/*/*.html"))
