"""Three students the demo adds to its sample class, so that every view an instructor reads has something to show:
`partial` answers the first part only, leaves the other parts as released (not attempted) and pastes an image into a
markdown cell; two cheats are caught and flagged: `cheat_edited_test` rewrites a visible test cell so that it passes
(nbgrader puts the cell back; the edit is named), `cheat_silenced_tests` makes every later cell a no-op, so that the
notebook's own tests pass (the trusted check, run outside the notebook, gives nothing)."""

from __future__ import annotations

import base64
import copy
import io
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from grader.course import solutions
from grader.figures import pyplot
from grader.notebooks import assignment_notebooks, in_parts, nbgrader_cells, read_notebook
from grader.release import fresh_release
from grader.sample_class import submission
from grader.scripted import solution_answers

EDITED_TEST = 'print("all visible tests passed")  # the tests that were here are gone\n'
SILENCER = 'get_ipython().input_transformers_post.append(lambda lines: ["pass\\n"])  # every later cell does nothing\n'
IMAGE = "sketch.png"


def write_showcase(assignment: str, submitted: Path) -> dict[str, dict[str, float]]:
    """Write the three students' submissions of `assignment` in nbgrader's layout; return the points each test cell
    must give them."""
    [source_path] = assignment_notebooks(solutions() / assignment)
    source = read_notebook(source_path)
    release = fresh_release(assignment)[source_path.name]
    tests = {
        meta["grade_id"]: float(meta["points"])
        for _, _, meta in nbgrader_cells(source)
        if meta.get("grade") and not meta.get("solution")
    }
    first = first_part(source)
    answers = solution_answers(source)
    answered = {grade_id: answer for grade_id, answer in answers.items() if grade_id in first}
    students = {
        "partial": with_image(submission(release, answered)),
        "cheat_edited_test": edited_test(release),
        "cheat_silenced_tests": submission(release, {next(iter(answers)): SILENCER}),
    }
    for student, notebook in students.items():
        folder = submitted / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / source_path.name)
    nothing = dict.fromkeys(tests, 0.0)
    return {
        "partial": {grade_id: points if grade_id in first else 0.0 for grade_id, points in tests.items()},
        "cheat_edited_test": nothing,
        "cheat_silenced_tests": nothing,
    }


def first_part(source: NotebookNode) -> set[str]:
    """The grade ids of the graded cells (solution and test) of the part of the source's first solution cell."""
    parts: dict[str, set[str]] = {}
    first = None
    for cell, part in in_parts(source.cells):
        meta = cell.metadata.get("nbgrader") or {}
        if meta.get("solution") or meta.get("grade"):
            parts.setdefault(part, set()).add(meta["grade_id"])
        if meta.get("solution") and first is None:
            first = part
    return parts[first]


def with_image(notebook: NotebookNode) -> NotebookNode:
    """A copy with a markdown cell after the first solution cell that shows a pasted image (a cell attachment)."""
    pasted = nbformat.v4.new_markdown_cell(f"How I picture the module tree:\n\n![my sketch](attachment:{IMAGE})")
    pasted.attachments = {IMAGE: {"image/png": base64.b64encode(sketch()).decode()}}
    notebook = copy.deepcopy(notebook)
    [first, *_] = [number for number, _, meta in nbgrader_cells(notebook) if meta.get("solution")]
    notebook.cells.insert(first, pasted)  # nbgrader_cells counts from 1: the cell after it
    return notebook


def edited_test(release: NotebookNode) -> NotebookNode:
    """The release with its first visible test cell rewritten so that it passes without an answer."""
    notebook = copy.deepcopy(release)
    cell = next(cell for _, cell, meta in nbgrader_cells(notebook) if meta.get("grade") and not meta.get("solution"))
    cell.source = EDITED_TEST
    return notebook


def sketch() -> bytes:
    """A small PNG drawing, as a student might paste a screenshot: a module with two children."""
    figure, axes = pyplot().subplots(figsize=(3, 1.6))
    for x, y, name in ((0.5, 0.8, "model"), (0.25, 0.2, "encoder"), (0.75, 0.2, "head")):
        axes.text(x, y, name, ha="center", va="center", bbox={"boxstyle": "round", "facecolor": "#d6eaf8"})
    for x in (0.25, 0.75):
        axes.annotate("", xy=(x, 0.3), xytext=(0.5, 0.7), arrowprops={"arrowstyle": "->"})
    axes.set_axis_off()
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=80)
    pyplot().close(figure)
    return image.getvalue()
