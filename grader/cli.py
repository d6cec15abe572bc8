"""The instructor's command line: `python -m grader COMMAND`. A thin layer over the modules it calls."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.course import CourseError, default_db_url, relative, work


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    release = commands.add_parser("release", help="regenerate exercises/ from solutions/")
    release.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    release.add_argument("--check", action="store_true", help="change nothing; fail if exercises/ is stale or leaks")
    release.set_defaults(run=_release)

    validate = commands.add_parser("validate", help="sources pass every graded cell, releases fail every one")
    validate.add_argument("assignments", nargs="*", metavar="ASSIGNMENT")
    validate.set_defaults(run=_validate)

    autograde = commands.add_parser("autograde", help="grade work/submitted/<student>/ASSIGNMENT/ with nbgrader")
    autograde.add_argument("assignment", metavar="ASSIGNMENT")
    autograde.add_argument("--work", type=Path, help="grading work folder (default: work/)")
    autograde.add_argument("--db", metavar="URL", help="gradebook SQLAlchemy URL (default: work/gradebook.db)")
    autograde.set_defaults(run=_autograde)

    export = commands.add_parser("export", help="write per-cell grades as CSV")
    export.add_argument("--work", type=Path, help="grading work folder (default: work/)")
    export.add_argument("--db", metavar="URL", help="gradebook SQLAlchemy URL (default: work/gradebook.db)")
    export.add_argument("--out", type=Path, help="CSV file (default: WORK/grades.csv)")
    export.set_defaults(run=_export)
    return parser


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


def _validate(args: argparse.Namespace) -> int:
    from grader.validate import table, validate

    checks = validate(args.assignments)
    print(table(checks))
    wrong = sum(not check.ok for check in checks)
    print(f"validate: {len(checks) - wrong} of {len(checks)} graded cells as expected")
    return 1 if wrong else 0


def _autograde(args: argparse.Namespace) -> int:
    from grader.autograde import autograde
    from grader.gradebook import cell_scores

    autograde(args.assignment, _work(args), db_url=args.db)
    for student, per_assignment in sorted(cell_scores(_db(args), [args.assignment]).items()):
        print(f"{student}: {sum(per_assignment.get(args.assignment, {}).values()):g}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from grader.gradebook import cell_scores, write_csv

    out = args.out or _work(args) / "grades.csv"
    rows = write_csv(cell_scores(_db(args)), out)
    print(f"wrote {rows} row(s) to {relative(out)}")
    return 0


def _db(args: argparse.Namespace) -> str:
    return args.db or default_db_url(_work(args))


def _work(args: argparse.Namespace) -> Path:
    return args.work or work()
