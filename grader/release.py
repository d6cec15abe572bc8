"""solutions/ -> exercises/: write the hidden-test blocks that name the checks, generate the student release with
nbgrader, or check that both are current and that the release is leak-free."""

from __future__ import annotations

import filecmp
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from traitlets.config import Config

from grader.course import CourseError, assignment_names, exercises, nbgrader_config, relative, solutions
from grader.hidden_tests import with_hidden_blocks
from grader.leaks import find_leaks, secret_lines
from grader.nbgrader_setup import ready_nbgrader
from grader.notebooks import assignment_notebooks, check_source_notebook, describe_cell, read_notebook
from grader.references import make_current
from grader.trusted import has_trusted_check


def check_sources(assignment: str) -> list[Path]:
    """Check every source notebook of an assignment before nbgrader sees it; return their paths."""
    notebooks = assignment_notebooks(solutions() / assignment)
    for path in notebooks:
        check_source_notebook(path)
    return notebooks


def generate(assignment: str, config: Config) -> None:
    """Run nbgrader generate_assignment: write the release and record the assignment in the gradebook."""
    check_sources(assignment)
    # Imported here: nbgrader takes seconds to import, and input errors should answer at once.
    from nbgrader.converters import GenerateAssignment
    from nbgrader.converters.base import NbGraderException
    from nbgrader.coursedir import CourseDirectory

    ready_nbgrader()
    converter = GenerateAssignment(coursedir=CourseDirectory(config=config), config=config)
    converter.coursedir.assignment_id = assignment
    converter.force = True
    converter.create_assignment = True
    try:
        converter.start()
    except NbGraderException as error:
        raise CourseError(
            f"{relative(solutions() / assignment)}: nbgrader generate_assignment failed: {error}"
        ) from None


def generated_sources(names: list[str]) -> dict[Path, NotebookNode]:
    """Each source notebook of these assignments with its hidden-test blocks written as the exercise's checks name
    them (grader.hidden_tests)."""
    return {
        path: with_hidden_blocks(read_notebook(path), name)
        for name in names
        if has_trusted_check(name)
        for path in check_sources(name)
    }


def recorded_release(assignment: str, work_dir: Path, db_url: str | None = None) -> dict[str, NotebookNode]:
    """Generate an assignment's release into a scratch folder, recording the assignment (each graded cell, hidden
    tests included) in the gradebook of `work_dir` (or `db_url`); return what solutions/ generates, by notebook
    name: not exercises/, which a student may have edited."""
    with tempfile.TemporaryDirectory(prefix="grader-release-") as scratch:
        generate(assignment, nbgrader_config(work_dir=work_dir, release=Path(scratch), db_url=db_url))
        return {path.name: read_notebook(path) for path in sorted((Path(scratch) / assignment).glob("*.ipynb"))}


def fresh_release(assignment: str) -> dict[str, NotebookNode]:
    """What solutions/ generates for an assignment's release, by notebook name; exercises/ and work/ untouched."""
    with tempfile.TemporaryDirectory(prefix="grader-work-") as scratch:
        return recorded_release(assignment, Path(scratch) / "work")


def release(assignments: list[str]) -> list[str]:
    """Rewrite the hidden-test blocks of these assignments (all when empty), compute the solution's observations on
    this machine (grader.references), then regenerate exercises/; return the names released.

    Each assignment is generated into a scratch folder first, so a failure leaves exercises/ as it was.
    """
    names = assignment_names(assignments)
    for path, notebook in generated_sources(names).items():
        if notebook != read_notebook(path):
            nbformat.write(notebook, path)
    make_current([name for name in names if has_trusted_check(name)])  # each solution passes its own checks
    for name in names:
        with tempfile.TemporaryDirectory(prefix="grader-release-") as scratch:
            generate(name, nbgrader_config(release=Path(scratch)))
            target = exercises() / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(Path(scratch) / name, target)
    return names


def check_release(assignments: list[str]) -> list[str]:
    """Problems that make exercises/ wrong: stale files of these assignments, and leaked secret lines."""
    names = assignment_names(assignments)
    problems = []
    if not assignments:
        problems += [
            f"{relative(p)}: no assignment of that name in {relative(solutions())}"
            for p in sorted(exercises().glob("*"))
            if p.is_dir() and p.name not in names
        ]
    for path, notebook in generated_sources(names).items():
        problems += _stale_hidden_blocks(path, notebook)
    with tempfile.TemporaryDirectory(prefix="grader-release-") as scratch:
        fresh = Path(scratch) / "exercises"
        for name in names:
            generate(name, nbgrader_config(work_dir=Path(scratch) / "work", release=fresh))
            problems += _staleness(fresh / name, exercises() / name)
    # Leaks are looked for course-wide: a line of any assignment's secrets, anywhere under exercises/.
    secrets = secret_lines([path for name in assignment_names() for path in check_sources(name)])
    if exercises().exists():
        problems += find_leaks(secrets, exercises())
    return problems


def _stale_hidden_blocks(path: Path, generated: NotebookNode) -> list[str]:
    """The cells whose hidden-test block differs from the call `release` writes (edited by hand, or an old tab)."""
    committed = read_notebook(path)
    return [
        f"{relative(path)}: {describe_cell(number, new.get('metadata', {}).get('nbgrader'))} hidden-test block differs "
        f"from what `release` writes; run `python -m grader release {path.parent.name}`"
        for number, (old, new) in enumerate(zip(committed.cells, generated.cells, strict=True), start=1)
        if old.source != new.source
    ]


def _staleness(fresh: Path, committed: Path) -> list[str]:
    """How the committed release differs from a fresh generation of it, file by file."""
    if not committed.is_dir():
        return [f"{relative(committed)}: missing; run `python -m grader release {committed.name}`"]
    fresh_files = {p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file()}
    committed_files = {p.relative_to(committed) for p in committed.rglob("*") if p.is_file()}
    problems = [f"{relative(committed / f)}: missing from the release" for f in sorted(fresh_files - committed_files)]
    extra = sorted(committed_files - fresh_files)
    problems += [f"{relative(committed / f)}: not generated from solutions/" for f in extra]
    for name in sorted(fresh_files & committed_files):
        if not filecmp.cmp(fresh / name, committed / name, shallow=False):
            problems.append(_difference(fresh / name, committed / name))
    return problems


def _difference(fresh: Path, committed: Path) -> str:
    """Name the first cell where a committed notebook differs from the freshly generated one."""
    stale = f"{relative(committed)}: stale"
    if committed.suffix != ".ipynb":
        return f"{stale} (differs from what solutions/ generates)"
    try:
        old = read_notebook(committed)
    except CourseError as error:
        return str(error)
    new = read_notebook(fresh)
    for number, (old_cell, new_cell) in enumerate(zip(old.cells, new.cells, strict=False), start=1):
        if old_cell != new_cell:
            meta = new_cell.get("metadata", {}).get("nbgrader")
            return f"{stale}: {describe_cell(number, meta)} differs from what solutions/ generates"
    if len(old.cells) != len(new.cells):
        return f"{stale}: has {len(old.cells)} cells, solutions/ generates {len(new.cells)}"
    return f"{stale}: notebook metadata differs from what solutions/ generates"
