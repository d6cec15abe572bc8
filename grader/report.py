"""Grades -> grades.csv (one row per student and assignment, with each graded cell) and summary.png; the ledger's
mistakes and unattempted parts -> common_mistakes.csv and common_mistakes/<assignment>.png (grader.common_mistakes)."""

from __future__ import annotations

import csv
import textwrap
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from grader import common_mistakes
from grader.autograde import Outcome, ledger_outcomes
from grader.escaping import spreadsheet_cell
from grader.figures import pyplot, save
from grader.gradebook import CellGrade, cell_grades, changed_outside, graded_by_hand, max_scores

BLUE, RED = "#2e86c1", "#c0392b"
OUTSIDE = "graded outside `grader autograde` (no record of it in grading_status/)"


@dataclass(frozen=True)
class Row:
    student: str
    assignment: str
    status: str
    cells: dict[str, float]
    by_hand: str = ""  # the cells a teaching assistant scored by hand, with the automatic score each replaces


def rows(outcomes: list[Outcome], db_url: str) -> list[Row]:
    """Every graded submission: its status from the grading ledger's `outcomes`, each cell's points the manual score
    a teaching assistant gave it or else the automatic points the grader recorded. Where the gradebook's automatic
    points are not the grader's, the grader's count and the status says what was changed."""
    grades = cell_grades(db_url)
    found = []
    for outcome in outcomes:
        cells = grades.get(outcome.student, {}).get(outcome.assignment, {})
        changes = changed_outside(outcome.auto_scores, cells)
        status = outcome.status
        if changes:
            status = f"changed outside the grader ({'; '.join(changes)}), run grader autograde; {status}"
        found.append(_row(outcome.student, outcome.assignment, status, cells, outcome.auto_scores))
    known = {(row.student, row.assignment) for row in found}
    for student, per_assignment in sorted(grades.items()):
        for assignment, cells in sorted(per_assignment.items()):
            if (student, assignment) not in known:
                auto = {name: cell.auto for name, cell in cells.items() if cell.auto is not None}
                found.append(_row(student, assignment, OUTSIDE, cells, auto))
    return sorted(found, key=lambda row: (row.student, row.assignment))


def _row(student: str, assignment: str, status: str, cells: dict[str, CellGrade], auto: dict[str, float]) -> Row:
    points = {name: cell.manual if cell.manual is not None else auto.get(name, 0.0) for name, cell in cells.items()}
    return Row(student, assignment, status, points, ", ".join(graded_by_hand(cells)))


def write_csv(table: list[Row], path: Path) -> None:
    grade_ids = sorted({grade_id for row in table for grade_id in row.cells})
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        header = ["student", "assignment", "status", "score", "graded by hand", *map(spreadsheet_cell, grade_ids)]
        writer.writerow(header)
        for row in table:
            cells = [f"{row.cells[g]:g}" if g in row.cells else "" for g in grade_ids]
            text = [spreadsheet_cell(value) for value in (row.student, row.assignment, row.status)]
            writer.writerow([*text, f"{sum(row.cells.values()):g}", spreadsheet_cell(row.by_hand), *cells])


def summary_figure(table: list[Row], maxima: dict[str, dict[str, float]], titles: dict[tuple[str, str], str]) -> Figure:
    """Score distribution per assignment (left) and pass rate per graded cell (right), each cell named by its part
    and tests (`titles`: (assignment, grade_id) -> "Part 1: ... — hidden tests", in notebook order)."""
    assignments = sorted({row.assignment for row in table})
    order = {key: number for number, key in enumerate(titles)}
    parts = [(a, g) for a in assignments for g in sorted(maxima.get(a, {}), key=lambda g: (order.get((a, g), 0), g))]
    labels = [textwrap.fill(f"{a}: {titles.get((a, g), g)}", 60).replace("$", r"\$") for a, g in parts]
    lines = sum(label.count("\n") + 1 for label in labels)
    figure, (left, right) = pyplot().subplots(
        1, 2, figsize=(16, max(4, 0.2 * lines + 0.1 * len(parts) + 1.5)), width_ratios=(2, 3)
    )
    percentages = [
        [100 * sum(r.cells.values()) / total for r in table if r.assignment == a]
        if (total := sum(maxima.get(a, {}).values()))
        else []
        for a in assignments
    ]
    left.boxplot(percentages, orientation="horizontal", tick_labels=assignments)
    for y, values in enumerate(percentages, start=1):
        left.scatter(values, [y] * len(values), s=12, alpha=0.6)
    left.set_xlabel("score (% of the assignment's points)")
    left.set_xlim(-5, 105)
    left.invert_yaxis()  # the first assignment on top, as on the right
    left.set_title("Score distribution per assignment")
    rates = []
    for assignment, grade_id in parts:
        graded = [r for r in table if r.assignment == assignment and r.status == "ok"]
        full = sum(r.cells.get(grade_id) == maxima[assignment][grade_id] for r in graded)
        rates.append(100 * full / len(graded) if graded else 0)
    right.barh(range(len(parts)), rates, color=[RED if rate < 50 else BLUE for rate in rates])
    right.set_yticks(range(len(parts)), labels, fontsize=8)
    right.invert_yaxis()
    right.set_xlim(0, 100)
    right.set_xlabel("students with full points on the cell (% of those graded ok)")
    right.set_title("Pass rate per graded cell")
    right.legend(
        handles=[Patch(color=BLUE, label="half the class or more"), Patch(color=RED, label="under half")],
        loc="lower right",
    )
    figure.tight_layout()
    return figure


def report(work_dir: Path, db_url: str, out: Path) -> list[Path]:
    """Write grades.csv, summary.png, common_mistakes.csv and common_mistakes/<assignment>.png (one per graded
    assignment) into `out`; return their paths."""
    outcomes, maxima = ledger_outcomes(work_dir), max_scores(db_url)
    table = rows(outcomes, db_url)
    course = common_mistakes.checked(maxima)
    paths = [out / name for name in ("grades.csv", "summary.png", "common_mistakes.csv")]
    write_csv(table, paths[0])
    save(summary_figure(table, maxima, course.titles), paths[1], dpi=110)
    entries = course.ordered(common_mistakes.tally(outcomes, {a: sorted(cells) for a, cells in maxima.items()}))
    common_mistakes.write_csv(entries, course, paths[2])
    graded = sorted({outcome.assignment for outcome in outcomes})
    return paths + common_mistakes.write_pngs(entries, course, graded, out / "common_mistakes")
