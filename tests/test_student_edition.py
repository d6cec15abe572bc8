"""`grader student-edition DIR`: the course as students get it, a git repository with no secret of solutions/ in any
file or commit, whose fresh clone runs the student commands (the browser test is tests/e2e/test_student_edition.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest

from grader.check import GRADED_CELLS, NOT_HERE
from grader.edition import SETTING_OVERRIDES, STUDENT_MODULES, edition_leaks, edition_secrets
from tests.conftest import REPO, grader_process

EXERCISE = "exercises/ex01_slots/ex01_slots.ipynb"


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def edition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("edition") / "nn-module-course"
    run = grader_process("student-edition", str(folder))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("student edition: ") and "no secret line in any commit" in run.stdout
    return folder


@pytest.fixture(scope="module")
def clone(edition: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("clone") / "course"
    subprocess.run(["git", "clone", "--quiet", str(edition), str(target)], check=True)
    return target


def test_it_holds_what_a_student_needs_and_nothing_else(edition: Path) -> None:
    files = set(git(edition, "ls-files").splitlines())
    tops = {name.split("/")[0] for name in files}
    assert tops == {
        ".gitignore", "Makefile", "README.md", GRADED_CELLS, "chapters", "exercises", "grader", "jupyter_config",
        "nbgrader_config.py", "pyproject.toml", "requirements.txt", "venv.mk",
    }  # fmt: skip
    assert {n for n in files if n.startswith("chapters/")} == set(git(REPO, "ls-files", "chapters").splitlines())
    assert {n for n in files if n.startswith("exercises/")} == set(git(REPO, "ls-files", "exercises").splitlines())
    assert {n for n in files if n.startswith("grader/")} == {f"grader/{m}.py" for m in STUDENT_MODULES}
    assert not [n for n in files if Path(n).name in ("checks.py", "mistakes.py") or "solution" in n.lower()]
    assert (edition / "requirements.txt").read_bytes() == (REPO / "requirements.txt").read_bytes()
    assert git(edition, "status", "--porcelain") == "" and len(git(edition, "rev-list", "--all").split()) == 1
    assert "[tool.pytest" not in (edition / "pyproject.toml").read_text()  # the course's test settings stay home
    lab = json.loads((edition / "jupyter_config/labconfig/page_config.json").read_text())["disabledExtensions"]
    assert lab["@jupyter/nbgrader:formgrader"] and lab["@jupyter/nbgrader:assignment-list"]
    overrides = (edition / "jupyter_config" / SETTING_OVERRIDES).read_bytes()
    assert overrides == (REPO / "jupyter_config" / SETTING_OVERRIDES).read_bytes()  # no news toast there either
    cells = json.loads((edition / GRADED_CELLS).read_text())["ex01_slots.ipynb"]
    assert cells["hidden"] == ["test_classify_slots_hidden", "test_copy_hidden"]


def test_no_secret_line_is_in_any_file_or_commit(edition: Path) -> None:
    secrets = edition_secrets()
    origins = " ".join(s.origin for s in secrets)
    for kind in ("solution", "hidden-test block", "checks.py", "mistakes.py"):
        assert kind in origins, f"the secrets must include the {kind} lines"
    assert edition_leaks(edition, secrets) == []


def test_the_leak_check_finds_a_secret_in_an_output_and_in_history_only(clone: Path, tmp_path: Path) -> None:
    """A secret line put in a notebook's output, and one committed and then deleted: both found, with where."""
    planted = tmp_path / "planted"
    subprocess.run(["git", "clone", "--quiet", str(clone), str(planted)], check=True)
    secrets = edition_secrets()
    solution = next(s for s in secrets if "solution" in s.origin)
    mistake = next(s for s in secrets if s.origin.endswith("mistakes.py"))
    notebook = nbformat.read(planted / EXERCISE, 4)
    code = next(c for c in notebook.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"  {solution.line}\n")]
    nbformat.write(notebook, planted / EXERCISE)
    (planted / "notes.txt").write_text(mistake.line + "\n")
    identity = ["-c", "user.name=t", "-c", "user.email=t@localhost"]
    git(planted, *identity, "commit", "--quiet", "-am", "outputs")
    git(planted, "add", "notes.txt")
    git(planted, *identity, "commit", "--quiet", "-m", "notes")
    git(planted, "rm", "--quiet", "notes.txt")
    git(planted, *identity, "commit", "--quiet", "-m", "gone")
    leaks = edition_leaks(planted, secrets)
    in_tree = [leak for leak in leaks if " commit " not in leak.split(":")[0]]
    assert len(in_tree) == 1 and EXERCISE in in_tree[0] and "output" in in_tree[0], leaks
    in_history = [leak for leak in leaks if "notes.txt" in leak]
    assert len(in_history) == 1 and mistake.origin in in_history[0], leaks


def test_a_fresh_clone_runs_the_student_commands_and_says_hidden_tests_run_when_graded(clone: Path) -> None:
    """In a virtual environment with the pinned packages but not the course's editable grader (the clone's own
    `pip install -e .` would install the clone's): only the clone's grader modules can be imported."""
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python3.*/site-packages")
    (site / "pinned.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "GRADER_COURSE_ROOT")}

    def grader(*args: str) -> subprocess.CompletedProcess:
        command = [str(venv / "bin" / "python"), "-m", "grader", *args]
        return subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True)

    filled = grader("workspace")
    assert filled.returncode == 0 and "workspace: new workspace/ex01_slots/ex01_slots.ipynb" in filled.stdout
    checked = grader("check", "workspace/ex01_slots/ex01_slots.ipynb", "--hidden")
    assert checked.returncode == 1, checked.stderr
    lines = checked.stdout.splitlines()
    hidden = [line for line in lines if line.startswith("test_classify_slots_hidden")]
    assert len(hidden) == 1 and "runs when graded" in hidden[0]
    assert lines[-2].startswith("visible tests: 0 of 4 points; 8 more points are decided by hidden tests")
    assert lines[-1] == NOT_HERE
    refused = grader("autograde", "anything")
    assert refused.returncode == 1
    assert refused.stderr.strip() == "error: this copy of the course has only the student commands (check, workspace)"


def test_writing_it_again_updates_it_in_a_new_commit_and_refuses_other_folders(edition: Path, tmp_path: Path) -> None:
    again = grader_process("student-edition", str(edition))
    assert again.returncode == 0, again.stderr
    assert len(git(edition, "rev-list", "--all").split()) == 1, "nothing changed: no new commit"
    stranger = tmp_path / "mine"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine\n")
    refused = grader_process("student-edition", str(stranger))
    assert refused.returncode == 1 and "not empty, and not a student edition" in refused.stderr
    assert (stranger / "notes.txt").read_text() == "mine\n"
