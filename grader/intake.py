"""Submissions in any of three forms -> work/submitted/<student>/<assignment>/<notebook>.ipynb (nbgrader's layout).

1. an nbgrader-style folder: <student>/<assignment>/<notebook>.ipynb
2. a flat folder of notebooks named with the student id: <student>.ipynb (or <student>_anything.ipynb)
3. an LMS download archive (.zip, .tar.gz): files or folders named <student>_anything, extracted safely
   (grader.archives) and matched with nbgrader's zip_collect machinery. A student's own upload inside it may be an
   archive too; whatever is wrong with a student's files (an unreadable upload, an unsafe path, a link, a bomb)
   rejects that student's submission, with the reason, and no one else's.
For the flat and archive forms the assignment must be named; the file is stored under the assignment's notebook name.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.archives import ArchiveError, Budget, Caps, Member, archive_stem, is_archive, members
from grader.course import CourseError, assignment_names, relative, solutions
from grader.escaping import printable
from grader.notebooks import assignment_notebooks

# A student id names a folder: letters, digits, ".", "-" and "_", not starting with a dot; at most ID_LIMIT of them
# (nbgrader's gradebook keeps 128), so that every file name made from one fits the file system's 255 bytes.
STUDENT_ID = r"[A-Za-z0-9][A-Za-z0-9._-]*"
ID_LIMIT = 128
# In file names "_" separates the id from the rest: the id is the leading token of the first path component
# (Canvas: alice_1234_ex01.ipynb; Moodle-like folders: alice_1234_assignsubmission_file/ex01.ipynb).
NAMED_REGEXP = r"^(?P<student_id>[A-Za-z0-9][A-Za-z0-9.-]*)(?:_[^/]*)?(?:/.*)?(?P<file_id>\.ipynb)$"
OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*")
ARCHIVES = (".zip", ".gz")
CAPS = Caps()  # bytes: per student, nested uploads included; members: per archive
NESTING = 3  # archives inside a student's archive, at most this deep


@dataclass
class Intake:
    """Which assignments arrived, and the files that could not be taken in (with why)."""

    assignments: list[str] = field(default_factory=list)
    students: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)  # student -> why their files could not be taken in


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
                intake.skipped.append(f"{folder}: '{printable(student)}' is not a usable student id")
                continue
            if len(student) > ID_LIMIT:
                intake.rejected[student] = _too_long(student)
                shutil.rmtree(submitted / student / assignment, ignore_errors=True)  # an older upload is not this one
                continue
            intake.students.add(student)
            try:
                notebooks, passed_over = _notebooks_in(folder)
                if not same_place:
                    _store(notebooks, submitted / student / assignment)
            except (ArchiveError, OSError, UnicodeError, shutil.Error) as error:
                intake.rejected[student] = f"the upload could not be taken in: {_why(error)}"
                shutil.rmtree(submitted / student / assignment, ignore_errors=True)  # an older upload is not this one
                continue
            intake.skipped += passed_over
    return intake


def _notebooks_in(folder: Path) -> tuple[list[Path], list[str]]:
    """The notebooks of one student's submission folder, and what is passed over in it (anything else: only
    notebooks are graded, and no other file may reach the pages an instructor opens). ArchiveError where the folder
    may not be taken in: a link in place of the student's or the assignment's folder, a notebook that is a link, a
    special file or has a name that is not plain text, more than the intake's bytes."""
    for part in (folder.parent, folder):
        if part.is_symlink():
            raise ArchiveError(f"{part.name} is a symbolic link")
    notebooks, passed_over, size = [], [], 0
    for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
        shown = f"{folder}/{printable(entry.name)}"
        if not entry.name.endswith(".ipynb"):
            passed_over.append(f"{shown}: not a notebook, not taken in")
            continue
        if not entry.name.isprintable() or entry.name != entry.name.encode("utf-8", "replace").decode():
            raise ArchiveError(f"{printable(entry.name)}: a notebook name that is not plain text")
        if not entry.is_file(follow_symlinks=False):
            raise ArchiveError(f"{entry.name}: a symbolic link or special file, not a notebook")
        size += entry.stat(follow_symlinks=False).st_size
        if size > CAPS.bytes:
            raise ArchiveError(f"more than {CAPS.bytes >> 20} MiB of notebooks")
        notebooks.append(Path(entry.path))
    return notebooks, passed_over


def _store(notebooks: list[Path], target: Path) -> None:
    """Replace a student's submission folder with copies of these notebooks (regular files, checked by the caller)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for notebook in notebooks:
        shutil.copyfile(notebook, target / notebook.name, follow_symlinks=False)


def _too_long(student: str) -> str:
    return (
        f"the upload could not be taken in: the student id is {len(student)} characters long; at most {ID_LIMIT} are"
        " allowed (rename the upload)"
    )


def _why(error: BaseException) -> str:
    if isinstance(error, ArchiveError):
        return str(error)
    return printable(f"{type(error).__name__}: {error}")


def _from_flat_folder(source: Path, assignment: str, submitted: Path) -> Intake:
    return _collect(sorted(source.glob("*.ipynb")), source, assignment, submitted)


def _from_archive(archive: Path, assignment: str, submitted: Path) -> Intake:
    with tempfile.TemporaryDirectory(prefix="grader-intake-") as scratch:
        root = Path(scratch)
        rejected, skipped = _unpack_class(archive, root)
        files = sorted(p for p in root.rglob("*.ipynb") if "__MACOSX" not in p.parts and p.is_file())
        intake = _collect(files, root, assignment, submitted, shown_as=archive, rejected=frozenset(rejected))
    for student in rejected:
        shutil.rmtree(submitted / student / assignment, ignore_errors=True)  # an older upload is not this one
    intake.skipped += skipped
    intake.rejected |= rejected
    return intake


def _unpack_class(archive: Path, root: Path) -> tuple[dict[str, str], list[str]]:
    """Extract the notebooks and nested uploads of an LMS archive into `root`.

    Returns the students whose files could not be taken in (with why), and what was passed over for want of a
    student id. Only an unreadable class archive raises (CourseError).
    """
    rejected: dict[str, str] = {}
    skipped: list[str] = []
    budgets: dict[str | None, Budget] = {}
    try:
        for member in members(archive, CAPS):
            owner = _owner(member.name)
            if owner in rejected or not (member.problem or _wanted(member.name)):
                continue
            if owner is not None and len(owner) > ID_LIMIT:
                rejected[owner] = _too_long(owner)
                continue
            try:
                _extract(member, root, budgets.setdefault(owner, Budget(CAPS)), depth=0)
            except ArchiveError as error:
                if owner is None:
                    skipped.append(f"{archive}: {error}")
                else:
                    rejected[owner] = f"the upload could not be taken in: {error}"
    except ArchiveError as error:
        raise CourseError(f"{archive}: cannot be extracted ({error})") from None
    return rejected, skipped


def _extract(member: Member, folder: Path, budget: Budget, depth: int) -> None:
    """Write one wanted member under `folder`; a nested archive is extracted, in its stead, into a folder named after
    it (as nbgrader's unzip does). ArchiveError for anything that may not be taken in."""
    if member.problem:
        raise ArchiveError(member.problem)
    target = folder / member.name
    member.save(target, budget)
    if not is_archive(member.name):
        return
    if depth >= NESTING:
        raise ArchiveError(f"archives nested more than {NESTING} deep")
    inner = target.with_name(archive_stem(target.name))
    try:
        for nested in members(target, CAPS):
            if nested.problem or _wanted(nested.name):
                _extract(nested, inner, budget, depth + 1)
    except ArchiveError as error:
        raise ArchiveError(f"{member.name}: {error}") from None
    finally:
        target.unlink()


def _wanted(name: str) -> bool:
    """Only notebooks and archives are extracted; everything else a student uploaded is passed over unwritten."""
    return "__MACOSX" not in name.split("/") and (name.endswith(".ipynb") or is_archive(name))


def _owner(name: str) -> str | None:
    """The student a member belongs to: the leading token of its first path component (None if there is none)."""
    first = name.lstrip("/\\").split("/", 1)[0]
    token = first.split("_", 1)[0] if "_" in first else archive_stem(first).removesuffix(".ipynb")
    return token if OWNER.fullmatch(token) else None


def _collect(
    files: list[Path],
    root: Path,
    assignment: str,
    submitted: Path,
    shown_as: Path | None = None,
    rejected: frozenset[str] = frozenset(),
) -> Intake:
    """Name each notebook's student with nbgrader's FileNameCollectorPlugin and store it in nbgrader's layout
    (the `rejected` students' notebooks are left out)."""
    from nbgrader.plugins import FileNameCollectorPlugin

    collector = FileNameCollectorPlugin(named_regexp=NAMED_REGEXP)
    notebook = _notebook_name(assignment)
    intake = Intake(assignments=[assignment])
    for path in files:
        name = path.relative_to(root).as_posix()
        shown = f"{shown_as}: {name}" if shown_as else str(path)
        if path.is_symlink() or not path.is_file():
            intake.skipped.append(f"{shown}: a symbolic link or special file, not taken in")
            continue
        match = collector.collect(name)
        if not match:
            intake.skipped.append(f"{shown}: no student id in the name (expected <student>.ipynb or <student>_*)")
            continue
        student = match["student_id"]
        if student in rejected or student in intake.rejected:
            continue
        if len(student) > ID_LIMIT:
            intake.rejected[student] = _too_long(student)
            shutil.rmtree(submitted / student / assignment, ignore_errors=True)  # an older upload is not this one
            continue
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
