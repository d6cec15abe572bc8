"""The three intake forms land in nbgrader's layout: <student>/<assignment>/<notebook>.ipynb."""

from __future__ import annotations

import tarfile
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
