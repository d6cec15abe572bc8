"""Grades -> grades.csv (one row per student and assignment, with each graded cell) and summary.png; the ledger's
mistakes -> common_mistakes.csv and common_mistakes.png (grader.common_mistakes)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from grader import common_mistakes
from grader.autograde import Outcome, ledger_outcomes
from grader.escaping import spreadsheet_cell
from grader.gradebook import CellGrade, cell_grades, changed_outside, graded_by_hand, max_scores

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


def write_summary_png(table: list[Row], maxima: dict[str, dict[str, float]], path: Path) -> None:
    """Score distribution per assignment (left) and pass rate per graded cell (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assignments = sorted({row.assignment for row in table})
    parts = [(a, g) for a in assignments for g in sorted(maxima.get(a, {}))]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, max(4, 0.32 * len(parts) + 1.5)))
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
    left.set_title("Score distribution per assignment")
    rates = []
    for assignment, grade_id in parts:
        graded = [r for r in table if r.assignment == assignment and r.status == "ok"]
        full = sum(r.cells.get(grade_id) == maxima[assignment][grade_id] for r in graded)
        rates.append(100 * full / len(graded) if graded else 0)
    labels = [f"{a} / {g}" for a, g in parts]
    right.barh(range(len(parts)), rates, color=["#c0392b" if rate < 50 else "#2e86c1" for rate in rates])
    right.set_yticks(range(len(parts)), labels, fontsize=8)
    right.invert_yaxis()
    right.set_xlim(0, 100)
    right.set_xlabel("students with full points on the cell (%)")
    right.set_title("Pass rate per graded cell (red: under half the class)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def report(work_dir: Path, db_url: str, out: Path) -> list[Path]:
    """Write grades.csv, summary.png, common_mistakes.csv and common_mistakes.png into `out`; return their paths."""
    outcomes, maxima = ledger_outcomes(work_dir), max_scores(db_url)
    table = rows(outcomes, db_url)
    paths = [out / name for name in ("grades.csv", "summary.png", "common_mistakes.csv", "common_mistakes.png")]
    write_csv(table, paths[0])
    write_summary_png(table, maxima, paths[1])
    mistakes = common_mistakes.tally(outcomes, {a: sorted(cells) for a, cells in maxima.items()})
    common_mistakes.write_csv(mistakes, common_mistakes.part_titles(maxima), paths[2])
    common_mistakes.write_png(mistakes, paths[3])
    return paths
