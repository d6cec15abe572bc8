"""The class's common mistakes: for each graded test cell, how many students broke each of its rules (the mistakes
the trusted check recorded in the grading ledger, every broken rule counted), how many did not attempt its part (its
solution cells left as released, grader.attempted: never counted as a mistake) and how many could not be graded; as
common_mistakes.csv and one figure per assignment, common_mistakes/<assignment>.png. Every entry names what was
checked: the part, its visible or hidden tests, and the rule of the exercise's contract."""

from __future__ import annotations

import csv
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from grader.autograde import Outcome
from grader.course import checks_file, solutions
from grader.escaping import printable, spreadsheet_cell
from grader.feedback import graded_parts  # the feedback's labels of graded cells: one source
from grader.figures import pyplot, save
from grader.notebooks import HIDDEN_TESTS, read_notebook
from grader.trusted import MUST_NOT_REASON_PATTERN, part_rules

MISTAKE, NOT_ATTEMPTED, UNGRADED = "mistake", "not attempted", "could not be graded"
KINDS = (NOT_ATTEMPTED, UNGRADED, MISTAKE)  # the order of a cell's entries
WHAT = {
    NOT_ATTEMPTED: "its solution cells are as released (raise NotImplementedError())",
    UNGRADED: "the submission could not be graded (see grades.csv)",
}
COLOURS = {MISTAKE: "#2e86c1", NOT_ATTEMPTED: "#aab7b8", UNGRADED: "#c0392b"}
SHOWN = 3  # mistakes per graded cell in a figure (the CSV has them all)
WIDTH = 72  # characters per line of a figure's labels, wrapped, never cut


@dataclass(frozen=True)
class Entry:
    """How many of the students graded on an assignment came to the same result on one graded test cell: a mistake
    (a broken rule or failing visible check, as the grader recorded it), not attempted, or could not be graded."""

    assignment: str
    cell: str  # the graded test cell's grade_id
    kind: str  # MISTAKE, NOT_ATTEMPTED or UNGRADED
    label: str  # a mistake's label; '' for the other kinds
    students: int
    graded: int

    @property
    def share(self) -> float:
        return 100 * self.students / self.graded


def tally(outcomes: list[Outcome], cells: dict[str, list[str]]) -> list[Entry]:
    """The entries of these outcomes, by assignment, cell, kind, then most students first. A cell that lost points
    is NOT_ATTEMPTED where the student left its part as released, else each of its mistakes (every broken rule); a
    submission that could not be graded (its status not ok, no cell scored) is UNGRADED in every cell of its
    assignment (`cells`: each assignment's graded cells)."""
    graded = Counter(outcome.assignment for outcome in outcomes)
    counts: Counter[tuple[str, str, str, str]] = Counter()
    for outcome in outcomes:
        if not outcome.auto_scores and outcome.status != "ok":
            found = {(cell, UNGRADED, "") for cell in cells.get(outcome.assignment, [])}
        else:
            untouched = set(outcome.not_attempted) & set(outcome.mistakes)
            found = {(cell, NOT_ATTEMPTED, "") for cell in untouched}
            found |= {
                (cell, MISTAKE, label)
                for cell, labels in outcome.mistakes.items()
                if cell not in untouched
                for label in labels
            }
        counts.update((outcome.assignment, *key) for key in found)
    entries = [Entry(*key, students, graded[key[0]]) for key, students in counts.items()]
    return sorted(entries, key=lambda e: (e.assignment, e.cell, KINDS.index(e.kind), -e.students, e.label))


@dataclass(frozen=True)
class Checked:
    """What the course says each graded test cell of its assignments checks: the cell's label as the feedback gives
    it ("Part 1: ... — hidden tests"), and the text of each numbered rule its checks name (CLAUSES)."""

    titles: dict[tuple[str, str], str]  # in notebook order
    rules: dict[tuple[str, str], dict[int, str]]

    def ordered(self, entries: list[Entry]) -> list[Entry]:
        """The entries with their cells in notebook order (a cell the course does not know last), each cell's
        entries as they were."""
        order = {key: number for number, key in enumerate(self.titles)}
        return sorted(entries, key=lambda e: (e.assignment, order.get((e.assignment, e.cell), len(order)), e.cell))

    def what(self, entry: Entry) -> str:
        """What an entry says failed, in the course's words: the broken rule (a "must not" rule of the part, from
        one of its other cells, named by its hidden cell's rules), the failing visible check, or the kind of
        problem."""
        if entry.kind != MISTAKE:
            return WHAT[entry.kind]
        broken = MUST_NOT_REASON_PATTERN.fullmatch(entry.label)
        if not broken:
            return entry.label
        rule = int(broken["rule"])
        text = self.rules.get((entry.assignment, broken["hidden"]), {}).get(rule)
        return f'a "must not" rule of the part is broken: rule {rule}' + (f" ({text})" if text else "")


def checked(assignments: Iterable[str]) -> Checked:
    """What each assignment's graded test cells check, from its source notebook and checks in solutions/ (nothing
    for an assignment that is not there)."""
    titles, rules = {}, {}
    for assignment in assignments:
        for path in sorted((solutions() / assignment).glob("*.ipynb")):
            for cell, label, _ in graded_parts(read_notebook(path).cells, HIDDEN_TESTS):
                meta = cell.metadata.get("nbgrader") or {}
                if label and meta.get("grade") and not meta.get("solution"):
                    titles[assignment, meta["grade_id"]] = label
        if checks_file(assignment).is_file():
            for cell, texts in part_rules(checks_file(assignment).read_text(encoding="utf-8")).items():
                rules[assignment, cell] = texts
    return Checked(titles, rules)


def write_csv(entries: list[Entry], course: Checked, path: Path) -> None:
    """One row per entry: assignment, the part and tests (the cell's label), the cell's grade_id, the kind, what
    failed, students, share (%)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["assignment", "part", "cell", "kind", "what", "students", "share"])
        for e in entries:
            text = (e.assignment, course.titles.get((e.assignment, e.cell), ""), e.cell, e.kind, course.what(e))
            writer.writerow([*map(spreadsheet_cell, text), e.students, f"{e.share:.1f}"])


def write_pngs(entries: list[Entry], course: Checked, assignments: Iterable[str], folder: Path) -> list[Path]:
    """One figure per assignment in `folder`, <assignment>.png: for each graded test cell, under its part and tests,
    a bar for the students who did not attempt it, could not be graded, and for each of its SHOWN most common
    mistakes, its share of the class; a legend, and labels wrapped, never cut."""
    paths = [folder / f"{assignment}.png" for assignment in assignments]
    for path in paths:
        save(figure_of(path.stem, [e for e in entries if e.assignment == path.stem], course), path)
    return paths


def figure_of(assignment: str, entries: list[Entry], course: Checked) -> Figure:
    """The figure of one assignment's entries (in notebook order), as write_pngs describes it."""
    rows: list[tuple[str, Entry | None]] = []  # a heading (no entry) or a bar
    for cell, grouped in groupby(entries, lambda e: e.cell):
        of_cell = list(grouped)
        rows.append((course.titles.get((assignment, cell), cell), None))
        shown = [e for e in of_cell if e.kind != MISTAKE] + [e for e in of_cell if e.kind == MISTAKE][:SHOWN]
        rows += [(course.what(e), e) for e in shown]
    labels = [_plain_text(text, WIDTH if entry else WIDTH + 10) for text, entry in rows]  # headings a little wider
    heights = [label.count("\n") + 1 for label in labels]
    tops = [sum(heights[:n]) + heights[n] / 2 for n in range(len(rows))]
    figure, axes = pyplot().subplots(figsize=(14, 1.6 + 0.26 * sum(heights)))
    bars = [(top, entry) for top, (_, entry) in zip(tops, rows, strict=True) if entry]
    drawn = axes.barh(
        [top for top, _ in bars],
        [e.share for _, e in bars],
        height=0.8,
        color=[COLOURS[e.kind] for _, e in bars],
    )
    axes.bar_label(drawn, [f"{e.share:.0f}% ({e.students})" for _, e in bars], padding=3, fontsize=8)
    axes.set_yticks(tops, labels, fontsize=8)
    for label, (_, entry) in zip(axes.get_yticklabels(), rows, strict=True):
        label.set_fontweight("normal" if entry else "bold")
    axes.set_ylim(max(sum(heights), 1), 0)
    axes.set_xlim(0, 110)
    graded = f"the {entries[0].graded} student(s)" if entries else "the students"
    axes.set_xlabel(f"share of {graded} graded on {assignment} (%)")
    title = f"{assignment}: each graded cell's most often broken rules (up to {SHOWN}), and who did not attempt it"
    axes.set_title(title if entries else f"{assignment}: every graded student earned every cell")
    axes.legend(
        handles=[Patch(color=COLOURS[kind], label=kind) for kind in (MISTAKE, NOT_ATTEMPTED, UNGRADED)],
        loc="lower right",
    )
    figure.tight_layout()
    return figure


def _plain_text(text: str, width: int) -> str:
    """A label wrapped to `width` characters a line, as matplotlib shows it literally (a '$' would start
    mathematical text)."""
    return textwrap.fill(printable(text), width).replace("$", r"\$")
