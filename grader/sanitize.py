"""Submitted HTML, JavaScript and markdown made inert before an instructor's (or a student's) browser shows them.

Run on every autograded notebook (the Formgrader renders it) and again when feedback is written. It is nbconvert's
SanitizeHTML (bleach) with tables and images kept, plus what SanitizeHTML leaves open: a markdown link or image can
run script as well as raw HTML can (`[x](javascript:...)`), so markdown the student could have written is rendered
to HTML first and the HTML cleaned. Markdown cells exactly as the release has them are the instructor's, left as
they are. A markdown cell's attachments (a pasted screenshot) are shown inline where they are PNG, JPEG or GIF
images, and as their name otherwise. Output metadata passes an allow-list too: the renderers put it into the page
unquoted (an image's width and height) or as a source (`filenames`), so only whole-number widths and heights of
images are kept. Whatever goes wrong in cleaning one cell replaces that cell's submitted text or outputs with a
note: nothing shown can cost a student a point. Cleaning costs about 10 s per MiB of dense HTML, so a notebook's
submitted markdown and HTML are cleaned up to BUDGET characters; past it, each is replaced by a note saying how long
it was.
"""

from __future__ import annotations

import re
import secrets

import bleach
from nbconvert.filters import markdown2html
from nbconvert.preprocessors.sanitize import SanitizeHTML
from traitlets import Bool, default

from grader.course import exercises
from grader.notebooks import read_notebook

BUDGET = 128 << 10  # characters of submitted markdown and HTML cleaned per notebook
IMAGES = ("image/png", "image/jpeg", "image/gif")  # attachments shown inline; image outputs with a width and height
SIZE_LIMIT = 1 << 16  # the largest width or height kept, in pixels
BASE64 = re.compile(r"[A-Za-z0-9+/\s]*={0,2}\s*")
ATTACHMENT = re.compile(r"<attachment:([^<>\n]+)>|attachment:([^\s()<>\"']+)")  # <...> allows spaces
DATA_IMAGE = re.compile(r"data:(image/(?:png|jpeg|gif));base64,([A-Za-z0-9+/]+=*)")  # as markdown_as_html writes one

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
        try:
            return self._clean(cell, resources, index)
        except Exception as error:  # noqa: BLE001 - whatever fails in cleaning one cell, its text is not shown
            note = f"[this cell's content could not be shown safely ({type(error).__name__})]"
            if cell.cell_type == "markdown":
                cell.source = f"*{note}*"
                cell.pop("attachments", None)
            else:
                cell.outputs = [{"output_type": "stream", "name": "stdout", "text": note + "\n"}]
            return cell, resources

    def _clean(self, cell, resources, index):
        if cell.cell_type == "markdown":
            if cell.source not in self.released:
                size = len(cell.source)
                keep = self._afford(size)
                attachments = cell.get("attachments") or {}
                note = f"*[{size} characters of markdown]*"
                cell.source = self.markdown_as_html(cell.source, attachments) if keep else note
                cell.pop("attachments", None)  # shown inline already, or not at all
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
            if "metadata" in output:
                output["metadata"] = allowed_metadata(output)
        return super().preprocess_cell(cell, resources, index)

    def _afford(self, size: int) -> bool:
        """Whether this much more submitted text fits in what is left of the notebook's budget (and spend it)."""
        if size > self.room:
            self.room = 0  # what comes after a cell too long to show is not shown either: it is no cheaper
            return False
        self.room -= size
        return True

    def markdown_as_html(self, source: str, attachments: dict | None = None) -> str:
        """The markdown rendered, cleaned, and kept as one block of HTML (which markdown passes through as it is).

        Each `attachment:NAME` it refers to becomes, in the cleaned HTML, the attachment as a data URL where it is a
        PNG, JPEG or GIF image in base64 (built here from those checked parts only), or nothing (its alt text
        shows) where it is missing or of any other kind. A data URL of such an image in base64 is kept as it is (so
        cleaning the cleaned HTML again keeps a pasted image)."""
        token = f"https://{secrets.token_hex(8)}.attachment.invalid/"  # cleaned like any link, replaced afterwards
        attached = {name: _image(bundle) for name, bundle in (attachments or {}).items()}
        images: list[tuple[str, str] | None] = []  # what each placeholder stands for

        def placeholder(match: re.Match) -> str:
            images.append(attached.get(match.group(1) or match.group(2)))
            url = f"{token}{len(images) - 1}"
            return f"<{url}>" if match.group(1) else url

        def inline(match: re.Match) -> str:  # an image cleaned before (feedback cleans the autograded notebook again)
            images.append((match.group(1), match.group(2)))
            return f"{token}{len(images) - 1}"

        marked = DATA_IMAGE.sub(inline, ATTACHMENT.sub(placeholder, source))
        html = self.sanitize_html_tags(markdown2html(marked))
        for number, image in enumerate(images):
            url = f"data:{image[0]};base64,{image[1]}" if image else ""
            html = html.replace(f'src="{token}{number}"', f'src="{url}"' if url else "")
            html = html.replace(f"{token}{number}", "")  # anywhere else (a link): nothing
        html = html.replace("\r", "").replace("\n", "&#10;")
        return f'<div class="submitted-markdown">{html}</div>'


def _image(bundle: object) -> tuple[str, str] | None:
    """An attachment's (MIME type, base64 text, whitespace removed) if it is an image shown inline, else None."""
    if not isinstance(bundle, dict):
        return None
    for kind in IMAGES:
        data = bundle.get(kind)
        if isinstance(data, list):
            data = "".join(part for part in data if isinstance(part, str))
        if isinstance(data, str) and BASE64.fullmatch(data):
            return kind, "".join(data.split())
    return None


def allowed_metadata(output: dict) -> dict:
    """An output's metadata as the renderers may read it: for each image it carries, its width and height where
    they are whole numbers (the top-level ones stand for every image), nothing else."""
    metadata = output.get("metadata")
    data = output.get("data")
    if not isinstance(metadata, dict) or not isinstance(data, dict):
        return {}
    kept = {}
    for kind in IMAGES:
        if kind not in data:
            continue
        own = metadata.get(kind) if isinstance(metadata.get(kind), dict) else {}
        size = {}
        for key in ("width", "height"):
            value = own.get(key, metadata.get(key))
            if type(value) is int and 0 < value <= SIZE_LIMIT:
                size[key] = value
        if size:
            kept[kind] = size
    return kept


def _released_markdown(nbgrader: dict) -> set[str]:
    """The markdown cells of the released notebook this one is a submission of (none if there is no such release)."""
    path = exercises() / str(nbgrader.get("assignment", "")) / f"{nbgrader.get('notebook', '')}.ipynb"
    if not nbgrader.get("assignment") or not path.is_file():
        return set()
    return {cell.source for cell in read_notebook(path).cells if cell.cell_type == "markdown"}
