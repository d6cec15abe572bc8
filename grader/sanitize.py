"""Submitted HTML, JavaScript and markdown made inert before an instructor's (or a student's) browser shows them.

Run on every autograded notebook (the Formgrader renders it) and again when feedback is written. It is nbconvert's
SanitizeHTML (bleach) with tables and images kept, plus what SanitizeHTML leaves open: a markdown link or image can
run script as well as raw HTML can (`[x](javascript:...)`), so markdown the student could have written is rendered
to HTML first and the HTML cleaned. Markdown cells exactly as the release has them are the instructor's, left as
they are. Cleaning costs about 10 s per MiB of dense HTML, so a notebook's submitted markdown and HTML are cleaned up
to BUDGET characters; past it, each is replaced by a note saying how long it was.
"""

from __future__ import annotations

import bleach
from nbconvert.filters import markdown2html
from nbconvert.preprocessors.sanitize import SanitizeHTML
from traitlets import Bool, default

from grader.course import exercises
from grader.notebooks import read_notebook

BUDGET = 128 << 10  # characters of submitted markdown and HTML cleaned per notebook

TAGS = [
    *bleach.ALLOWED_TAGS,
    *("p", "br", "hr", "div", "span", "pre", "code", "img", "sub", "sup", "del", "s", "u", "dl", "dt", "dd"),
    *("h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption"),
]
ATTRIBUTES = {
    **bleach.ALLOWED_ATTRIBUTES,
    "*": ["class", "title", "align"],
    "img": ["src", "alt", "width", "height"],
    "th": ["colspan", "rowspan"],
    "td": ["colspan", "rowspan"],
}


class SanitizeSubmission(SanitizeHTML):
    """nbconvert's SanitizeHTML for a submitted notebook: tables and images kept, markdown rendered, then cleaned."""

    enabled = Bool(True).tag(config=True)  # nbgrader's converters register preprocessors without enabling them

    @default("tags")
    def _tags(self) -> list[str]:
        return TAGS

    @default("attributes")
    def _attributes(self) -> dict:
        return ATTRIBUTES

    @default("safe_output_keys")
    def _safe_keys(self) -> set[str]:
        return {"text/plain", "image/png", "image/jpeg"}  # the templates escape these

    @default("sanitized_output_types")
    def _sanitized(self) -> set[str]:
        return {"text/html"}

    def preprocess(self, nb, resources):
        self.released = _released_markdown(resources.get("nbgrader", {}))
        self.room = BUDGET
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            if cell.source not in self.released:
                size = len(cell.source)
                keep = self._afford(size)
                cell.source = self.markdown_as_html(cell.source) if keep else f"*[{size} characters of markdown]*"
            return cell, resources
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            size = sum(len(str(data.get(kind, ""))) for kind in ("text/html", "text/markdown"))
            if size and not self._afford(size):
                data.pop("text/html", None)
                data.pop("text/markdown", None)
                data["text/plain"] = f"[an HTML or markdown output of {size} characters, too long to show]"
            elif "text/markdown" in data:  # shown as the HTML it renders to, cleaned like any other
                data.setdefault("text/html", markdown2html(data["text/markdown"]))
        return super().preprocess_cell(cell, resources, index)

    def _afford(self, size: int) -> bool:
        """Whether this much more submitted text fits in what is left of the notebook's budget (and spend it)."""
        if size > self.room:
            self.room = 0  # what comes after a cell too long to show is not shown either: it is no cheaper
            return False
        self.room -= size
        return True

    def markdown_as_html(self, source: str) -> str:
        """The markdown rendered, cleaned, and kept as one block of HTML (which markdown passes through as it is)."""
        html = self.sanitize_html_tags(markdown2html(source)).replace("\r", "").replace("\n", "&#10;")
        return f'<div class="submitted-markdown">{html}</div>'


def _released_markdown(nbgrader: dict) -> set[str]:
    """The markdown cells of the released notebook this one is a submission of (none if there is no such release)."""
    path = exercises() / str(nbgrader.get("assignment", "")) / f"{nbgrader.get('notebook', '')}.ipynb"
    if not nbgrader.get("assignment") or not path.is_file():
        return set()
    return {cell.source for cell in read_notebook(path).cells if cell.cell_type == "markdown"}
