"""What a student's feedback pages are made from, as one digest per submission, so that `grader feedback` rewrites
only the pages whose inputs changed: the autograded notebooks (a regrade), the submission's grades and comments in
the gradebook (a teaching assistant's score), and how pages are made (the grader's code and templates, nbgrader's
and nbconvert's versions, the page settings). The digest is kept beside the pages, in INPUTS; nbgrader releases only
the pages (*.html) to students."""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from grader.autograde import fingerprint

INPUTS = ".feedback-inputs"  # in work/feedback/<student>/<assignment>/
GRADER = Path(__file__).resolve().parent


def inputs_digests(db_url: str, assignment: str, autograded: Path, settings: str) -> dict[str, str]:
    """{student: the digest of what their pages of `assignment` are made from} for every submission of it that
    the gradebook holds (`autograded`: work/autograded/; `settings`: how pages are made, as text)."""
    common = hashlib.sha256(f"{_making()}\0{settings}".encode()).hexdigest()
    with Gradebook(db_url) as gradebook:
        try:
            submissions = gradebook.find_assignment(assignment).submissions
        except MissingEntry:
            return {}
        recorded = {submission.student.id: _recorded(submission) for submission in submissions}
    return {
        student: hashlib.sha256(
            f"{common}\0{grades}\0{fingerprint(autograded / student / assignment)}".encode()
        ).hexdigest()
        for student, grades in recorded.items()
    }


def unchanged(folder: Path, digest: str, pages: list[str]) -> bool:
    """Whether these pages are all in `folder`, made from inputs with this digest."""
    kept = folder / INPUTS
    made = kept.is_file() and kept.read_text(encoding="utf-8") == digest
    return made and all((folder / page).is_file() for page in pages)


def _recorded(submission) -> str:
    """A submission as the gradebook holds it, with every grade and comment of its notebooks, as text."""
    notebooks = [
        [notebook.name, [g.to_dict() for g in notebook.grades], [c.to_dict() for c in notebook.comments]]
        for notebook in sorted(submission.notebooks, key=lambda notebook: notebook.name)
    ]
    return json.dumps([submission.to_dict(), notebooks], sort_keys=True, default=str)


def _making() -> str:
    """How pages are made: the grader's code and templates (nbgrader_config.py among them), and the versions of
    nbgrader and nbconvert."""
    files = sorted(p for p in GRADER.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    digest = hashlib.sha256(f"{version('nbgrader')} {version('nbconvert')}".encode())
    for path in files:
        digest.update(path.relative_to(GRADER).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
