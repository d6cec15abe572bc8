"""How each hidden test covers its part's input space: per dimension its checks declare (`SPACES` in
solutions/<assignment>/checks.py: {hidden test cell: {dimension: its values, plainest first}}), how many generated
cases reach each value. Counted from the labels of the solution's observations (grader.observing.spanned writes each
case's values there), so the table is what grading runs, never a stored copy. `python -m grader coverage` prints it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from grader import observing, rules
from grader.tables import format_table


@dataclass(frozen=True)
class Coverage:
    """One hidden test cell: the dimensions its checks declare, and the generated cases reaching each value."""

    grade_id: str
    declared: dict[str, list[str]]
    reached: dict[str, Counter[str]]
    fixed: int
    seeded: int
    generated: int

    def problems(self) -> list[str]:
        """A declared value no generated case reaches, and a dimension or value a case carries but the checks do not
        declare."""
        unreached = [
            f"{self.grade_id}: no generated case has {dimension}={value}"
            for dimension, values in self.declared.items()
            for value in values
            if not self.reached.get(dimension, Counter())[value]
        ]
        undeclared = [
            f"{self.grade_id}: a generated case has {dimension}={value}, which SPACES does not declare"
            for dimension, counts in self.reached.items()
            for value in counts
            if value not in self.declared.get(dimension, [])
        ]
        return unreached + undeclared


def coverage(spaces: dict[str, dict[str, list[str]]], observations: dict[str, object]) -> list[Coverage]:
    """The coverage of every hidden test cell that `spaces` declares, from the solution's observations."""
    found = []
    for grade_id, declared in spaces.items():
        labels = list(observations.get(grade_id, {})) if type(observations.get(grade_id)) is dict else []
        points = [point for point in map(observing.dimensions_of, labels) if point is not None]
        reached: dict[str, Counter[str]] = {}
        for point in points:
            for dimension, value in point.items():
                reached.setdefault(dimension, Counter())[value] += 1
        fixed = sum(rules.rule_of(label) is not None for label in labels)
        seeded = sum(label.startswith("seeded case ") for label in labels)
        found.append(Coverage(grade_id, declared, reached, fixed, seeded, len(points)))
    return found


def table(assignment: str, part: Coverage) -> str:
    """A part's coverage as text: a heading with its counts of cases, then a row per dimension value."""
    heading = (
        f"{assignment} {part.grade_id}: {part.generated} generated cases "
        f"(besides {part.fixed} fixed and {part.seeded} seeded)"
    )
    rows = [("  dimension", "value", "cases")]
    for dimension, values in part.declared.items():
        counts = part.reached.get(dimension, Counter())
        extra = [value for value in counts if value not in values]
        for number, value in enumerate([*values, *extra]):
            rows.append((f"  {dimension}" if number == 0 else "", value, str(counts[value])))
    return "\n".join([heading, format_table(rows)])


def assignment_coverage(assignment: str) -> list[Coverage]:
    """The coverage of an assignment's hidden tests, from the solution's observations on this machine (computed in
    the sandbox, or read from work/references/ when current)."""
    from grader.references import load_checks, solution_observations

    spaces = getattr(load_checks(assignment), "SPACES", {})
    return coverage(spaces, solution_observations(assignment))
