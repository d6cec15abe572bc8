"""`python -m grader feedback`: pages named by part, result first, hidden tests kept hidden, no submitted script."""

from __future__ import annotations

import html
import re
import shutil
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.course import default_db_url
from grader.sample_class import write_class
from tests.conftest import REPO, grader_process
from tests.hostile import hostile_submission

ASSIGNMENT = "ex01_slots"
SOURCE = REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
STUDENTS = ("full", "blank", "flag_tables_as_hook_tables")  # the last fails part 1's hidden tests only
LABELS = [
    "Part 1: which group does each slot belong to? \N{EM DASH} visible tests",
    "Part 1: which group does each slot belong to? \N{EM DASH} hidden tests",
    "Part 2: a copy that shares the parameters \N{EM DASH} visible tests",
    "Part 2: a copy that shares the parameters \N{EM DASH} hidden tests",
]


@dataclass
class Pages:
    work: Path
    default: dict[str, str]  # student -> feedback page
    shown: dict[str, str]  # with --show-hidden-tests
    stderr: str


def _pages(work: Path) -> dict[str, str]:
    return {p.parent.parent.name: p.read_text() for p in work.glob(f"feedback/*/{ASSIGNMENT}/*.html")}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Pages:
    root = tmp_path_factory.mktemp("feedback")
    write_class(ASSIGNMENT, root / "class")
    incoming = root / "in"
    for student in STUDENTS:
        shutil.copytree(root / "class" / student, incoming / student)
    (incoming / "mallory" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(hostile_submission(ASSIGNMENT), incoming / "mallory" / ASSIGNMENT / SOURCE.name)
    work = root / "work"
    graded = grader_process("autograde", str(incoming), "--work", str(work), "--workers", "2")
    assert graded.returncode == 0, graded.stderr
    default = grader_process("feedback", "--work", str(work))
    assert default.returncode == 0, default.stderr
    written = _pages(work)
    shown = grader_process("feedback", "--work", str(work), "--show-hidden-tests")
    assert shown.returncode == 0, shown.stderr
    return Pages(work, written, _pages(work), default.stderr)


def _hidden_lines() -> list[str]:
    """The lines of the source's hidden-test blocks long enough to be telling, and not in the release."""
    public = (REPO / "exercises" / ASSIGNMENT / SOURCE.name).read_text()
    lines, inside = [], False
    for cell in nbformat.read(SOURCE, 4).cells:
        for line in cell.source.splitlines():
            inside = (inside or "BEGIN HIDDEN TESTS" in line) and "END HIDDEN TESTS" not in line
            if inside and len(line.strip()) >= 24 and "HIDDEN TESTS" not in line and line.strip() not in public:
                lines.append(line.strip())
    assert len(lines) >= 4  # three lines per hidden-test block, two of them telling
    return lines


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_hidden_tests_are_not_shown_by_default(pages: Pages) -> None:
    hidden = _hidden_lines()
    for student, page in pages.default.items():
        submitted = nbformat.read(pages.work / "submitted" / student / ASSIGNMENT / SOURCE.name, 4)
        own = "\n".join(cell.source for cell in submitted.cells)  # the student's own code is theirs to see
        leaked = [line for line in hidden if line in _text(page) and line not in own]
        assert not leaked, f"{student}'s feedback shows hidden-test lines: {leaked[:3]}"
    shown = _text(pages.shown["blank"])
    assert sum(line in shown for line in hidden) > len(hidden) // 2, "--show-hidden-tests shows them"


def test_each_graded_cell_is_named_by_its_part_with_the_result_first(pages: Pages) -> None:
    page = pages.default["flag_tables_as_hook_tables"]
    toc = page[page.index('<div id="toc">') : page.index("</ol>")]
    assert re.findall(r'<a href="#test_[a-z_]+">([^<]+)</a>', toc) == [html.escape(label) for label in LABELS]
    assert "Test cell" not in toc
    failure = re.search(r"<b>Part 1: [^<]*hidden tests</b>: 3.2 / 4 points<pre>(rule 2 \([^<]+)</pre>", page)
    assert failure, "the hidden tests' result and message: the broken rule, in the contract's words"
    assert failure.start() < page.index('<a name="test_classify_slots_hidden">'), "the message comes before the cell"
    assert re.search(r"<b>Part 1: [^<]*visible tests</b>: 2 / 2 points \N{EM DASH} no failure", page)
    assert f"{html.escape(LABELS[1])}</b>: 3.2 / 4 points" in pages.shown["flag_tables_as_hook_tables"]


def test_each_part_says_its_result_once_in_the_exercises_words(pages: Pages) -> None:
    """The first differing case is printed once (in the result line, not again in the hidden cell's output), the
    exercise's "rule", never "clause", and no "No response." comment beside the part's points."""
    page = pages.default["flag_tables_as_hook_tables"]
    text = _text(page)
    assert text.count("rule 2 (each of the seventeen slots in its group, whatever it holds) is broken") == 1
    for student, page in pages.default.items():
        results = re.findall(r'<div class="feedback-result">.*?</div>', page, re.DOTALL)
        assert results and not any("clause" in result for result in results), student
        assert "No response" not in page, student


def test_feedback_shows_a_progress_bar(pages: Pages) -> None:
    progress = [line for line in pages.stderr.splitlines() if line.startswith("feedback [")]
    assert len(progress) == len(STUDENTS) + 1
    assert progress[-1].startswith(f"feedback [{'#' * 30}] 4/4 ") and "failures 0" in progress[-1]


class _Active(HTMLParser):
    """Everything in a page that a browser could run: script bodies, event handlers, javascript: URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        for name, value in attrs:
            value = value or ""
            if name.startswith("on") or value.strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value}>")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.found.append(data)


def _active(page: str) -> list[str]:
    parser = _Active()
    parser.feed(page)
    return [code for code in parser.found if "data-pwned" in code]


def test_no_submitted_script_in_the_feedback_or_the_autograded_notebook(pages: Pages) -> None:
    for page in (pages.default["mallory"], pages.shown["mallory"]):
        assert "data-pwned" in page, "the hostile submission's text is shown, escaped"
        assert _active(page) == []
        assert "<td>cell 1</td>" in page, "an HTML table output is kept"
        assert re.search(r'<img [^>]*src="data:image/png;base64,iVBORw0KGgo', page), "an image output is kept"
    autograded = nbformat.read(pages.work / "autograded" / "mallory" / ASSIGNMENT / SOURCE.name, 4)
    for cell in autograded.cells:
        texts = [cell.source] if cell.cell_type == "markdown" else []
        texts += [str(value) for output in cell.get("outputs", []) for value in output.get("data", {}).values()]
        assert not any(_active(text) for text in texts), cell
        assert not any("application/javascript" in output.get("data", {}) for output in cell.get("outputs", []))


def test_an_unsanitized_page_would_have_been_caught() -> None:
    """The check above can fail: on the hostile notebook itself, unsanitized, it finds the vectors."""
    notebook = hostile_submission(ASSIGNMENT)
    [markdown] = [c.source for c in notebook.cells if c.cell_type == "markdown" and "data-pwned" in c.source]
    assert len(_active(markdown)) >= 3


def test_only_pages_whose_inputs_changed_are_written_again(pages: Pages, tmp_path: Path) -> None:
    """After --show-hidden-tests every page is written again (how pages are made changed); then none; a regrade
    rewrites that student's page alone, and so does a teaching assistant's score, each page showing the new points."""

    def feedback() -> tuple[str, dict[str, int]]:
        run = grader_process("feedback", "--work", str(pages.work))
        assert run.returncode == 0, run.stderr
        return run.stdout, {p.parent.parent.name: p.stat().st_mtime_ns for p in pages.work.glob("feedback/*/*/*.html")}

    said, first = feedback()
    assert said.startswith("wrote 4 feedback page(s) under ") and said.endswith(", 0 unchanged\n")
    said, second = feedback()
    assert said.startswith("wrote 0 feedback page(s) under ") and said.endswith(", 4 unchanged\n")
    assert second == first
    regraded = tmp_path / "blank" / ASSIGNMENT
    shutil.copytree(pages.work / "submitted" / "full" / ASSIGNMENT, regraded)
    graded = grader_process("autograde", str(tmp_path), "--work", str(pages.work), "--workers", "1")
    assert graded.returncode == 0, graded.stderr
    said, third = feedback()
    assert said.startswith("wrote 1 feedback page(s) under ")
    assert {student for student in third if third[student] != second[student]} == {"blank"}
    assert f"{html.escape(LABELS[3])}</b>: 4 / 4 points" in _pages(pages.work)["blank"]
    with Gradebook(default_db_url(pages.work)) as gradebook:
        gradebook.find_grade("test_copy_hidden", ASSIGNMENT, ASSIGNMENT, "full").manual_score = 3.5
        gradebook.db.commit()
    said, fourth = feedback()
    assert said.startswith("wrote 1 feedback page(s) under ")
    assert {student for student in fourth if fourth[student] != third[student]} == {"full"}
    assert f"{html.escape(LABELS[3])}</b>: 3.5 / 4 points" in _pages(pages.work)["full"]
