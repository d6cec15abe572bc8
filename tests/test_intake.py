"""The three intake forms land in nbgrader's layout: <student>/<assignment>/<notebook>.ipynb."""

from __future__ import annotations

import io
import random
import shutil
import stat
import tarfile
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from grader.course import CourseError
from grader.intake import take_in

NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def _layout(submitted: Path) -> list[str]:
    return sorted(str(p.relative_to(submitted)) for p in submitted.rglob("*") if p.is_file())


def test_nbgrader_style_folder(tmp_path: Path) -> None:
    for student in ("alice", "bob"):
        folder = tmp_path / "in" / student / "ex01_slots"
        folder.mkdir(parents=True)
        (folder / "ex01_slots.ipynb").write_text(NOTEBOOK)
    (tmp_path / "in" / "bob" / "not_an_assignment").mkdir()
    intake = take_in(tmp_path / "in", None, tmp_path / "submitted")
    assert intake.assignments == ["ex01_slots"] and intake.students == {"alice", "bob"}
    assert _layout(tmp_path / "submitted") == ["alice/ex01_slots/ex01_slots.ipynb", "bob/ex01_slots/ex01_slots.ipynb"]


def test_flat_folder_named_by_student(tmp_path: Path) -> None:
    incoming = tmp_path / "in"
    incoming.mkdir()
    for name in ("alice.ipynb", "bob_final_v2.ipynb", "_nameless.ipynb"):
        (incoming / name).write_text(NOTEBOOK)
    intake = take_in(incoming, "ex01_slots", tmp_path / "submitted")
    assert intake.students == {"alice", "bob"}
    assert _layout(tmp_path / "submitted") == ["alice/ex01_slots/ex01_slots.ipynb", "bob/ex01_slots/ex01_slots.ipynb"]
    assert intake.skipped == [
        f"{incoming / '_nameless.ipynb'}: no student id in the name (expected <student>.ipynb or <student>_*)"
    ]


def test_flat_folder_needs_the_assignment(tmp_path: Path) -> None:
    (tmp_path / "alice.ipynb").write_text(NOTEBOOK)
    with pytest.raises(CourseError, match="name the assignment these notebooks belong to"):
        take_in(tmp_path, None, tmp_path / "submitted")


def test_lms_zip(tmp_path: Path) -> None:
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("alice_1234_5678_ex01_slots.ipynb", NOTEBOOK)
        zipped.writestr("bob_99_assignsubmission_file/ex01.ipynb", NOTEBOOK)
        zipped.writestr("carol_1.ipynb", NOTEBOOK)
        zipped.writestr("carol_2.ipynb", NOTEBOOK)
        zipped.writestr("__MACOSX/._alice_1234_5678_ex01_slots.ipynb", "junk")
        zipped.writestr("readme.txt", "not a notebook")
    intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    assert intake.students == {"alice", "bob", "carol"}
    assert _layout(tmp_path / "submitted") == [
        "alice/ex01_slots/ex01_slots.ipynb",
        "bob/ex01_slots/ex01_slots.ipynb",
        "carol/ex01_slots/ex01_slots.ipynb",
    ]
    assert intake.skipped == [f"{archive}: carol_2.ipynb: a second notebook for student 'carol'; the first one is kept"]


def test_tar_gz_archive(tmp_path: Path) -> None:
    source = tmp_path / "dave_ex01.ipynb"
    source.write_text(NOTEBOOK)
    archive = tmp_path / "download.tar.gz"
    with tarfile.open(archive, "w:gz") as tarred:
        tarred.add(source, arcname="dave_ex01.ipynb")
    assert take_in(archive, "ex01_slots", tmp_path / "submitted").students == {"dave"}


def test_broken_archive_is_one_clear_error(tmp_path: Path) -> None:
    archive = tmp_path / "download.zip"
    archive.write_bytes(b"this is not a zip file")
    with pytest.raises(CourseError, match=r"download.zip: cannot be extracted"):
        take_in(archive, "ex01_slots", tmp_path / "submitted")


def test_unknown_source(tmp_path: Path) -> None:
    with pytest.raises(CourseError, match="no such file or folder"):
        take_in(tmp_path / "nowhere", "ex01_slots", tmp_path / "submitted")
    with pytest.raises(CourseError, match="no submissions found"):
        take_in(tmp_path, "ex01_slots", tmp_path / "submitted")


# A student's upload is hostile input: whatever is wrong with it is that student's problem, never the class's.


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data in members.items():
            zipped.writestr(name, data)
    return buffer.getvalue()


def _class_archive(tmp_path: Path, uploads: dict[str, bytes]) -> Path:
    """An LMS archive: two honest students and the given uploads."""
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("alice_1_ex01.ipynb", NOTEBOOK)
        zipped.writestr("bob_2_upload.zip", _zip_bytes({"work/ex01_slots.ipynb": NOTEBOOK.encode()}))
        for name, data in uploads.items():
            zipped.writestr(name, data)
    return archive


def _honest_taken_in(intake, submitted: Path) -> None:
    assert intake.students == {"alice", "bob"}
    assert _layout(submitted) == ["alice/ex01_slots/ex01_slots.ipynb", "bob/ex01_slots/ex01_slots.ipynb"]


def test_a_gz_upload_that_is_not_an_archive_rejects_only_its_student(tmp_path: Path) -> None:
    archive = _class_archive(tmp_path, {"mallory_3_notebook.ipynb.gz": b"plain text, not gzip"})
    intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    _honest_taken_in(intake, tmp_path / "submitted")
    assert list(intake.rejected) == ["mallory"]
    assert intake.rejected["mallory"].startswith("the upload could not be taken in: mallory_3_notebook.ipynb.gz: ")
    assert "not a readable archive" in intake.rejected["mallory"]


def test_a_nested_member_leaving_its_folder_is_refused_and_never_written(tmp_path: Path) -> None:
    escaping = _zip_bytes({"ex01_slots.ipynb": NOTEBOOK.encode(), "../escape.txt": b"outside", "/etc/x.ipynb": b"{}"})
    archive = _class_archive(tmp_path, {"mallory_3_upload.zip": escaping})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(scratch))  # the extraction's scratch folder, to look around it
        intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    _honest_taken_in(intake, tmp_path / "submitted")
    assert intake.rejected == {
        "mallory": "the upload could not be taken in: mallory_3_upload.zip: '../escape.txt' leaves its folder ('..')"
    }
    assert not [p for p in tmp_path.rglob("escape.txt")], "a member was written outside its folder"


@pytest.mark.parametrize(
    "kind, reason",
    [
        (tarfile.SYMTYPE, "'mallory_3/ex01.ipynb' is a link or special file"),
        (tarfile.LNKTYPE, "'mallory_3/ex01.ipynb' is a link or special file"),
        ("absolute", "'/mallory_3/ex01.ipynb' is an absolute path"),
    ],
)
def test_links_and_absolute_paths_in_a_tar_reject_their_student(tmp_path: Path, kind: bytes | str, reason: str) -> None:
    archive = tmp_path / "download.tar.gz"
    with tarfile.open(archive, "w:gz") as tarred:
        honest = tarfile.TarInfo("alice_1_ex01.ipynb")
        honest.size = len(NOTEBOOK)
        tarred.addfile(honest, io.BytesIO(NOTEBOOK.encode()))
        hostile = tarfile.TarInfo("/mallory_3/ex01.ipynb" if kind == "absolute" else "mallory_3/ex01.ipynb")
        if kind == "absolute":
            hostile.size = len(NOTEBOOK)
            tarred.addfile(hostile, io.BytesIO(NOTEBOOK.encode()))
        else:
            hostile.type, hostile.linkname = kind, "/etc/passwd"
            tarred.addfile(hostile)
    intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    assert intake.students == {"alice"}
    assert intake.rejected == {"mallory": f"the upload could not be taken in: {reason}"}
    assert _layout(tmp_path / "submitted") == ["alice/ex01_slots/ex01_slots.ipynb"]


def test_a_zip_link_member_is_refused(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("mallory_3/ex01.ipynb")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr(link, "/etc/passwd")
    archive = _class_archive(tmp_path, {"mallory_3_upload.zip": buffer.getvalue()})
    intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    _honest_taken_in(intake, tmp_path / "submitted")
    assert intake.rejected["mallory"].endswith("'mallory_3/ex01.ipynb' is a link or special file")


class _Zeros(io.RawIOBase):
    """A stream of `size` zero bytes, never held in memory at once."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


BOMB = 3 << 29  # 1.5 GiB of zeros, about 1.5 MB compressed


def _zip_bomb() -> tuple[str, bytes]:
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zipped:
        with zipped.open("ex01_slots.ipynb", "w", force_zip64=True) as member:
            shutil.copyfileobj(_Zeros(BOMB), member, 16 << 20)
    return "mallory_3_upload.zip", bomb.getvalue()


def _tar_bomb() -> tuple[str, bytes]:
    bomb = io.BytesIO()
    with tarfile.open(fileobj=bomb, mode="w:gz", compresslevel=6) as tarred:
        info = tarfile.TarInfo("ex01_slots.ipynb")
        info.size = BOMB
        tarred.addfile(info, _Zeros(BOMB))
    return "mallory_3_upload.tar.gz", bomb.getvalue()


@pytest.mark.parametrize("make_bomb", [_zip_bomb, _tar_bomb])
def test_a_nested_bomb_is_stopped_with_flat_memory(tmp_path: Path, make_bomb) -> None:
    name, bomb = make_bomb()
    assert len(bomb) < 2 << 20
    archive = _class_archive(tmp_path, {name: bomb})
    del bomb
    tracemalloc.start()
    try:
        intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _honest_taken_in(intake, tmp_path / "submitted")
    assert intake.rejected["mallory"].endswith(": a member compressed more than 200 to 1 (a zip bomb?)")
    assert peak < 16 << 20, f"extraction peaked at {peak >> 20} MiB of Python memory"


def test_a_student_over_the_byte_cap_is_rejected(tmp_path: Path) -> None:
    noise = random.Random(13).randbytes(65 << 20)  # incompressible: the ratio cap never applies
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zipped:
        zipped.writestr("alice_1_ex01.ipynb", NOTEBOOK)
        zipped.writestr("mallory_3_ex01.ipynb", noise)
    intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    assert intake.students == {"alice"}
    assert intake.rejected == {"mallory": "the upload could not be taken in: more than 64 MiB once extracted"}


def test_a_nested_upload_with_a_notebook_is_taken_in(tmp_path: Path) -> None:
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w:gz") as tarred:
        info = tarfile.TarInfo("deep/ex01_slots.ipynb")
        info.size = len(NOTEBOOK)
        tarred.addfile(info, io.BytesIO(NOTEBOOK.encode()))
    archive = _class_archive(tmp_path, {"carol_4_upload.tar.gz": inner.getvalue()})
    intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    assert intake.students == {"alice", "bob", "carol"} and intake.rejected == {}


def test_a_folder_upload_takes_in_notebooks_only_and_rejects_links_and_special_files(tmp_path: Path) -> None:
    """Whatever else sits in a student's folder (a page with a script, a 1 GiB sparse file, a named pipe, a name
    that is not UTF-8) is passed over unread; a link in place of a folder or a notebook rejects that student only."""
    import os

    incoming = tmp_path / "in"

    def folder(student: str) -> Path:
        made = incoming / student / "ex01_slots"
        made.mkdir(parents=True)
        return made

    honest = folder("honest")
    (honest / "ex01_slots.ipynb").write_text(NOTEBOOK)
    (honest / "derivation.html").write_text("<script>alert(1)</script>")
    with open(honest / "data.bin", "wb") as sparse:
        sparse.truncate(1 << 30)
    os.mkfifo(honest / "pipe")
    (honest / os.fsdecode(b"notes\xff.txt")).write_text("x")
    (folder("bob") / "ex01_slots.ipynb").write_text(NOTEBOOK)
    (incoming / "mallory").mkdir()
    (incoming / "mallory" / "ex01_slots").symlink_to(incoming / "bob" / "ex01_slots")
    (incoming / "trudy").symlink_to(incoming / "bob")
    os.mkfifo(folder("pat") / "ex01_slots.ipynb")
    (folder("linda") / "ex01_slots.ipynb").symlink_to(honest / "ex01_slots.ipynb")

    tracemalloc.start()
    intake = take_in(incoming, None, tmp_path / "submitted")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert _layout(tmp_path / "submitted") == ["bob/ex01_slots/ex01_slots.ipynb", "honest/ex01_slots/ex01_slots.ipynb"]
    assert set(intake.rejected) == {"mallory", "trudy", "pat", "linda"}
    assert "symbolic link" in intake.rejected["mallory"] and "symbolic link" in intake.rejected["trudy"]
    assert "special file" in intake.rejected["pat"]
    passed_over = "\n".join(intake.skipped)
    assert "derivation.html: not a notebook" in passed_over and "notes\\udcff.txt" in passed_over
    assert peak < 16 << 20, f"intake held {peak >> 20} MiB"


def test_a_flat_folder_passes_over_a_named_pipe(tmp_path: Path) -> None:
    import os

    incoming = tmp_path / "in"
    incoming.mkdir()
    (incoming / "alice.ipynb").write_text(NOTEBOOK)
    os.mkfifo(incoming / "mallory.ipynb")
    intake = take_in(incoming, "ex01_slots", tmp_path / "submitted")
    assert _layout(tmp_path / "submitted") == ["alice/ex01_slots/ex01_slots.ipynb"]
    assert any("mallory.ipynb: a symbolic link or special file" in line for line in intake.skipped)


def test_a_student_id_too_long_rejects_only_that_student_in_every_form(tmp_path: Path) -> None:
    """Ids are bounded at intake (every file name made from one then fits): a longer one is its student's clear
    error, in an archive (named by the file or by a folder) and in an nbgrader-style folder; the others come in."""
    from grader.intake import ID_LIMIT

    long, longer = "a" * (ID_LIMIT + 1), "b" * 246
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("alice_1.ipynb", NOTEBOOK)
        zipped.writestr(f"{long}.ipynb", NOTEBOOK)
        zipped.writestr(f"{longer}_1/ex01.ipynb", NOTEBOOK)
        zipped.writestr(f"{'c' * ID_LIMIT}_2.ipynb", NOTEBOOK)
    intake = take_in(archive, "ex01_slots", tmp_path / "submitted")
    assert intake.students == {"alice", "c" * ID_LIMIT}
    assert set(intake.rejected) == {long, longer}
    assert intake.rejected[longer] == (
        "the upload could not be taken in: the student id is 246 characters long; at most 128 are allowed"
        " (rename the upload)"
    )
    folders = tmp_path / "in"
    for student in ("dave", longer):
        (folders / student / "ex01_slots").mkdir(parents=True)
        (folders / student / "ex01_slots" / "ex01_slots.ipynb").write_text(NOTEBOOK)
    intake = take_in(folders, None, tmp_path / "submitted2")
    assert intake.students == {"dave"} and list(intake.rejected) == [longer]
    assert _layout(tmp_path / "submitted2") == ["dave/ex01_slots/ex01_slots.ipynb"]
