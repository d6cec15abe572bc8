"""Submissions in any of three forms -> work/submitted/<student>/<assignment>/<notebook>.ipynb (nbgrader's layout).

1. an nbgrader-style folder: <student>/<assignment>/<notebook>.ipynb
2. a flat folder of notebooks named with the student id: <student>.ipynb (or <student>_anything.ipynb)
3. an LMS download archive (.zip, .tar.gz): files or folders named <student>_anything, extracted and matched with
   nbgrader's zip_collect machinery.
For the flat and archive forms the assignment must be named; the file is stored under the assignment's notebook name.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.course import CourseError, assignment_names, relative, solutions
from grader.notebooks import assignment_notebooks

# A student id names a folder: letters, digits, ".", "-" and "_", not starting with a dot.
STUDENT_ID = r"[A-Za-z0-9][A-Za-z0-9._-]*"
# In file names "_" separates the id from the rest: the id is the leading token of the first path component
# (Canvas: alice_1234_ex01.ipynb; Moodle-like folders: alice_1234_assignsubmission_file/ex01.ipynb).
NAMED_REGEXP = r"^(?P<student_id>[A-Za-z0-9][A-Za-z0-9.-]*)(?:_[^/]*)?(?:/.*)?(?P<file_id>\.ipynb)$"
ARCHIVES = (".zip", ".gz")


@dataclass
class Intake:
    """Which assignments arrived, and the files that could not be taken in (with why)."""

    assignments: list[str] = field(default_factory=list)
    students: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)


def take_in(source: Path, assignment: str | None, submitted: Path) -> Intake:
    """Copy (or extract) submissions from `source` into `submitted`, in nbgrader's layout."""
    if not source.exists():
        raise CourseError(f"{source}: no such file or folder")
    if assignment is not None:
        [assignment] = assignment_names([assignment])
    if source.is_file():
        if not source.name.endswith(ARCHIVES):
            raise CourseError(f"{source}: not a folder or a .zip/.tar.gz archive of submissions")
        return _from_archive(source, _required(assignment, source), submitted)
    known = set(assignment_names())
    nested = sorted({p.parent.name for p in source.glob("*/*/*.ipynb") if p.parent.name in known})
    if nested:
        wanted = [assignment] if assignment else nested
        return _from_nbgrader_folder(source, wanted, submitted)
    if any(source.glob("*.ipynb")):
        return _from_flat_folder(source, _required(assignment, source), submitted)
    raise CourseError(f"{source}: no submissions found (expected <student>/<assignment>/*.ipynb or <student>.ipynb)")


def _required(assignment: str | None, source: Path) -> str:
    if assignment is None:
        raise CourseError(f"{source}: name the assignment these notebooks belong to (--assignment)")
    return assignment


def _notebook_name(assignment: str) -> str:
    notebooks = assignment_notebooks(solutions() / assignment)
    if len(notebooks) != 1:
        raise CourseError(f"{relative(solutions() / assignment)}: several notebooks; submit them as folders")
    return notebooks[0].name


def _from_nbgrader_folder(source: Path, assignments: list[str], submitted: Path) -> Intake:
    intake = Intake(assignments=assignments)
    same_place = source.resolve() == submitted.resolve()
    for assignment in assignments:
        for folder in sorted(source.glob(f"*/{assignment}")):
            student = folder.parent.name
            if not re.fullmatch(STUDENT_ID, student):
                intake.skipped.append(f"{folder}: '{student}' is not a usable student id")
                continue
            intake.students.add(student)
            if not same_place:
                intake.skipped += _replace(folder, submitted / student / assignment)
    return intake


def _from_flat_folder(source: Path, assignment: str, submitted: Path) -> Intake:
    return _collect(sorted(source.glob("*.ipynb")), source, assignment, submitted)


def _from_archive(archive: Path, assignment: str, submitted: Path) -> Intake:
    from nbgrader.utils import unzip

    with tempfile.TemporaryDirectory(prefix="grader-intake-") as scratch:
        try:
            unzip(str(archive), scratch, zip_ext=[".zip", ".gz"], tree=True)
        except Exception as error:  # noqa: BLE001 - zipfile and tarfile raise many kinds; all mean the same here
            raise CourseError(f"{archive}: cannot be extracted ({error})") from None
        root = Path(scratch)
        files = sorted(p for p in root.rglob("*.ipynb") if "__MACOSX" not in p.parts and p.is_file())
        return _collect(files, root, assignment, submitted, shown_as=archive)


def _collect(files: list[Path], root: Path, assignment: str, submitted: Path, shown_as: Path | None = None) -> Intake:
    """Name each notebook's student with nbgrader's FileNameCollectorPlugin and store it in nbgrader's layout."""
    from nbgrader.plugins import FileNameCollectorPlugin

    collector = FileNameCollectorPlugin(named_regexp=NAMED_REGEXP)
    notebook = _notebook_name(assignment)
    intake = Intake(assignments=[assignment])
    for path in files:
        name = path.relative_to(root).as_posix()
        shown = f"{shown_as}: {name}" if shown_as else str(path)
        if path.is_symlink():
            intake.skipped.append(f"{shown}: a symbolic link, not taken in")
            continue
        match = collector.collect(name)
        if not match:
            intake.skipped.append(f"{shown}: no student id in the name (expected <student>.ipynb or <student>_*)")
            continue
        student = match["student_id"]
        if student in intake.students:
            intake.skipped.append(f"{shown}: a second notebook for student '{student}'; the first one is kept")
            continue
        intake.students.add(student)
        target = submitted / student / assignment
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        shutil.copyfile(path, target / notebook)
    return intake


def _replace(source: Path, target: Path) -> list[str]:
    """Copy a submission folder, leaving out symbolic links (a link could point at the solutions); what was left out."""
    if target.exists():
        shutil.rmtree(target)
    links: list[str] = []

    def links_in(folder: str, names: list[str]) -> list[str]:
        found = [name for name in names if (Path(folder) / name).is_symlink()]
        links.extend(f"{Path(folder) / name}: a symbolic link, not taken in" for name in found)
        return found

    shutil.copytree(source, target, ignore=links_in)
    return links
