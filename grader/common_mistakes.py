"""The class's common mistakes: for each graded part, how many students broke each of its rules (the mistakes the
trusted check recorded in the grading ledger, every broken rule counted), as common_mistakes.csv and
common_mistakes.png."""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from grader.autograde import Outcome
from grader.course import solutions
from grader.escaping import printable, spreadsheet_cell
from grader.notebooks import in_parts, read_notebook

UNGRADED = "could not be graded"
SHOWN = 5  # mistakes per part in the plot


@dataclass(frozen=True)
class Mistake:
    """One mistake of one part: how many of the students graded on the assignment made it."""

    assignment: str
    part: str  # the graded cell's grade_id
    label: str
    students: int
    graded: int

    @property
    def share(self) -> float:
        return 100 * self.students / self.graded


def tally(outcomes: list[Outcome], parts: dict[str, list[str]]) -> list[Mistake]:
    """The mistakes in these outcomes (each of a cell's counted once), by assignment, part, then most students first.
    A submission that could not be graded (its status not ok, no cell scored) counts as UNGRADED in every part of
    its assignment (`parts`: each assignment's graded cells)."""
    graded = Counter(outcome.assignment for outcome in outcomes)
    counts: Counter[tuple[str, str, str]] = Counter()
    for outcome in outcomes:
        mistakes = outcome.mistakes
        if not outcome.auto_scores and outcome.status != "ok":
            mistakes = dict.fromkeys(parts.get(outcome.assignment, []), [UNGRADED])
        counts.update((outcome.assignment, part, label) for part, labels in mistakes.items() for label in set(labels))
    found = [Mistake(*key, students, graded[key[0]]) for key, students in counts.items()]
    return sorted(found, key=lambda m: (m.assignment, m.part, -m.students, m.label))


def part_titles(assignments: Iterable[str]) -> dict[tuple[str, str], str]:
    """{(assignment, grade_id): the heading of the part the graded cell is in}, from each assignment's source
    notebook in solutions/ (none for an assignment that is not there)."""
    titles = {}
    for assignment in assignments:
        for path in sorted((solutions() / assignment).glob("*.ipynb")):
            for cell, part in in_parts(read_notebook(path).cells):
                meta = cell.metadata.get("nbgrader") or {}
                if meta.get("grade") and part:
                    titles[assignment, meta["grade_id"]] = part
    return titles


def write_csv(mistakes: list[Mistake], titles: dict[tuple[str, str], str], path: Path) -> None:
    """One row per mistake: assignment, part (grade_id), its title, the mistake, students, share (%)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["assignment", "part", "title", "mistake", "students", "share"])
        for m in mistakes:
            text = (m.assignment, m.part, titles.get((m.assignment, m.part), ""), m.label)
            writer.writerow([*map(spreadsheet_cell, text), m.students, f"{m.share:.1f}"])


def write_png(mistakes: list[Mistake], path: Path) -> None:
    """A horizontal bar per mistake, the SHOWN most common of each part, grouped by part: '38% rule 2 (...)'."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [list(group)[:SHOWN] for _, group in groupby(mistakes, lambda m: (m.assignment, m.part))]
    shown = [m for group in groups for m in group]
    colours = [("#2e86c1", "#85c1e9")[number % 2] for number, group in enumerate(groups) for _ in group]
    figure, axes = plt.subplots(figsize=(12, max(2.5, 0.3 * len(shown) + 1.2)))
    bars = axes.barh(range(len(shown)), [m.share for m in shown], color=colours)
    axes.bar_label(bars, [f"{m.share:.0f}% ({m.students})" for m in shown], padding=3, fontsize=8)
    labels = [_plain_text(f"{m.assignment} / {m.part}: {m.label}") for m in shown]
    axes.set_yticks(range(len(shown)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(0, 110)
    axes.set_xlabel("students who made the mistake (% of those graded on the assignment)")
    title = f"The class's most common mistakes (up to {SHOWN} per part)"
    axes.set_title(title if shown else "No mistakes: every graded student earned every part")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _plain_text(text: str, limit: int = 90) -> str:
    """A label shortened to `limit`, as matplotlib shows it literally (a '$' would start mathematical text)."""
    text = printable(text)
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return text.replace("$", r"\$")
