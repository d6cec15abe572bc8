"""Every way to autograde grades the same way: nbgrader's own `autograde`, typed in the course folder after
`python -m grader autograde`, runs the grader's sandboxed execute and trusted-check steps, so a faked-type cheat
keeps its trusted 0 points, nbgrader's flag and the reason on each affected cell, in the feedback too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.converters import Autograde

from grader.course import default_db_url, nbgrader_config
from grader.nbgrader_setup import close_gradebooks, ready_nbgrader
from grader.nbgrader_steps import FLAG_NOTE, CourseExecute, TrustedCheck
from grader.sample_class import submission
from tests.conftest import REPO, grader_process
from tests.integrity.vectors import LIAR_RETURNS, LYING_TYPE

ASSIGNMENT = "ex01_slots"
RELEASE = REPO / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
CLASSIFY_TESTS = ("test_classify_slots_visible", "test_classify_slots_hidden")
# The cheat fools the visible tests only: the hidden tests run once, in the trusted check, whose verdict is the hidden
# cell's outcome in the notebook too, so only the visible cell's own tests disagree with the trusted check.
FLAGGED_TESTS = ("test_classify_slots_visible",)


def write_cheat(submitted: Path, student: str) -> None:
    """`type` lies and every comparison is true: the notebook's own classify_slots tests pass, the answer is wrong."""
    release = nbformat.read(RELEASE, 4)
    stub = next(c.source for c in release.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "classify_slots")
    code = f"{stub}\n\n{LYING_TYPE}\n\ndef classify_slots(module):\n    return {LIAR_RETURNS['always_equal']}\n"
    folder = submitted / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(submission(release, {"classify_slots": code}), folder / RELEASE.name)


def recorded(work: Path, student: str) -> tuple[dict[str, float], bool, str]:
    """The gradebook's scores per test cell, nbgrader's flag, and the comment on the classify_slots answer."""
    ready_nbgrader()
    with Gradebook(default_db_url(work)) as gradebook:
        notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        scores = {grade.name: float(grade.score) for grade in notebook.grades if grade.name.startswith("test_")}
        comment = gradebook.find_comment("classify_slots", ASSIGNMENT, ASSIGNMENT, student).comment or ""
        return scores, notebook.flagged, comment


def flag_notes(work: Path, student: str) -> dict[str, str]:
    graded = nbformat.read(work / "autograded" / student / ASSIGNMENT / RELEASE.name, 4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: output["text"]
        for cell in graded.cells
        if cell.cell_type == "code" and "nbgrader" in cell.metadata
        for output in cell.outputs
        if output.get("name") == "stderr" and output["text"].startswith(FLAG_NOTE)
    }


def test_the_course_configuration_names_the_graders_steps() -> None:
    """The stock steps, with the sandboxed Execute in place of nbgrader's, the trusted check after SaveAutoGrades, and
    the submitted script removed last."""
    stock = [
        f"{step.__module__.split('.')[0]}.preprocessors.{step.__name__}"
        for step in Autograde.class_traits()["autograde_preprocessors"].default()
    ]
    configured = list(nbgrader_config().Autograde.autograde_preprocessors)
    expected = [f"grader.nbgrader_steps.{CourseExecute.__name__}" if s.endswith(".Execute") else s for s in stock]
    expected.insert(
        expected.index("nbgrader.preprocessors.SaveAutoGrades") + 1, f"grader.nbgrader_steps.{TrustedCheck.__name__}"
    )
    assert configured == [*expected, "grader.sanitize.SanitizeSubmission"]


def test_nbgrader_autograde_typed_in_the_course_keeps_the_trusted_grade(tmp_path: Path) -> None:
    work, student = tmp_path / "work", "liar"
    write_cheat(tmp_path / "in", student)
    run = grader_process("autograde", str(tmp_path / "in"), "--work", str(work), "--workers", "1")
    assert run.returncode == 0, run.stderr
    [row] = [line for line in run.stdout.splitlines() if line.startswith(student)]
    assert "flagged: test_classify_slots_visible: the notebook's tests gave 2, the trusted check 0" in row, row
    by_grader = recorded(work, student)
    scores, flagged, comment = by_grader
    assert scores == dict.fromkeys(scores, 0.0) and set(CLASSIFY_TESTS) <= set(scores)
    assert flagged
    assert all(f"{FLAG_NOTE}, {grade_id}: the notebook's tests gave" in comment for grade_id in FLAGGED_TESTS)
    notes = flag_notes(work, student)
    assert set(notes) == set(FLAGGED_TESTS), notes

    settings = [f"--CourseDirectory.{name}_directory={work / name}" for name in ("submitted", "autograded", "feedback")]
    nbgrader = Path(sys.executable).with_name("nbgrader")
    env = dict(os.environ, PATH=f"{nbgrader.parent}{os.pathsep}{os.environ['PATH']}")
    typed = subprocess.run(
        [
            str(nbgrader),
            "autograde",
            ASSIGNMENT,
            "--student",
            student,
            "--force",
            f"--CourseDirectory.db_url={default_db_url(work)}",
            *settings,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert typed.returncode == 0, typed.stdout + typed.stderr
    assert "checksum" not in typed.stdout + typed.stderr, "no warning about the hidden tests put back (RestoreCells)"
    assert recorded(work, student) == by_grader
    assert set(flag_notes(work, student)) == set(FLAGGED_TESTS)

    feedback = grader_process("feedback", "--work", str(work))
    assert feedback.returncode == 0, feedback.stderr
    [page] = (work / "feedback" / student / ASSIGNMENT).glob("*.html")
    html = page.read_text(encoding="utf-8")
    for grade_id in FLAGGED_TESTS:  # the comment on the answer, and the note under each flagged test cell
        assert html.count(f", {grade_id}: the notebook") == 1, grade_id
    results = re.findall(r'<div class="feedback-result">.*?</div>', html, re.S)
    flagged = [block for block in results if "trusted check: the notebook" in block]
    assert len(flagged) == len(FLAGGED_TESTS), "each flagged cell's result line gives the grader's reason"
    hidden = [block for block in results if "hidden tests</b>: 0 / 4 points" in block and "AssertionError: " in block]
    assert len(hidden) == 1, "the hidden cell's result line gives the trusted check's verdict"


def test_the_course_configuration_loads_whatever_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make test` runs pytest with no arguments at all; a setting on the command line wins, in either form."""
    from traitlets.config.loader import PyFileConfigLoader

    def course_configuration() -> object:
        return PyFileConfigLoader("nbgrader_config.py", path=str(REPO / "grader")).load_config()

    monkeypatch.setattr(sys, "argv", ["pytest"])
    assert course_configuration().CourseDirectory.course_id == "nn-module-internals"
    for argv in (
        ["lab", "--CourseDirectory.db_url", "sqlite:///a.db"],
        ["lab", "--CourseDirectory.db_url=sqlite:///a.db"],
    ):
        monkeypatch.setattr(sys, "argv", argv)
        assert course_configuration().CourseDirectory.db_url == "sqlite:///a.db"


def test_a_gradebook_missing_a_table_gets_it_back(tmp_path: Path) -> None:
    """nbgrader's tables are looked up with one query (grader.nbgrader_setup): one that is gone is still made."""
    from nbgrader.api import Gradebook
    from sqlalchemy import inspect, text

    ready_nbgrader()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.add_student("s1")
        gradebook.db.execute(text("DROP TABLE comment"))
        gradebook.db.commit()
        assert "comment" not in inspect(gradebook.engine).get_table_names()
    with Gradebook(url) as gradebook:
        assert "comment" in inspect(gradebook.engine).get_table_names()
        assert [student.id for student in gradebook.students] == ["s1"]


def test_closed_gradebooks_leave_no_sqlite_side_files(tmp_path: Path) -> None:
    """The shared engines keep a SQLite gradebook open (write-ahead log beside it); closing them checkpoints it and
    leaves the gradebook alone, which opens again as before."""
    ready_nbgrader()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.add_student("s1")
    assert {p.name for p in tmp_path.iterdir()} == {"gradebook.db", "gradebook.db-wal", "gradebook.db-shm"}
    close_gradebooks()
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.db"]
    with Gradebook(url) as gradebook:
        assert [student.id for student in gradebook.students] == ["s1"]
    close_gradebooks()


def test_a_flag_reason_is_the_whole_message_of_the_trusted_check() -> None:
    """The reason in a flagged cell's comment, which Manage Submissions lists: the student's message, with the case,
    what came back and what was expected, not the one-line label kept for statuses."""
    from grader.nbgrader_steps import disagreements
    from grader.trusted import Verdict

    message = "case 10 of 17, item 1: classify_slots(module) gave 'other'\n  expected: 'registry'"
    short = "case 10 of 17, item 1, item 1 differs"
    verdict = Verdict({"t": 0.0}, {"t": short}, {"t": message}, {"t": "case 10"})
    said = "the notebook's tests gave 2, the trusted check 0"
    assert disagreements(verdict, {"t": 2.0}, whole=True) == {"t": f"{said} ({message})"}
    assert disagreements(verdict, {"t": 2.0}) == {"t": f"{said} ({short})"}, "the status keeps the short reason"
