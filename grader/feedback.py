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
from dataclasses import dataclass
from pathlib import Path

import nbformat
import nbgrader
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbgrader.converters import GenerateFeedback
from nbgrader.converters.base import NbGraderException
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests
from traitlets import Bool, Dict, Int
from traitlets.config import Config

from grader.course import CourseError, nbgrader_config, relative
from grader.feedback_inputs import INPUTS, inputs_digests, unchanged
from grader.hidden_tests import has_hidden_block
from grader.nbgrader_setup import ready_nbgrader
from grader.nbgrader_steps import FLAG_NOTE
from grader.notebooks import in_parts
from grader.progress import Progress

TEMPLATES = Path(__file__).resolve().parent / "templates"
NBGRADER_TEMPLATES = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
MESSAGE_CHARS = 8000  # of a failure message shown: every broken rule of a part, each value shortened (grader.rules)


@dataclass(frozen=True)
class Pages:
    """The feedback pages there are, and how many of them this run wrote (the others' inputs had not changed)."""

    pages: list[Path]
    written: int


def feedback(work_dir: Path, db_url: str | None = None, show_hidden_tests: bool = False) -> Pages:
    """Write feedback for every autograded submission whose pages are missing or whose inputs changed
    (grader.feedback_inputs); return every page there is and how many were written."""
    autograded = work_dir / "autograded"
    assignments = sorted({p.name for p in autograded.glob("*/*") if p.is_dir()})
    if not assignments:
        raise CourseError(f"{relative(autograded)}: nothing autograded yet; run `python -m grader autograde` first")
    ready_nbgrader()
    config = nbgrader_config(work_dir=work_dir, db_url=db_url)
    config.FeedbackByPart.show_hidden_tests = show_hidden_tests
    progress = Progress(sum(1 for _ in autograded.glob("*/*/*.ipynb")), label="feedback ")
    settings = f"{config.HTMLExporter!r} {config.FeedbackByPart!r} {config.GenerateFeedback!r}"
    written = 0
    for assignment in assignments:
        converter = FeedbackPages(coursedir=CourseDirectory(config=config), config=config)
        converter.progress = progress
        converter.inputs = inputs_digests(config.CourseDirectory.db_url, assignment, autograded, settings)
        converter.coursedir.assignment_id = assignment
        converter.force = True
        try:
            converter.start()
        except NbGraderException as error:
            raise CourseError(f"{relative(autograded)}: generate_feedback failed for {assignment}: {error}") from None
        written += converter.written
    return Pages(sorted((work_dir / "feedback").glob("*/*/*.html")), written)


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


class FeedbackPage(HTMLExporter):
    """nbgrader's feedback page, its table of contents naming each graded cell by its part (the template
    templates/feedback_by_part extends nbgrader's). The course's nbgrader configuration makes it GenerateFeedback's
    exporter, so every way to make feedback writes it. Its template is configured in its own section, which wins
    over the `HTMLExporter.template_name` that the Formgrader's buttons set to nbgrader's page."""

    def __init__(self, config: Config | None = None, **kwargs: object) -> None:
        own = Config()
        own.FeedbackPage.template_name = "feedback_by_part"
        own.FeedbackPage.template_file = "feedback_by_part.html.j2"  # extends the index.html.j2 of nbgrader's feedback
        own.FeedbackPage.extra_template_basedirs = [str(TEMPLATES), str(NBGRADER_TEMPLATES)]
        merged = Config(config or {})
        merged.merge(own)
        super().__init__(config=merged, **kwargs)


class FeedbackPages(GenerateFeedback):
    """nbgrader's GenerateFeedback with a progress bar, which writes a submission's pages only where they are missing
    or their `inputs` (student -> digest, grader.feedback_inputs) changed. Its steps (the page by part, sanitized)
    are the course's `GenerateFeedback.preprocessors` (grader/nbgrader_config.py), the Formgrader's too."""

    progress: Progress | None = None
    inputs = Dict(help="student -> the digest of what their pages are made from")
    written = Int(0, help="pages written by this converter")

    def init_destination(self, assignment_id: str, student_id: str) -> bool:
        """Whether to write this submission's pages: not where they were made from the same inputs."""
        folder = Path(self._format_dest(assignment_id, student_id))
        pages = [Path(notebook).stem + ".html" for notebook in self.notebooks]
        if student_id in self.inputs and unchanged(folder, self.inputs[student_id], pages):
            for notebook in self.notebooks:
                self._advance(notebook, "unchanged")
            return False
        return super().init_destination(assignment_id, student_id)

    def convert_single_notebook(self, notebook_filename: str) -> None:
        try:
            super().convert_single_notebook(notebook_filename)
        except Exception:
            self._advance(notebook_filename, "failed")
            raise
        self.written += 1
        self._advance(notebook_filename, "written")

    def set_permissions(self, assignment_id: str, student_id: str) -> None:
        """nbgrader's last step once a submission's pages are all written: here, record what they were made from."""
        super().set_permissions(assignment_id, student_id)
        if student_id in self.inputs:
            (Path(self._format_dest(assignment_id, student_id)) / INPUTS).write_text(self.inputs[student_id])

    def _advance(self, notebook_filename: str, what: str) -> None:
        if self.progress:
            student = Path(notebook_filename).parent.parent.name
            self.progress.advance(failed=what == "failed", note=f"{student}: {what}")


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
