"""`python -m grader new exNN_name`: a new exercise's folder, ready to grow. Its source notebook has one trivial part
(`double(x)`, one numbered rule) with nbgrader metadata, the kernel's language_info and an empty hidden-test
block that `python -m grader release` fills; its checks.py and mistakes.py already pass tests/test_clauses.py."""

from __future__ import annotations

import platform
import re
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from grader.course import CourseError, relative, solutions

NAME = re.compile(r"ex\d\d_[a-z][a-z0-9_]*")

CONTRACT = """## Part 1: double a number (3 points)

Write `double(x)`. Replace this part with the exercise's own; keep its shape: a numbered contract, a solution
cell, a visible test cell and a hidden test cell.

1. **What it returns.** For every `int` `x`, `double(x)` returns `2 * x`, an `int` (not a `float`)."""

SOLUTION = '''def double(x):
    """Twice x."""
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION'''

VISIBLE = """# Visible tests for double. Run this cell as often as you like.
assert double(3) == 6, f"double(3) should be 6, got {double(3)!r}"
print("The visible tests of double pass.")"""

HIDDEN = """# Hidden tests for double: when your work is graded, this cell also runs 20 generated cases.
### BEGIN HIDDEN TESTS
### END HIDDEN TESTS"""

CHECKS = '''"""Trusted checks for {name}: what double returns, with its type, case by case."""

from __future__ import annotations

from random import Random

from grader.observing import exact, fixed, labelled, seeded


def observe_hidden(ns: dict) -> dict:
    double = ns.get("double")
    numbers = Random(0).sample(range(-1000, 1000), 20)
    return labelled(
        fixed(1, "double(3) is the int 6", lambda: exact(double(3))),
        *seeded([[x] for x in numbers], lambda x: {{"rule 1: double(x)": exact(double(x))}}),
    )


OBSERVERS = {{"test_double_hidden": observe_hidden}}

CLAUSES = {{"test_double_hidden": {{1: "double(x) returns the int 2 * x"}}}}
'''

MISTAKES = '''"""Typical answers to {name} and the points each graded cell must give them (grader/scripted.py)."""

from grader.scripted import Solution

# Every student's points are those of the notebook's graded test cells, in this order.
SOLUTION = Solution(__file__, points_of=("test_double_visible", "test_double_hidden"))

# Doubles in floating point: the right value, but a float, not the int the contract asks for.
DOUBLE_RETURNS_FLOAT = SOLUTION.edited("double", """
-    return 2 * x
+    return 2.0 * x
""")

SOLUTION.student("double_returns_float", {{"double": DOUBLE_RETURNS_FLOAT}}, (1, 0), breaks={{"test_double_hidden": 1}})

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
'''


def new_exercise(name: str) -> Path:
    """Write solutions/<name>/ (source notebook, checks.py, mistakes.py); return the folder."""
    if not NAME.fullmatch(name):
        raise CourseError(f"{name!r}: an exercise is named exNN_name (two digits, then lowercase letters, digits, _)")
    folder = solutions() / name
    if folder.exists():
        raise CourseError(f"{relative(folder)}: already exists; `new` never overwrites an exercise")
    folder.mkdir(parents=True)
    nbformat.write(source_notebook(name), folder / f"{name}.ipynb")
    (folder / "checks.py").write_text(CHECKS.format(name=name), encoding="utf-8")
    (folder / "mistakes.py").write_text(MISTAKES.format(name=name), encoding="utf-8")
    return folder


def source_notebook(name: str) -> NotebookNode:
    """The skeleton: intro, imports, then one part (contract, solution, visible and hidden tests)."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    notebook.metadata["language_info"] = {  # what the course's ipykernel reports, so JupyterLab adds nothing
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": platform.python_version(),
    }
    intro = f"# Exercise {int(name[2:4])}: {name[5:].replace('_', ' ')}\n\nWhat you practise, prerequisites, grading."
    notebook.cells = [
        _cell("markdown", intro, "intro"),
        _cell("code", 'import torch\n\nprint("torch", torch.__version__)', "imports"),
        _cell("markdown", CONTRACT, "part1_contract"),
        _cell("code", SOLUTION, "double", locked=False, solution=True),
        _cell("code", VISIBLE, "test_double_visible", points=1),
        _cell("code", HIDDEN, "test_double_hidden", points=2),
    ]
    return notebook


def _cell(
    kind: str, source: str, grade_id: str, locked: bool = True, solution: bool = False, points: int = 0
) -> NotebookNode:
    """A cell with nbgrader metadata (schema 3); graded when it has points."""
    cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {
        "grade": bool(points),
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
        **({"points": points} if points else {}),
    }
    return cell
