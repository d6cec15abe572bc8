"""`python -m grader student-edition DIR`: the course as a student gets it, a git repository with nothing of
solutions/ in it.

It holds the chapters, the released exercises (exercises/), the grader's two student commands (`check`, `workspace`),
the pinned requirements, the nbgrader configuration, JupyterLab's settings (the course's Validate button) with
nothing of the instructor's (no Formgrader, no Create Assignment), GRADED_CELLS (which test cells hold hidden
tests, for `check`), and from grader/templates/student_edition/ its README, Makefile and .gitignore. Before it is
committed every file is searched for the course's secret lines, and after, every file of every commit of its
history: any found stops the command with one line per leak.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from grader.check import GRADED_CELLS
from grader.course import CourseError, assignment_names, relative, root, solutions
from grader.leaks import Secret, leaks_in, public_source_lines, secret_lines, texts, whole_file_secrets
from grader.notebooks import assignment_notebooks, hidden_test_ids, nbgrader_cells, read_notebook

TEMPLATE = Path(__file__).resolve().parent / "templates" / "student_edition"
COPIED = ("chapters", "exercises", "requirements.txt", "nbgrader_config.py", "venv.mk")
# The grader modules the student commands (`check` without --hidden, `workspace`) import, and its configuration.
STUDENT_MODULES = (
    "__init__", "__main__", "cli", "check", "course", "escaping", "execute", "nbgrader_config", "notebooks", "tables",
    "validate_button", "workspace",
)  # fmt: skip
# pyproject.toml's tables a student's `pip install -e .` needs (the rest configures the course's tests and linter).
PYPROJECT_TABLES = re.compile(r"build-system|project(\..*)?|tool\.setuptools(\..*)?")
# nbgrader's parts for instructors: a student's JupyterLab has Validate, and none of these.
INSTRUCTOR_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader", "grader.formgrader")
INSTRUCTOR_LAB_EXTENSIONS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment")
# What jupyter_config/ holds for everyone, copied as the course has it: the course's own JupyterLab extension (the
# Validate button, hidden answers) with the setting that finds it, and the settings it changes (no news toast).
SETTING_OVERRIDES = "labconfig/default_setting_overrides.json"
COURSE_JUPYTER_CONFIG = ("jupyter_server_config.py", "labextensions", SETTING_OVERRIDES)
JUNK = {".ipynb_checkpoints", "__pycache__"}
COMMITTER = ("course grader", "grader@localhost")  # where git has no identity of its own


def student_edition(target: Path) -> list[Path]:
    """Write the student edition into `target` (a new or empty folder, or an edition written before, which is
    updated) and commit it there; return its files. CourseError, with one line per leak, if any file or any commit
    holds a secret line of the course (nothing is committed when a file does)."""
    _ready(target)
    _write(target)
    secrets = edition_secrets()
    leaks = leaks_in(secrets, _tree_files(target))
    if leaks:
        raise CourseError(f"{relative(target)}: the student edition leaks, nothing committed:\n" + "\n".join(leaks))
    _git(target, "add", "--all")
    if _git(target, "status", "--porcelain"):
        _git(target, "commit", "--quiet", "--message", f"Student edition of the course ({_course_version()})")
    leaks = edition_leaks(target, secrets)
    if leaks:
        raise CourseError(f"{relative(target)}: its git history leaks:\n" + "\n".join(leaks))
    return sorted(target / name for name in _git(target, "ls-files").splitlines())


def edition_secrets() -> list[Secret]:
    """The lines a student edition must never hold: those of the solution and hidden-test blocks of the source
    notebooks, and every line of every other file in solutions/ (checks, scripted mistakes, equivalent mutants),
    unless it is public already: in a public part of a source notebook, or in a file the edition ships as the
    course wrote it (a chapter shows a line of a solution where it teaches it; the chapters are public)."""
    sources = [path for name in assignment_names() for path in assignment_notebooks(solutions() / name)]
    others = sorted(p for p in solutions().rglob("*") if p.is_file() and p.suffix != ".ipynb" and not _junk(p))
    public: set[str] = set()
    for path in [*(root() / "chapters").glob("*"), *_student_modules(), *TEMPLATE.glob("*")]:
        if path.is_file():
            public |= _lines(path.read_bytes(), path.name)
    secrets = secret_lines(sources) + whole_file_secrets(others, public_source_lines(sources))
    return [secret for secret in secrets if secret.line not in public]


def edition_leaks(target: Path, secrets: list[Secret]) -> list[str]:
    """Every secret line in a student edition: in its files, and in every file of every commit of its history."""
    return leaks_in(secrets, _tree_files(target)) + leaks_in(secrets, _history_files(target))


def graded_cells() -> dict[str, dict[str, list[str]]]:
    """GRADED_CELLS: for each exercise notebook, the grade ids of its graded cells and of those with hidden tests."""
    cells = {}
    for name in assignment_names():
        for path in assignment_notebooks(solutions() / name):
            source = read_notebook(path)
            graded = sorted(meta["grade_id"] for _, _, meta in nbgrader_cells(source) if "grade_id" in meta)
            cells[path.name] = {"assignment": name, "graded": graded, "hidden": sorted(hidden_test_ids(source))}
    return cells


def _ready(target: Path) -> None:
    """A new or empty folder becomes a git repository; an edition written before has its tracked files removed
    (what git ignores there, a student's workspace/ or .venv/, stays)."""
    if target.exists() and not target.is_dir():
        raise CourseError(f"{relative(target)}: not a folder")
    if target.is_dir() and any(target.iterdir()):
        if not (target / ".git").is_dir() or not (target / GRADED_CELLS).is_file():
            raise CourseError(f"{relative(target)}: not empty, and not a student edition written before")
        for name in _git(target, "ls-files").splitlines():
            (target / name).unlink(missing_ok=True)
        return
    target.mkdir(parents=True, exist_ok=True)
    _git(target, "init", "--quiet", "--initial-branch=main")


def _write(target: Path) -> None:
    for name in COPIED:
        _copy(root() / name, target / name)
    for path in _student_modules():
        _copy(path, target / "grader" / path.name)
    for path in TEMPLATE.iterdir():
        _copy(path, target / ("." + path.name[len("dot-") :] if path.name.startswith("dot-") else path.name))
    (target / GRADED_CELLS).write_text(json.dumps(graded_cells(), indent=1) + "\n", encoding="utf-8")
    (target / "pyproject.toml").write_text(_pyproject(), encoding="utf-8")
    _write_jupyter_config(target / "jupyter_config")


def _student_modules() -> list[Path]:
    return [Path(__file__).resolve().parent / f"{name}.py" for name in STUDENT_MODULES]


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        for path in sorted(source.rglob("*")):
            if path.is_file() and not _junk(path):
                _copy(path, target / path.relative_to(source))
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _junk(path: Path) -> bool:
    return bool(JUNK & set(path.parts)) or path.suffix == ".pyc"


def _pyproject() -> str:
    """The course's pyproject.toml without the tables that configure its tests and linter."""
    text = (root() / "pyproject.toml").read_text(encoding="utf-8")
    tables = re.split(r"(?m)^(?=\[)", text)
    return "".join(t for t in tables if (m := re.match(r"\[(.*)\]", t)) and PYPROJECT_TABLES.fullmatch(m.group(1)))


def _write_jupyter_config(folder: Path) -> None:
    """The course's JupyterLab settings (jupyter_config/), nbgrader's instructor parts turned off as well."""
    server = json.loads((root() / "jupyter_config" / "jupyter_server_config.json").read_text(encoding="utf-8"))
    server.setdefault("ServerApp", {}).setdefault("jpserver_extensions", {}).update(
        dict.fromkeys(INSTRUCTOR_SERVER_EXTENSIONS, False)
    )
    page = json.loads((root() / "jupyter_config" / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    page.setdefault("disabledExtensions", {}).update(dict.fromkeys(INSTRUCTOR_LAB_EXTENSIONS, True))
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    (folder / "jupyter_server_config.json").write_text(json.dumps(server, indent=2) + "\n", encoding="utf-8")
    (folder / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=2) + "\n", encoding="utf-8")
    for name in COURSE_JUPYTER_CONFIG:
        _copy(root() / "jupyter_config" / name, folder / name)


def _lines(content: bytes, name: str) -> set[str]:
    return {line.strip() for _, text in texts(name, name, content) for line in text.splitlines()}


def _tree_files(target: Path) -> Iterator[tuple[str, str, bytes]]:
    """Every file of the edition's folder, but git's own and what git ignores (a student's work, the venv)."""
    listed = _git(target, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    for name in sorted(set(listed)):
        path = target / name
        if path.is_file():
            yield f"{relative(target)}/{name}", path.name, path.read_bytes()


def _history_files(target: Path) -> Iterator[tuple[str, str, bytes]]:
    """Every file of every commit of the repository (each distinct content once)."""
    seen: set[str] = set()
    for commit in _git(target, "rev-list", "--all").split():
        for entry in _git(target, "ls-tree", "-r", "--full-tree", commit).splitlines():
            info, name = entry.split("\t", 1)
            kind, blob = info.split()[1:3]
            if kind == "blob" and blob not in seen:
                seen.add(blob)
                content = subprocess.run(
                    ["git", "cat-file", "blob", blob], cwd=target, capture_output=True, check=True
                ).stdout
                yield f"{relative(target)} commit {commit[:12]}:{name}", Path(name).name, content


def _course_version() -> str:
    """The course's commit, where it is a git checkout."""
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root(), capture_output=True, text=True)
    return f"course commit {found.stdout.strip()}" if found.returncode == 0 else "course outside git"


def _git(target: Path, *args: str) -> str:
    """Run git in the edition; where git has no identity set up, it commits as the course grader."""
    known = subprocess.run(["git", "config", "user.email"], cwd=target, capture_output=True).returncode == 0
    identity = [] if known else ["-c", f"user.name={COMMITTER[0]}", "-c", f"user.email={COMMITTER[1]}"]
    done = subprocess.run(["git", *identity, *args], cwd=target, capture_output=True, text=True)
    if done.returncode != 0:
        raise CourseError(f"{relative(target)}: git {args[0]} failed: {done.stderr.strip()}")
    return done.stdout
