"""Hostile submissions for the tests: notebooks whose markdown and outputs try to run script in a browser."""

from __future__ import annotations

import base64

import nbformat

from grader.sample_class import solution_answers, submission
from tests.conftest import REPO

# Each vector, if it ever runs, marks the page: <html data-pwned="vector name">.
MARK = "document.documentElement.setAttribute('data-pwned','{}')"
PNG = base64.b64decode(  # a 1x1 PNG: a legitimate rich output that must survive
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
MARKDOWN = "\n\n".join(
    [
        "My notes <script>" + MARK.format("markdown-script") + "</script>",
        '<img src="x" onerror="' + MARK.format("markdown-onerror") + '">',
        "[click me](javascript:" + MARK.format("markdown-link") + ")",
        '<svg><animate onbegin="' + MARK.format("markdown-svg") + '" attributeName="x" dur="1s"/></svg>',
        '<iframe src="javascript:' + MARK.format("markdown-iframe") + '"></iframe>',
        "| a | b |\n|---|---|\n| 1 | 2 |",
    ]
)
HTML_OUTPUT = f"<script>{MARK.format('html-output-script')}</script><table><tr><td>cell 1</td></tr></table>"
ONERROR_OUTPUT = f'<img src="x" onerror="{MARK.format("html-output-onerror")}">'
OUTPUTS = f"""
from IPython.display import HTML, Image, Javascript, Markdown, display
display(HTML({HTML_OUTPUT!r}))
display(HTML({ONERROR_OUTPUT!r}))
display(Javascript({MARK.format("javascript-output")!r}))
display(Markdown({"[click](javascript:" + MARK.format("markdown-output-link") + ")"!r}))
display(Image(data={PNG!r}))
"""


def hostile_submission(assignment: str) -> nbformat.NotebookNode:
    """The full solution of `assignment`, with hostile markdown and a first solution cell that also displays
    hostile HTML, JavaScript and markdown (and a table and an image, which must survive)."""
    source = nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", 4)
    release = nbformat.read(REPO / "exercises" / assignment / f"{assignment}.ipynb", 4)
    answers = solution_answers(source)
    first = next(iter(answers))
    answers[first] += "\n" + OUTPUTS
    notebook = submission(release, answers)
    notebook.cells.insert(1, nbformat.v4.new_markdown_cell(MARKDOWN))
    return notebook
