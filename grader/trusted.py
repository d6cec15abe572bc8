"""Trusted checking: each graded test cell's points from a comparison made outside the submission's process.

The submission's code cells, except the graded test cells, run in a fresh sandboxed child; there the assignment's
observers (grader/trusted_checks/<assignment>.py) call the submission's functions on the hidden inputs and send
back plain JSON. The instructor's solution goes through the same steps once per grading run. Here, in the grader,
the two are compared: equal observations earn the cell's points, anything else earns none.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from grader.course import CourseError, solutions
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook
from grader.sandbox import CellTimeout, ChildDied, Sandbox

CHECKS = Path(__file__).resolve().parent / "trusted_checks"


@dataclass(frozen=True)
class Verdict:
    """Trusted points per graded test cell, and for each cell that earned none, why."""

    points: dict[str, float]
    reasons: dict[str, str]


def has_trusted_check(assignment: str) -> bool:
    return (CHECKS / f"{assignment}.py").is_file()


class TrustedChecker:
    """The trusted check of one assignment, with the solution's observations computed once."""

    def __init__(self, assignment: str, sandbox: Sandbox) -> None:
        self.assignment, self.sandbox = assignment, sandbox
        [path] = assignment_notebooks(solutions() / assignment)
        self.source = read_notebook(path)
        self.test_points = {
            meta["grade_id"]: float(meta["points"])
            for _, _, meta in nbgrader_cells(self.source)
            if meta.get("grade") and not meta.get("solution")
        }
        self.request = {
            "op": "observe",
            "name": f"trusted_checks/{assignment}.py",
            "module": (CHECKS / f"{assignment}.py").read_text(encoding="utf-8"),
            "common": (CHECKS / "common.py").read_text(encoding="utf-8"),
        }
        self._reference: dict | None = None
        self._lock = threading.Lock()

    def reference(self) -> dict:
        """What the observers see of the instructor's solution (an error if the solution itself fails them)."""
        with self._lock:
            if self._reference is None:
                observations, problem = self.observe(self.code_to_run(self.source), every_cell_runs=True)
                missing = set(self.test_points) - set(observations)
                failed = {
                    key for key, seen in observations.items() if type(seen) is list and seen[:1] == ["observer failed"]
                }
                if problem or missing or failed:
                    why = problem or f"no observation of {sorted(missing | failed)}"
                    raise CourseError(f"{CHECKS.name}/{self.assignment}.py fails on the solution: {why}")
                self._reference = observations
            return self._reference

    def code_to_run(self, notebook: NotebookNode) -> list[str]:
        """The sources of the notebook's code cells, except the graded test cells."""
        return [
            cell.source
            for cell in notebook.cells
            if cell.cell_type == "code"
            and cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") not in self.test_points
        ]

    def observe(self, cells: list[str], every_cell_runs: bool = False) -> tuple[dict, str]:
        """Run these cells in a fresh child, then the observers: (observations, problem). With `every_cell_runs`
        (the instructor's solution), a cell that raises is a problem too."""
        with self.sandbox.child() as child:
            try:
                for number, source in enumerate(cells, 1):
                    ran = child.run(source)
                    if every_cell_runs and ran.get("success") is not True:
                        errors = [o for o in ran.get("outputs", []) if o.get("output_type") == "error"]
                        why = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else "no success"
                        return {}, f"code cell {number} failed ({why})"
                reply = child.request(self.request)
            except (ChildDied, CellTimeout) as error:
                return {}, str(error)
        observations = reply.get("observations")
        if type(observations) is not dict:
            return {}, "the check sent no observations"
        return observations, ""

    def check(self, cells: list[str]) -> Verdict:
        """The points each graded test cell earns by the trusted comparison, for these cells (code_to_run)."""
        reference = self.reference()
        observations, problem = self.observe(cells)
        points, reasons = {}, {}
        for grade_id, max_points in self.test_points.items():
            if grade_id in observations and agrees(observations[grade_id], reference[grade_id]):
                points[grade_id] = max_points
                continue
            points[grade_id] = 0.0
            reasons[grade_id] = problem or _difference(observations.get(grade_id), reference[grade_id])
        return Verdict(points, reasons)


def agrees(seen: object, expected: object) -> bool:
    """Whether an observation equals the solution's; numbers the solution marked {"approx": x, "rel_tol": r,
    "abs_tol": a} (grader.trusted_checks.common.approx) only need to be that close, by the solution's tolerances."""
    if type(expected) is dict and set(expected) == {"approx", "rel_tol", "abs_tol"}:
        number = seen.get("approx") if type(seen) is dict else None
        return type(number) in (int, float) and math.isclose(
            number, expected["approx"], rel_tol=expected["rel_tol"], abs_tol=expected["abs_tol"]
        )
    if type(expected) is list:
        return type(seen) is list and len(seen) == len(expected) and all(map(agrees, seen, expected))
    if type(expected) is dict:
        same_keys = type(seen) is dict and seen.keys() == expected.keys()
        return same_keys and all(agrees(seen[key], value) for key, value in expected.items())
    return seen == expected


def _difference(seen: object, expected: object) -> str:
    """Where an observation first differs from the solution's, without saying what the solution's is."""
    if type(seen) is list and type(expected) is list:
        for index, (mine, theirs) in enumerate(zip(seen, expected, strict=False)):
            if not agrees(mine, theirs):
                return f"case {index + 1} of {len(expected)} differs"
        return f"{len(seen)} cases observed, {len(expected)} expected"
    return "the observation differs" if seen is not None else "nothing was observed"
