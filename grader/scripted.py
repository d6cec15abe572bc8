"""What an exercise's mistakes.py is written with: scripted answers as edits, and the points they must earn.

An exercise's mistakes.py scripts typical students: `ANSWERS` (student -> {solution grade_id: the cell's source as
the student types it}; a solution cell a student does not list keeps the released stub), `EXPECTED` (student ->
{graded test grade_id: the points it must earn}) and `BREAKS` (hidden test grade_id -> {rule: the students whose
answers break that rule of the part's contract alone; several for a "must not" rule, one per way around it}); and,
where a generated case closes a hole, `GENERATED_ONLY` (hidden test grade_id -> the students whose answer only its
generated cases catch: grader.observing.spanned). A typical mistake is most often a correct answer with one step done
wrong: written as an edit of the instructor's solution cell (or of another scripted answer, for a family of mistakes
that share one different implementation), it says what it changes; and an edit that stops applying, because the text
under it changed, fails loudly instead of silently scripting another mistake. An answer that is a different
implementation stays a whole cell.

An edit is a patch, in the lines of a unified diff: `-` an old line, `+` a new line, a space (or nothing, for a
blank line) a line kept; hunks are separated by a line `@@`, and the old lines of each (kept and `-`) must stand
exactly once, as whole lines, in the text being edited.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nbformat import NotebookNode

from grader.course import CourseError, relative
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook

MARKERS = {"### BEGIN SOLUTION", "### END SOLUTION"}


def solution_answers(source: NotebookNode) -> dict[str, str]:
    """What a perfect student types: each solution cell of the source with the marker lines dropped."""
    return {
        meta["grade_id"]: "\n".join(line for line in cell.source.splitlines() if line.strip() not in MARKERS)
        for _, cell, meta in nbgrader_cells(source)
        if meta.get("solution")
    }


class Solution:
    """The instructor's solution of the exercise whose mistakes.py is `mistakes` (pass its `__file__`): the source
    notebook beside it, read once; and the students scripted against it. `points_of` names the notebook's graded
    test cells in its order: the columns of every student's points."""

    def __init__(self, mistakes: str | Path, points_of: tuple[str, ...]) -> None:
        self.mistakes = Path(mistakes).resolve()
        notebooks = assignment_notebooks(self.mistakes.parent)
        if len(notebooks) != 1:
            folder = relative(self.mistakes.parent)
            raise CourseError(f"{folder}: {len(notebooks)} notebooks; scripted answers need exactly one")
        self.notebook = notebooks[0]
        source = read_notebook(self.notebook)
        self.cells = solution_answers(source)
        tests = tuple(
            meta["grade_id"] for _, _, meta in nbgrader_cells(source) if meta.get("grade") and not meta.get("solution")
        )
        if tuple(points_of) != tests:
            raise CourseError(f"{self._where()}: points_of must name the graded test cells in order: {tests}")
        self.points_of = tests
        self.full_points = tuple(
            meta["points"] for _, _, meta in nbgrader_cells(source) if meta.get("grade") and not meta.get("solution")
        )
        self.answers: dict[str, dict[str, str]] = {}
        self.expected: dict[str, dict[str, float]] = {}
        self.breaks: dict[str, dict[int, list[str]]] = {}
        self.generated_only: dict[str, list[str]] = {}

    def student(
        self,
        name: str,
        answers: dict[str, str],
        points: tuple[float, ...],
        breaks: dict[str, int] | None = None,
        generated_only: tuple[str, ...] = (),
    ) -> None:
        """Script a student: their solution cells (grade_id -> what they type; a cell not given keeps the released
        stub), the points each graded test cell must give them (in the order of `points_of`), for each hidden
        test cell whose contract their answer breaks in one rule alone, that rule, and the hidden test cells
        that only their generated cases catch the answer on (every fixed and seeded case passes it)."""
        problems = [f"{name!r} is scripted twice"] if name in self.answers else []
        problems += [f"{name!r}: no graded test cell {cell!r}" for cell in generated_only if cell not in self.points_of]
        problems += [f"{name!r} answers {cell!r}, not a solution cell" for cell in answers if cell not in self.cells]
        if len(points) != len(self.points_of):
            problems.append(f"{name!r} has {len(points)} points for {len(self.points_of)} graded test cells")
        problems += [
            f"{name!r} breaks {cell!r}: no such graded cell" for cell in breaks or {} if cell not in self.points_of
        ]
        if problems:
            raise CourseError(f"{self._where()}: {'; '.join(problems)}")
        self.answers[name] = dict(answers)
        self.expected[name] = dict(zip(self.points_of, points, strict=True))
        for grade_id, rule in (breaks or {}).items():
            self.breaks.setdefault(grade_id, {}).setdefault(rule, []).append(name)
        for grade_id in generated_only:
            self.generated_only.setdefault(grade_id, []).append(name)

    def control(self, name: str, answers: dict[str, str]) -> None:
        """Script a control, not a mistake: every solution cell written differently from the instructor's, earning
        every point of every graded cell (the notebook's points)."""
        if sorted(answers) != sorted(self.cells):
            cells = sorted(self.cells)
            raise CourseError(f"{self._where()}: the control {name!r} answers {sorted(answers)}, not {cells}")
        self.student(name, answers, self.full_points)

    def tables(
        self,
    ) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, float]], dict[str, dict[int, list[str]]]]:
        """The scripted students as mistakes.py exports them: ANSWERS, EXPECTED and BREAKS (rules in order)."""
        breaks = {grade_id: dict(sorted(numbered.items())) for grade_id, numbered in self.breaks.items()}
        return self.answers, self.expected, breaks

    def edited(self, grade_id: str, *patches: str) -> str:
        """The solution cell `grade_id` as a student types it, with these patches made in turn."""
        if grade_id not in self.cells:
            raise CourseError(f"{self._where()}: {relative(self.notebook)} has no solution cell {grade_id!r}")
        return self._apply(self.cells[grade_id], f"the solution cell {grade_id!r}", patches)

    def edited_answer(self, answer: str, *patches: str) -> str:
        """Another scripted answer with these patches, as `edited` makes them: for a family of mistakes that share
        one different implementation."""
        return self._apply(answer, "a scripted answer", patches)

    def _apply(self, text: str, what: str, patches: tuple[str, ...]) -> str:
        for patch in patches:
            try:
                hunks = _hunks(patch)
            except ValueError as error:
                raise CourseError(f"{self._where()}: a patch of {what}: {error}") from None
            lines = text.split("\n")
            places = []  # (start, end, new lines) of each hunk, all found in the text before the patch
            for old, new in hunks:
                found = _places(lines, old)
                if len(found) != 1:
                    shown = "\n".join(old)
                    raise CourseError(
                        f"{self._where()}: a patch of {what} does not apply: {shown!r} stands {len(found)} times"
                        ", not once"
                    )
                places.append((found[0], found[0] + len(old), new))
            places.sort()
            if any(end > start for (_, end, _), (start, _, _) in zip(places, places[1:], strict=False)):
                raise CourseError(f"{self._where()}: a patch of {what} has hunks that overlap")
            for start, end, new in reversed(places):
                lines[start:end] = new
            text = "\n".join(lines)
        return text

    def _where(self) -> str:
        """mistakes.py and the line of it being run: the answer whose edit failed."""
        frame = sys._getframe(1)
        while frame is not None and Path(frame.f_code.co_filename).resolve() != self.mistakes:
            frame = frame.f_back
        line = f":{frame.f_lineno}" if frame is not None else ""
        return f"{relative(self.mistakes)}{line}"


def _hunks(patch: str) -> list[tuple[list[str], list[str]]]:
    """A patch's hunks, each as (its old lines, kept and removed; its new lines, kept and added); the patch's own
    first and last line ends are not part of it."""
    hunks: list[list[str]] = [[]]
    for line in patch.removeprefix("\n").removesuffix("\n").split("\n"):
        if line == "@@":
            hunks.append([])
        elif line[:1] in ("-", "+", " ", ""):
            hunks[-1].append(line)
        else:
            raise ValueError(f"a line must start with '-', '+' or a space: {line!r}")
    if not all(any(line[:1] != "+" for line in hunk) for hunk in hunks):
        raise ValueError("a hunk needs an old line (kept or removed) to stand where it applies")
    return [([line[1:] for line in h if line[:1] != "+"], [line[1:] for line in h if line[:1] != "-"]) for h in hunks]


def _places(lines: list[str], old: list[str]) -> list[int]:
    """Where the run of lines `old` starts in `lines`, every time it stands there."""
    return [start for start in range(len(lines) - len(old) + 1) if lines[start : start + len(old)] == old]
