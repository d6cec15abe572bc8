"""Installable as documented (docs/instructor.md, "Installing the grader"): a wheel built from this checkout and
installed into a fresh virtual environment, outside the checkout, finds the course from the working folder or from
GRADER_COURSE_ROOT, and says in one line, without a traceback, when it finds none."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `grader` command of a fresh venv holding only the built wheel, with the pinned packages of this
    environment visible through a .pth file (nothing is downloaded)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # built from a copy, so the build leaves nothing in the checkout
    shutil.copytree(REPO / "grader", source / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(root / "dist"), str(source)],
        check=True,
        capture_output=True,
    )
    [wheel] = (root / "dist").glob("*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python3.*/site-packages")
    (site / "pinned.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [*pip, "--python", str(venv / "bin" / "python"), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    return venv / "bin" / "grader"


def run(grader: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "GRADER_COURSE_ROOT")}
    return subprocess.run(
        [str(grader), *args], cwd=cwd, env={**clean, **env}, capture_output=True, text=True, timeout=600
    )


def test_the_wheel_holds_the_grader_not_the_checkout(installed: Path, tmp_path: Path) -> None:
    python = installed.parent / "python"
    done = subprocess.run(
        [str(python), "-c", "import grader.cli; print(grader.cli.__file__)"],
        cwd=tmp_path,
        env={name: value for name, value in os.environ.items() if name != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(done.stdout.strip()).is_relative_to(installed.parent.parent), done.stdout


def test_release_check_in_the_course_folder_passes(installed: Path) -> None:
    done = run(installed, "release", "--check", cwd=REPO / "solutions")  # a folder inside the course: its parent
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "release check: exercises/ is current, no leaks"


def test_outside_a_course_it_says_how_to_point_at_one_in_one_line(installed: Path, tmp_path: Path) -> None:
    done = run(installed, "release", "--check", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: no course found in {tmp_path.resolve()}") and "GRADER_COURSE_ROOT" in line


def test_grader_course_root_names_the_course_from_anywhere(installed: Path, tmp_path: Path) -> None:
    done = run(installed, "validate", "no_such_assignment", cwd=tmp_path, GRADER_COURSE_ROOT=str(REPO))
    assert done.returncode == 1
    assert done.stderr.strip() == "error: solutions: no assignment folder named no_such_assignment"
