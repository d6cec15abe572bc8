"""The course's command line, `python -m grader COMMAND` (or `grader COMMAND`). Students: `check` runs an exercise's
tests, `workspace` copies new exercises into workspace/. Instructors: every other command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course import CourseError, default_db_url, relative, work
from grader.escaping import printable

if TYPE_CHECKING:
    from grader.sandbox import Limits


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except CourseError as error:
        print(f"error: {printable(str(error))}", file=sys.stderr)  # it may name a student's file
        return 1
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("grader."):
            raise
        # A student edition (grader.edition) holds only the modules of the student commands.
        print("error: this copy of the course has only the student commands (check, workspace)", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    release = commands.add_parser("release", help="regenerate exercises/ from solutions/")
    release.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    release.add_argument("--check", action="store_true", help="change nothing; fail if exercises/ is stale or leaks")
    release.set_defaults(run=_release)

    new = commands.add_parser("new", help="write solutions/exNN_name/: a new exercise's notebook, checks and mistakes")
    new.add_argument("name", metavar="exNN_name")
    new.set_defaults(run=_new)

    validate = commands.add_parser("validate", help="sources pass every graded cell, releases fail every one")
    validate.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    validate.set_defaults(run=_validate)

    coverage = commands.add_parser(
        "coverage", help="per hidden test, how many generated cases reach each value of its input's dimensions"
    )
    coverage.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    coverage.set_defaults(run=_coverage)

    autograde = commands.add_parser("autograde", help="grade a class: nbgrader folder, flat folder or LMS zip")
    autograde.add_argument("submissions", type=Path, metavar="SUBMISSIONS")
    autograde.add_argument("--assignment", metavar="A", help="the assignment (needed for flat folders and zips)")
    autograde.add_argument("--workers", type=int, help="submissions graded at once (default: number of cores)")
    autograde.add_argument(
        "--timeout", type=float, default=120.0, metavar="SECONDS", help="wall-clock limit per cell (default: 120)"
    )
    autograde.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on the dask.distributed cluster of this scheduler (tcp://HOST:PORT) instead of this machine",
    )
    _gradebook_options(autograde)
    autograde.set_defaults(run=_autograde)

    feedback = commands.add_parser("feedback", help="write per-student HTML feedback (nbgrader generate_feedback)")
    feedback.add_argument(
        "--show-hidden-tests",
        action="store_true",
        help="show the source and traceback of hidden-test cells (default: their points and broken rules only)",
    )
    _gradebook_options(feedback)
    feedback.set_defaults(run=_feedback)

    report = commands.add_parser("report", help="write grades.csv, summary.png and the class's common mistakes")
    report.add_argument("--out", type=Path, help="folder for the files (default: the work folder)")
    _gradebook_options(report)
    report.set_defaults(run=_report)

    check = commands.add_parser("check", help="(students) run the visible tests of one exercise notebook, part by part")
    check.add_argument(
        "notebook", type=Path, metavar="NOTEBOOK", help="the exercise notebook, or a folder holding only one of them"
    )
    check.add_argument(
        "--hidden",
        action="store_true",
        help="also run the hidden tests, as grading does (needs solutions/): each part's points and every broken rule",
    )
    check.set_defaults(run=_check)

    workspace = commands.add_parser(
        "workspace", help="(students) copy the chapters and exercises into workspace/ (never over your work)"
    )
    workspace.set_defaults(run=_workspace)

    edition = commands.add_parser(
        "student-edition", help="write the course as students get it (no solutions/) into DIR, a git repository"
    )
    edition.add_argument("folder", type=Path, metavar="DIR")
    edition.set_defaults(run=_student_edition)

    demo = commands.add_parser("demo", help="grade a sample class end to end in work/demo/")
    demo.add_argument("--workers", type=int, help="submissions graded at once (default: number of cores)")
    demo.set_defaults(run=_demo)
    return parser


def _gradebook_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--work", type=Path, help="grading work folder (default: work/)")
    command.add_argument("--db", metavar="URL", help="gradebook SQLAlchemy URL (default: WORK/gradebook.db)")


def _release(args: argparse.Namespace) -> int:
    from grader.release import check_release, release

    if not args.check:
        for name in release(args.assignments):
            print(f"released exercises/{name}")
        return 0
    problems = check_release(args.assignments)
    for problem in problems:
        print(problem)
    verdict = f"{len(problems)} problem(s)" if problems else "exercises/ is current, no leaks"
    print(f"release check: {verdict}")
    return 1 if problems else 0


def _new(args: argparse.Namespace) -> int:
    from grader.new_exercise import new_exercise

    folder = new_exercise(args.name)
    print(f"wrote {relative(folder)}/: now `python -m grader release {args.name}`, then make the part your own")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from grader.validate import table, validate

    checks = validate(args.assignments)
    print(table(checks))
    wrong = sum(not check.ok for check in checks)
    print(f"validate: {len(checks) - wrong} of {len(checks)} graded cells as expected")
    return 1 if wrong else 0


def _coverage(args: argparse.Namespace) -> int:
    from grader.course import assignment_names
    from grader.coverage import assignment_coverage, table

    problems = []
    for assignment in assignment_names(args.assignments):
        for part in assignment_coverage(assignment):
            print(table(assignment, part), end="\n\n")
            problems += part.problems()
    for problem in problems:
        print(f"coverage: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _autograde(args: argparse.Namespace) -> int:
    from grader.sandbox import Limits, worker_count

    work_dir, workers = _work(args), worker_count(args.workers)
    limits = Limits(cell_seconds=args.timeout, notebook_seconds=max(args.timeout, Limits.notebook_seconds))
    with _grading(args, work_dir, workers, limits) as grade:
        from grader.autograde import outcome_table, plan, reject
        from grader.intake import take_in
        from grader.progress import Progress

        intake = take_in(args.submissions, args.assignment, work_dir / "submitted")
        for problem in intake.skipped:
            print(f"skipped {printable(problem)}", file=sys.stderr)
        outcomes = [
            reject(assignment, student, reason, work_dir, args.db)
            for assignment in intake.assignments
            for student, reason in sorted(intake.rejected.items())
        ]
        for assignment in intake.assignments:
            todo = plan(assignment, work_dir, args.db)
            if todo.done:
                print(
                    f"{assignment}: {len(todo.done)} submission(s) already graded with the same files", file=sys.stderr
                )
            for student, changes in sorted(todo.changed.items()):
                print(
                    f"{assignment}: {printable(student)}: grades changed outside the grader ({'; '.join(changes)}):"
                    " graded again",
                    file=sys.stderr,
                )
            progress = Progress(len(todo.pending), label=f"{assignment} ")
            outcomes += grade(
                todo,
                on_outcome=lambda o, p=progress: p.advance(failed=o.status != "ok", note=f"{o.student}: {o.status}"),
            )
    print(outcome_table(outcomes, _db(args)))
    return 0


@contextmanager
def _grading(args: argparse.Namespace, work_dir: Path, workers: int, limits: Limits) -> Iterator[Callable[..., list]]:
    """How this run grades a plan: on the Dask cluster of --scheduler, or here, in a warm sandbox."""
    if args.scheduler:
        from grader.cluster import autograde_on_cluster, cluster

        with cluster(args.scheduler, limits) as client:
            yield partial(autograde_on_cluster, work_dir=work_dir, client=client, db_url=args.db)
        return
    from grader.sandbox import start_sandbox

    # Started first: the sandbox's warm server imports torch while this process imports nbgrader.
    with start_sandbox(work_dir, workers, limits) as sandbox:
        from grader.autograde import autograde

        yield partial(autograde, work_dir=work_dir, db_url=args.db, workers=workers, sandbox=sandbox)


def _feedback(args: argparse.Namespace) -> int:
    from grader.feedback import feedback

    made = feedback(_work(args), _db(args), show_hidden_tests=args.show_hidden_tests)
    kept = len(made.pages) - made.written
    print(f"wrote {made.written} feedback page(s) under {relative(_work(args) / 'feedback')}, {kept} unchanged")
    return 0


def _report(args: argparse.Namespace) -> int:
    from grader.report import report

    for path in report(_work(args), _db(args), args.out or _work(args)):
        print(f"wrote {relative(path)}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from grader.check import (
        NOT_HERE,
        check,
        check_table,
        check_with_hidden_tests,
        exercise_of,
        hidden_report,
        notebook_to_check,
    )

    notebook = notebook_to_check(args.notebook)
    if args.hidden and exercise_of(notebook).source is not None:
        results = check_with_hidden_tests(notebook)
        print(hidden_report(results))
        return 0 if all(r.score == r.points for r in results) else 1
    checked = check(notebook)
    print(check_table(checked))
    if args.hidden:
        print(NOT_HERE)
    return 0 if checked.passed else 1


def _workspace(args: argparse.Namespace) -> int:
    from grader.workspace import fill_workspace, workspace

    for copy in fill_workspace():
        if copy.action == "kept":
            print(
                f"workspace: kept your changed {relative(copy.path)}; the course's new version is "
                f"{relative(copy.source)} (delete your copy and run this again to get it)"
            )
        else:
            print(f"workspace: {copy.action} {relative(copy.path)}")
    print(
        f"workspace: the chapters and exercises to work in are in {relative(workspace())}/ "
        "(a copy you changed is never overwritten)"
    )
    return 0


def _student_edition(args: argparse.Namespace) -> int:
    from grader.edition import student_edition

    files = student_edition(args.folder)
    print(f"student edition: {len(files)} files committed in {relative(args.folder)}, no secret line in any commit")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from grader.demo import demo

    demo(workers=args.workers)
    return 0


def _db(args: argparse.Namespace) -> str:
    return args.db or default_db_url(_work(args))


def _work(args: argparse.Namespace) -> Path:
    return args.work or work()
