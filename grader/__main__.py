"""`python -m grader ...` and the `grader` command."""

import sys


def run() -> None:
    """The instructor's command line."""
    # jsonschema loads rfc3987_syntax, whose grammar takes 1.5 s of CPU to build, to check the "iri" string format,
    # which neither nbformat nor nbgrader uses. Without it jsonschema simply has no "iri" checker.
    sys.modules.setdefault("rfc3987_syntax", None)
    from grader.cli import main

    sys.exit(main())


if __name__ == "__main__":
    run()
