"""grader.scripted: a scripted answer as a patch of the solution, and the students' tables; a patch that stops
applying, or a student that does not fit the notebook, fails with the file, the line and the text."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from grader.course import CourseError

HEAD = """from grader.scripted import Solution

SOLUTION = Solution(__file__, points_of=("test_answer",))
"""


def _run(course: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(course))
    mistakes = course / "solutions/extoy/mistakes.py"
    mistakes.write_text(HEAD + body)
    return runpy.run_path(str(mistakes))


def test_a_patch_of_the_solution_and_the_tables(toy_course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _run(
        toy_course,
        '''
FORTY_ONE = SOLUTION.edited("answer", """
 def answer():
-    return 6 * 7  # the secret
+    return 41
""")
AS_FLOAT = SOLUTION.edited_answer(FORTY_ONE, """
-    return 41
+    return 42.0
""")
MOVED = SOLUTION.edited("answer", """
+    return 6 * 7  # the secret
 def answer():
@@
-    return 6 * 7  # the secret
+    return x
""")
SOLUTION.student("forty_one", {"answer": FORTY_ONE}, (0,), breaks={"test_answer": 1})
SOLUTION.student("as_float", {"answer": AS_FLOAT}, (2,))
ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
''',
        monkeypatch,
    )
    assert module["ANSWERS"] == {
        "forty_one": {"answer": "def answer():\n    return 41"},  # the marker lines dropped, as a student types it
        "as_float": {"answer": "def answer():\n    return 42.0"},
    }
    assert module["EXPECTED"] == {"forty_one": {"test_answer": 0}, "as_float": {"test_answer": 2}}
    assert module["BREAKS"] == {"test_answer": {1: ["forty_one"]}}
    # Every hunk stands where it is found in the text before the patch: a line moved is added in one place and
    # removed in the other, though it stands twice in between.
    assert module["MOVED"] == "    return 6 * 7  # the secret\ndef answer():\n    return x"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'X = SOLUTION.edited("answer", """\n-    return 6 * 8\n+    return 1\n""")\n',
            "mistakes.py:5: a patch of the solution cell 'answer' does not apply: '    return 6 * 8' stands 0 times",
        ),
        (
            'X = SOLUTION.edited("answer", """\n-    return 6 * 7  # the secret\n+\n@@\n+\n""")\n',
            "mistakes.py:5: a patch of the solution cell 'answer': a hunk needs an old line",
        ),
        ('X = SOLUTION.edited("answer", """\nreturn 1\n""")\n', "a line must start with '-', '+' or a space"),
        (
            'X = SOLUTION.edited("answer", """\n def answer():\n+    pass\n@@\n-def answer():\n""")\n',
            "mistakes.py:5: a patch of the solution cell 'answer' has hunks that overlap",
        ),
        ('X = SOLUTION.edited("nothing", "")\n', "mistakes.py:5: solutions/extoy/extoy.ipynb has no solution cell"),
        ('SOLUTION.student("a", {"answer": ""}, (1, 2))\n', "mistakes.py:5: 'a' has 2 points for 1 graded test cells"),
        ('SOLUTION.student("a", {"other": ""}, (1,))\n', "'a' answers 'other', not a solution cell"),
    ],
)
def test_what_does_not_fit_is_named(toy_course: Path, monkeypatch: pytest.MonkeyPatch, body: str, message: str) -> None:
    with pytest.raises(CourseError, match="^solutions/extoy/mistakes.py") as raised:
        _run(toy_course, "\n" + body, monkeypatch)
    assert message in str(raised.value)


def test_the_columns_must_be_the_notebooks_graded_cells(toy_course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_COURSE_ROOT", str(toy_course))
    mistakes = toy_course / "solutions/extoy/mistakes.py"
    mistakes.write_text(HEAD.replace('("test_answer",)', '("test_other",)'))
    with pytest.raises(CourseError, match="points_of must name the graded test cells in order: \\('test_answer',\\)"):
        runpy.run_path(str(mistakes))
