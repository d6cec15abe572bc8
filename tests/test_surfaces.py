"""What a grading run shows the instructor (terminal, ledger, grades.csv) and where it writes, under hostile input."""

from __future__ import annotations

import copy
import csv
import io
import json
import sqlite3
import zipfile
from pathlib import Path

import nbformat

from grader.escaping import printable, spreadsheet_cell
from grader.report import Row, write_csv
from grader.sample_class import solution_answers, submission
from tests.conftest import REPO, grader_process

ASSIGNMENT = "ex01_slots"
SOURCE = REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
RELEASE = REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
CONTROL = "\x1b[2J\x1b[31mEVIL\r\nok\x07"  # clears the screen, turns it red, starts a fake line, rings the bell


def _solved() -> nbformat.NotebookNode:
    return submission(nbformat.read(RELEASE, 4), solution_answers(nbformat.read(SOURCE, 4)))


def _unprintable(text: str) -> list[str]:
    return sorted({char for char in text if not char.isprintable() and char != "\n"})


def test_printable_escapes_every_control_character_once() -> None:
    assert printable(CONTROL) == "\\x1b[2J\\x1b[31mEVIL\\r\\nok\\x07"
    assert printable(printable(CONTROL)) == printable(CONTROL)
    assert printable("caf\u00e9 \u202eexe.ipynb") == "caf\u00e9 \\u202eexe.ipynb"  # a right-to-left override


def test_no_grades_csv_cell_is_a_formula(tmp_path: Path) -> None:
    hostile = ['=HYPERLINK("http://x")', "+1+1", "-2", "@SUM(A1)", "\tx", f"flagged: {CONTROL}"]
    write_csv([Row(text, text, text, {"cell_a": 1.0}) for text in hostile], tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 1 + len(hostile)
    for row, text in zip(rows[1:], hostile, strict=True):
        assert row[:3] == [spreadsheet_cell(text)] * 3
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r")) and not _unprintable(",".join(row))
    assert rows[1][0] == '\'=HYPERLINK("http://x")' and rows[3][3] == "1"


def test_control_characters_in_metadata_reach_no_surface_verbatim(tmp_path: Path) -> None:
    hostile = _solved()
    for cell in hostile.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader[CONTROL] = CONTROL
            break
    incoming = tmp_path / "in"
    for student, notebook in (("honest", _solved()), ("mallory", hostile)):
        (incoming / student / ASSIGNMENT).mkdir(parents=True)
        nbformat.write(notebook, incoming / student / ASSIGNMENT / RELEASE.name)
    work = tmp_path / "work"
    run = grader_process("autograde", str(incoming), "--work", str(work), "--workers", "2")
    assert run.returncode == 0, run.stderr
    rows = {line.split()[0]: line for line in run.stdout.splitlines()[1:-1]}
    assert set(rows) == {"honest", "mallory"}, run.stdout  # one line each: no newline got through
    assert rows["mallory"].split()[5] == "flagged:" and printable(CONTROL) in rows["mallory"]
    assert not _unprintable(run.stdout + run.stderr)
    ledger = json.loads((work / "grading_status" / ASSIGNMENT / "mallory.json").read_text())
    assert ledger["status"].startswith("flagged: ") and not _unprintable(ledger["status"])
    report = grader_process("report", "--work", str(work), "--out", str(tmp_path / "out"))
    assert report.returncode == 0, report.stderr
    grades = (tmp_path / "out" / "grades.csv").read_text()
    assert printable(CONTROL) in grades and not _unprintable(grades)
    assert len(grades.splitlines()) == 3


def test_a_bad_upload_is_its_students_error_and_the_class_is_graded(tmp_path: Path) -> None:
    honest = tmp_path / "honest.ipynb"
    nbformat.write(_solved(), honest)
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(honest, f"ana_1_{ASSIGNMENT}.ipynb")
        zipped.writestr("mallory_2_notebook.ipynb.gz", b"not gzip at all")
        escaping = _zip_with({"../escape.txt": b"x", RELEASE.name: honest.read_bytes()})
        zipped.writestr(f"eve_3_{ASSIGNMENT}.zip", escaping)
    run = grader_process("autograde", str(archive), "--assignment", ASSIGNMENT, "--work", str(tmp_path / "work"))
    assert run.returncode == 0, run.stderr
    rows = {line.split()[0]: line for line in run.stdout.splitlines()[1:-1]}
    assert rows["ana"].split()[2:6] == ["12", "/", "12", "ok"]
    assert (
        "error: the upload could not be taken in: mallory_2_notebook.ipynb.gz: not a readable archive"
        in rows["mallory"]
    )
    assert rows["eve"].endswith(
        f"error: the upload could not be taken in: eve_3_{ASSIGNMENT}.zip: '../escape.txt' leaves its folder ('..')"
    )
    assert run.stdout.splitlines()[-1] == "graded 3 submission(s), 2 with errors, 0 flagged"
    assert not list(tmp_path.rglob("escape.txt"))
    report = grader_process("report", "--work", str(tmp_path / "work"), "--out", str(tmp_path / "out"))
    with (tmp_path / "out" / "grades.csv").open() as handle:
        statuses = {row["student"]: row["status"].split(":")[0] for row in csv.DictReader(handle)}
    assert report.returncode == 0 and statuses == {"ana": "ok", "eve": "error", "mallory": "error"}


def _zip_with(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, data in members.items():
            zipped.writestr(name, data)
    return buffer.getvalue()


def _grades_in(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute("select count(*) from grade where auto_score is not null").fetchone()[0]


def test_a_run_into_another_gradebook_grades_there(tmp_path: Path) -> None:
    incoming = tmp_path / "in"
    (incoming / "ana" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(_solved(), incoming / "ana" / ASSIGNMENT / RELEASE.name)
    work = tmp_path / "work"
    first = grader_process("autograde", str(incoming), "--work", str(work), "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert first.returncode == 0, first.stderr
    second = grader_process("autograde", str(incoming), "--work", str(work), "--db", f"sqlite:///{tmp_path / 'b.db'}")
    assert second.returncode == 0, second.stderr
    assert "already graded" not in second.stderr
    assert second.stdout.splitlines()[1].split()[2:6] == ["12", "/", "12", "ok"]
    assert _grades_in(tmp_path / "b.db") == _grades_in(tmp_path / "a.db") > 0
    again = grader_process("autograde", str(incoming), "--work", str(work), "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert again.returncode == 0, again.stderr
    assert f"{ASSIGNMENT}: 1 submission(s) already graded with the same files" in again.stderr
    assert again.stdout.splitlines()[1].split()[2:6] == ["12", "/", "12", "ok"]


def test_an_unreadable_class_archive_is_one_error_line(tmp_path: Path) -> None:
    archive = tmp_path / "download.tar.gz"
    archive.write_bytes(b"\x1f\x8b truncated gzip")
    run = grader_process("autograde", str(archive), "--assignment", ASSIGNMENT, "--work", str(tmp_path / "work"))
    assert run.returncode == 1
    assert run.stdout == ""
    [line] = run.stderr.strip().splitlines()
    assert line.startswith(f"error: {archive}: cannot be extracted (not a readable archive")


def test_submitted_html_and_markdown_past_the_budget_are_notes_not_cleaned(tmp_path: Path) -> None:
    """Cleaning is slow on dense HTML: past a notebook's budget, what a student wrote is replaced by a note, and
    nothing of it survives as markup."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from grader.sanitize import BUDGET, SanitizeSubmission

    dense = "<b>x</b><script>alert(1)</script>" * (BUDGET // 16)
    nb = new_notebook(
        cells=[
            new_markdown_cell("A *short* note <img src=x onerror=alert(1)>"),
            new_code_cell("1", outputs=[new_output("display_data", data={"text/html": dense, "text/plain": "x"})]),
            new_markdown_cell(dense),
        ]
    )
    cleaned, _ = SanitizeSubmission().preprocess(nb, {})
    short, code, long = cleaned.cells
    assert "onerror" not in short.source and "<em>short</em>" in short.source
    assert code.outputs[0]["data"] == {
        "text/plain": f"[an HTML or markdown output of {len(dense)} characters, too long to show]"
    }
    assert long.source == f"*[{len(dense)} characters of markdown]*"


def _rendered_attributes(nb: nbformat.NotebookNode) -> list[tuple[str, str, str]]:
    """Every attribute of every element of the notebook rendered with nbconvert's classic and lab templates (the
    Formgrader's and the feedback's), as (element, attribute, value)."""
    import copy

    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter

    found = []
    for template in ("classic", "lab"):
        page, _ = HTMLExporter(template_name=template).from_notebook_node(copy.deepcopy(nb))
        for element in BeautifulSoup(page, "html.parser").find_all(True):
            found += [
                (element.name, name, " ".join(value) if isinstance(value, list) else value)
                for name, value in element.attrs.items()
            ]
    return found


def test_output_metadata_passes_an_allow_list() -> None:
    """Only whole-number widths and heights of images are kept: no attribute, source or flag reaches the page."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from grader.sanitize import SanitizeSubmission
    from tests.integrity.vectors import PNG

    outputs = [
        new_output("display_data", data={"image/png": PNG}, metadata={"width": "1 onerror=alert(1)", "height": 30}),
        new_output(
            "display_data", data={"image/png": PNG}, metadata={"filenames": {"image/png": "javascript:alert(2)"}}
        ),
        new_output(
            "display_data", data={"image/jpeg": PNG}, metadata={"image/jpeg": {"width": 40, "height": True}, "width": 9}
        ),
        new_output(
            "display_data", data={"image/png": PNG}, metadata={"image/png": {"needs_background": 'light" onload="x'}}
        ),
        new_output(
            "execute_result",
            data={"text/html": "<b>ok</b>"},
            metadata={"text/html": {"isolated": True}},
            execution_count=1,
        ),
    ]
    cleaned, _ = SanitizeSubmission().preprocess(new_notebook(cells=[new_code_cell("1", outputs=outputs)]), {})
    kept = [output["metadata"] for output in cleaned.cells[0].outputs]
    assert kept == [{"image/png": {"height": 30}}, {}, {"image/jpeg": {"width": 40}}, {}, {}]
    attributes = _rendered_attributes(cleaned)
    assert not [a for a in attributes if a[1].startswith("on") or "javascript:" in a[2]], attributes
    assert ("img", "height", "30") in attributes and ("img", "width", "40") in attributes


def test_pasted_images_render_and_other_attachments_show_as_their_names() -> None:
    """A screenshot pasted into a markdown cell (a cell attachment) is shown inline; an attachment of any other kind,
    one missing, or one whose data is not base64 shows only its alt text; nothing of it becomes script."""
    from nbformat.v4 import new_markdown_cell, new_notebook

    from grader.sanitize import SanitizeSubmission
    from tests.integrity.vectors import GIF, HOSTILE_ATTACHMENTS, HOSTILE_MARKDOWN, PNG

    honest = new_markdown_cell(
        "![image.png](attachment:image.png) ![gif](<attachment:my anim.gif>) ![x](attachment:gone.png)"
    )
    honest["attachments"] = {"image.png": {"image/png": PNG}, "my anim.gif": {"image/gif": GIF}}
    hostile = new_markdown_cell(HOSTILE_MARKDOWN)
    hostile["attachments"] = HOSTILE_ATTACHMENTS
    cleaned, _ = SanitizeSubmission().preprocess(new_notebook(cells=[honest, hostile]), {})
    shown, inert = cleaned.cells
    assert f'<img src="data:image/png;base64,{PNG}" alt="image.png">' in shown.source
    assert f'<img src="data:image/gif;base64,{GIF}" alt="gif">' in shown.source
    assert '<img alt="x">' in shown.source.replace("  ", " ")
    assert "attachments" not in shown and "attachments" not in inert
    sources = [value for _, name, value in _rendered_attributes(cleaned) if name in ("src", "href")]
    assert all(
        not value.startswith("data:") or value.startswith(("data:image/png;", "data:image/gif;")) for value in sources
    )
    assert not [a for a in _rendered_attributes(cleaned) if a[1].startswith("on")]
    assert "alert(2)" not in inert.source and "<script" not in inert.source
    # Feedback cleans the autograded notebook, cleaned already: the pasted images stay, nothing else comes back.
    again, _ = SanitizeSubmission().preprocess(copy.deepcopy(cleaned), {})
    assert f'src="data:image/png;base64,{PNG}"' in again.cells[0].source
    assert f'src="data:image/gif;base64,{GIF}"' in again.cells[0].source
    links = [
        {(tag, name, value) for tag, name, value in _rendered_attributes(notebook) if name in ("src", "href")}
        for notebook in (cleaned, again)
    ]
    assert links[0] == links[1] and not [a for a in _rendered_attributes(again) if a[1].startswith("on")]


def test_a_cell_that_cannot_be_cleaned_is_a_note_and_costs_nothing(monkeypatch) -> None:
    """Whatever fails while one cell is cleaned, that cell's submitted text is replaced by a note; the notebook and
    its other cells are cleaned as usual."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    import grader.sanitize
    from grader.sanitize import SanitizeSubmission

    def broken(source: str) -> str:
        raise ValueError("the renderer failed")

    nb = new_notebook(
        cells=[
            new_markdown_cell("*some* markdown"),
            new_code_cell("1", outputs=[new_output("display_data", data={"text/markdown": "*x*", "text/plain": "x"})]),
            new_code_cell("2", outputs=[new_output("stream", name="stdout", text="fine\n")]),
        ]
    )
    monkeypatch.setattr(grader.sanitize, "markdown2html", broken)
    cleaned, _ = SanitizeSubmission().preprocess(nb, {})
    markdown, rich, plain = cleaned.cells
    assert markdown.source == "*[this cell's content could not be shown safely (ValueError)]*"
    assert rich.outputs[0]["text"].startswith("[this cell's content could not be shown safely")
    assert plain.outputs == nb.cells[2].outputs


def test_the_ledger_names_fit_and_a_record_that_cannot_be_written_stops_nothing(tmp_path: Path, capsys) -> None:
    """A record's file name fits the file system whatever the id (up to 255 characters, the longest a folder can
    be named); where the ledger cannot be written at all, the grader says so and goes on."""
    from grader.autograde import Ledger, Outcome, record

    ledger = Ledger(tmp_path / "ledger")
    ids = ["a" * 128, "b" * 129, "c" * 246, "d" * 255]
    for student in ids:
        record(ledger, Outcome(student, ASSIGNMENT, "ok", 1.0, 2.0, "f"))
    assert [ledger.read(student).student for student in ids] == ids
    assert [o.student for o in ledger.outcomes()] == ids
    assert max(len(p.name) for p in ledger.folder.iterdir()) <= 133 and not list(ledger.folder.glob(".*"))
    blocked = Ledger(tmp_path / "a-file")
    blocked.folder.write_text("not a folder")
    record(blocked, Outcome("ana", ASSIGNMENT, "ok", 1.0, 2.0, "f"))
    assert "ana: the grading ledger could not record this outcome, run again to grade it" in capsys.readouterr().err


def test_an_archive_with_a_student_id_too_long_grades_everyone_else(tmp_path: Path) -> None:
    """The review's LMS archive: a 246-character student id beside an honest student. The run ends normally, the
    honest student is graded, the long id is its own clear error in the terminal, the ledger and grades.csv."""
    honest = tmp_path / "honest.ipynb"
    nbformat.write(_solved(), honest)
    long = "z" * 246
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(honest, f"ana_1_{ASSIGNMENT}.ipynb")
        zipped.write(honest, f"{long}.ipynb")
    work = tmp_path / "work"
    for _run in range(2):  # and again: nothing of the first run stops the second
        run = grader_process("autograde", str(archive), "--assignment", ASSIGNMENT, "--work", str(work))
        assert run.returncode == 0, run.stderr
        rows = {line.split()[0]: line for line in run.stdout.splitlines()[1:-1]}
        assert rows["ana"].split()[2:6] == ["12", "/", "12", "ok"]
        assert "error: the upload could not be taken in: the student id is 246 characters long" in rows[long]
    report = grader_process("report", "--work", str(work), "--out", str(tmp_path / "out"))
    with (tmp_path / "out" / "grades.csv").open() as handle:
        statuses = {row["student"]: row["status"].split(":")[0] for row in csv.DictReader(handle)}
    assert report.returncode == 0 and statuses == {"ana": "ok", long: "error"}


def test_manage_submissions_shows_flag_reasons_as_text() -> None:
    """The Formgrader's list of flagged submissions (grader.formgrader) quotes student-controlled text: escaped."""
    from jinja2 import Environment, FileSystemLoader
    from nbgrader.server_extensions.formgrader.handlers import template_path

    from grader.formgrader import course_pages

    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    reasons = {f"eve{hostile}": [f"Flagged by the grader: cell '{hostile}' is not in the released notebook"], "bob": []}
    pages = course_pages(Environment(loader=FileSystemLoader([template_path])), lambda assignment: reasons)
    page = pages.get_template("manage_submissions.tpl").render(base_url="", assignment_id=ASSIGNMENT)
    flagged = page[page.index('id="flagged-submissions"') :]
    assert "<script>" not in flagged and "<img" not in flagged
    assert flagged.count("&lt;script&gt;alert(2)&lt;/script&gt;") == 2, "the student's name and the reason, as text"
    assert "Flagged: 2 submission(s)" in flagged and "no reason of the grader's on record" in flagged
    assert 'id="main-table"' in page, "nbgrader's own page is still there"
