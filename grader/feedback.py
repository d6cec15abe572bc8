"""work/autograded/ -> work/feedback/: one HTML page per student and notebook (nbgrader generate_feedback), by part.

Every graded cell is named after its part (the heading of the locked cell above it), in the page's table of contents
and in a line placed before it that gives its result first: the points, and what failed (for hidden tests, every
broken rule with its first differing case, grader.rules). By default a cell with hidden tests shows only that line,
not its source, outputs or traceback (`show_hidden_tests` keeps nbgrader's page), and a solution cell left as
released shows no "No response." comment: its part's points already say it. Submitted markdown and outputs are
sanitized (grader.sanitize). A progress bar counts the pages.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbgrader.converters import GenerateFeedback
from nbgrader.converters.base import NbGraderException
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests
from traitlets import Bool

from grader.course import CourseError, nbgrader_config, relative
from grader.hidden_tests import has_hidden_block
from grader.nbgrader_setup import ready_nbgrader
from grader.nbgrader_steps import FLAG_NOTE
from grader.notebooks import in_parts
from grader.progress import Progress

TEMPLATES = Path(__file__).resolve().parent / "templates"
MESSAGE_CHARS = 8000  # of a failure message shown: every broken rule of a part, each value shortened (grader.rules)


def feedback(work_dir: Path, db_url: str | None = None, show_hidden_tests: bool = False) -> list[Path]:
    """Write feedback for every autograded submission; return the HTML files."""
    import nbgrader.converters

    autograded = work_dir / "autograded"
    assignments = sorted({p.name for p in autograded.glob("*/*") if p.is_dir()})
    if not assignments:
        raise CourseError(f"{relative(autograded)}: nothing autograded yet; run `python -m grader autograde` first")
    ready_nbgrader()
    config = nbgrader_config(work_dir=work_dir, db_url=db_url)
    config.HTMLExporter.template_name = "feedback_by_part"
    config.HTMLExporter.template_file = "feedback_by_part.html.j2"  # extends the index.html.j2 of nbgrader's feedback
    nbgrader_templates = Path(nbgrader.converters.__file__).parent.parent / "server_extensions/formgrader/templates"
    config.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(nbgrader_templates)]
    config.FeedbackByPart.show_hidden_tests = show_hidden_tests
    progress = Progress(sum(1 for _ in autograded.glob("*/*/*.ipynb")), label="feedback ")
    for assignment in assignments:
        converter = FeedbackPages(coursedir=CourseDirectory(config=config), config=config)
        converter.progress = progress
        converter.coursedir.assignment_id = assignment
        converter.force = True
        try:
            converter.start()
        except NbGraderException as error:
            raise CourseError(f"{relative(autograded)}: generate_feedback failed for {assignment}: {error}") from None
    return sorted((work_dir / "feedback").glob("*/*/*.html"))


class FeedbackByPart(Preprocessor):
    """Name each graded cell by its part, put its result before it, and (by default) keep hidden tests hidden."""

    enabled = Bool(True).tag(config=True)  # nbgrader's converters register preprocessors without enabling them
    show_hidden_tests = Bool(False, help="Show the source and traceback of hidden-test cells").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        delimiter = ClearHiddenTests(parent=self).begin_test_delimeter
        cells = []
        for cell, label, hidden in graded_parts(nb.cells, delimiter):
            cell.metadata.pop("feedback", None)  # the label is ours to set, never the submission's
            _drop_no_response(cell)
            if label:
                cell.metadata["feedback"] = {"label": label}
                message = failure_message(cell)
                cells.append(_result(label, cell.metadata["nbgrader"], message))
                if hidden and not self.show_hidden_tests:
                    _hide(cell)
            cells.append(cell)
        nb.cells = cells
        return nb, resources


def graded_parts(cells: list[NotebookNode], delimiter: str) -> Iterator[tuple[NotebookNode, str, bool]]:
    """Every cell with its feedback label ('' unless it is graded or a task: "Part 1: ... \N{EM DASH} hidden tests")
    and whether it holds a hidden-test block (`delimiter` begins one)."""
    for cell, part in in_parts(cells):
        meta = cell.metadata.get("nbgrader") or {}
        hidden = cell.cell_type == "code" and delimiter in cell.source
        graded = meta.get("grade") or meta.get("task")
        yield cell, f"{part or 'Graded cell'} \N{EM DASH} {_kind(meta, hidden)}" if graded else "", hidden


def result_words(score: float, points: float, message: str) -> str:
    """What a cell's result line says after its points: what failed, or why it earned less, or that it did not
    fail."""
    if message:
        return message
    if score < points:  # the cell ran without an error, and the trusted check still gave no points
        return "the grader's own check of this part did not pass"
    return "no failure"


class FeedbackPages(GenerateFeedback):
    """nbgrader's GenerateFeedback with a progress bar. Its steps (the page by part, sanitized) are the course's
    `GenerateFeedback.preprocessors` (grader/nbgrader_config.py), the Formgrader's too."""

    progress: Progress | None = None

    def convert_single_notebook(self, notebook_filename: str) -> None:
        try:
            super().convert_single_notebook(notebook_filename)
        except Exception:
            self._advance(notebook_filename, failed=True)
            raise
        self._advance(notebook_filename, failed=False)

    def _advance(self, notebook_filename: str, failed: bool) -> None:
        if self.progress:
            student = Path(notebook_filename).parent.parent.name
            self.progress.advance(failed=failed, note=f"{student}: {'failed' if failed else 'written'}")


def _kind(meta: dict, hidden: bool) -> str:
    if meta.get("solution"):
        return "your answer"
    if meta.get("task"):
        return "task"
    return "hidden tests" if hidden else "visible tests"


def failure_message(cell: NotebookNode) -> str:
    """What the cell's outcome says, '' if it did not fail: the grader's note where it flagged the cell (the trusted
    check decided the points), else the message it failed with, else what a hidden-test cell that earned part of its
    points printed before its value (grader.nbgrader_steps.partial_credit)."""
    outputs = cell.get("outputs", [])
    notes = [o["text"].strip() for o in outputs if str(o.get("text", "")).startswith(FLAG_NOTE)]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if notes:
        message = notes[0]
    elif errors:
        ename, evalue = errors[0].get("ename", "Error"), errors[0].get("evalue", "")
        message = f"{ename}: {evalue}" if evalue else ename
    elif has_hidden_block(cell.get("source", "")) and _partial(outputs):
        message = str(outputs[-2].get("text", "")).strip()
    else:
        return ""
    return message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS] + " ..."


def _partial(outputs: list) -> bool:
    """Whether a cell's outputs end as a hidden-test cell's that earned part of its points: printed, then a value."""
    kinds = [(o.get("output_type"), o.get("name")) for o in outputs[-2:]]
    return kinds == [("stream", "stdout"), ("execute_result", None)]


def _result(label: str, meta: dict, message: str) -> NotebookNode:
    """A line giving the cell's result before the cell: one block of HTML, everything in it escaped."""
    score, points = float(meta.get("score") or 0), float(meta.get("points") or 0)
    words = html.escape(result_words(score, points, message))
    said = f"<pre>{words}</pre>" if message else f" \N{EM DASH} {words}"
    block = f'<div class="feedback-result"><b>{html.escape(label)}</b>: {score:g} / {points:g} points{said}</div>'
    return nbformat.v4.new_markdown_cell(block.replace("\r", "").replace("\n", "&#10;"))


NO_RESPONSE = "No response."  # nbgrader's automatic comment on a solution cell left as released (SaveAutoGrades)


def _drop_no_response(cell: NotebookNode) -> None:
    """A solution cell's "No response." comment says again what its part's points say: left out."""
    meta = cell.get("metadata", {}).get("nbgrader") or {}
    if meta.get("comment") == NO_RESPONSE:
        del meta["comment"]


def _hide(cell: NotebookNode) -> None:
    """Keep a hidden-test cell's result (the line above it), not its source, its printed output or its traceback."""
    cell.source = "# The hidden tests of this part are not shown; their result is above."
    cell.outputs = []
