"""Trusted checking: each graded test cell's points from a comparison made outside the submission's process.

The submission's code cells run in a fresh sandboxed child (a hidden-test cell without its hidden block, as the
execute step runs them); then, in the same child, the exercise's observers (solutions/<assignment>/checks.py) call
the submission's functions on the hidden inputs and send back plain JSON. The instructor's solution goes through
the same steps once per grading run. Here, in the grader, the two are compared: equal observations earn the cell's
points, anything else earns none. What this protects, and what not: docs/sandbox.md.
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from grader import observing
from grader.course import CourseError, checks_file, relative, solutions
from grader.hidden_tests import has_hidden_block, runnable
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook
from grader.sandbox import CellTimeout, Child, ChildDied, Sandbox, SandboxFailure
from grader.sandboxed_execute import GRADING_ENV

NO_OBSERVATION = "no observation: "  # how a cell's mistake begins where no case could be compared
WHOLE = "the observation as a whole"  # a cell's mistake where the observation's shape is not the solution's


@dataclass(frozen=True)
class Verdict:
    """Trusted points per graded test cell, and for each cell that earned none, why: `reasons` without the
    solution's observations (for statuses), `messages` with the first differing case, what the solution's
    observation is there and what came back (for the student, as the generated hidden tests say it), `mistakes`
    the label of the first differing case alone, or the kind of problem, in the course's words only (for the
    class's common mistakes)."""

    points: dict[str, float]
    reasons: dict[str, str]
    messages: dict[str, str]
    mistakes: dict[str, str]


def has_trusted_check(assignment: str) -> bool:
    return checks_file(assignment).is_file()


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
            "name": relative(checks_file(assignment)),
            "module": checks_file(assignment).read_text(encoding="utf-8"),
            "helpers": Path(observing.__file__).read_text(encoding="utf-8"),
            "replay": replay_steps(self.source),
        }
        self.visible = {step["grade_id"] for step in self.request["replay"] if "grade_id" in step}
        self.must_not = must_not_rules(self.request["module"])
        self.request["single_process"] = bool(self.must_not)  # the child starts no process while observed (guard)
        self._reference: dict | None = None
        self._lock = threading.Lock()

    def warm_sandbox(self) -> None:
        """Have the sandbox's warm server run the checks' `warm_up()` once, if they define one (see warm_up_source);
        CourseError if it fails there."""
        source = warm_up_source(self.request["module"])
        if source:
            try:
                self.sandbox.warm_up(source)
            except SandboxFailure as failure:
                raise CourseError(f"{self.request['name']}: its warm_up failed in the sandbox ({failure})") from None

    def reference(self) -> dict:
        """What the observers see of the instructor's solution (an error if the solution itself fails them)."""
        with self._lock:
            if self._reference is None:
                observations, problem, _ = self.observe(cells_to_run(self.source), every_cell_runs=True)
                missing = set(self.test_points) - set(observations)
                failed = {
                    key
                    for key, seen in observations.items()
                    if type(seen) is list
                    and seen[:1] == ["observer failed"]
                    or key in self.visible
                    and observing.visible_failure(seen) is not None
                }
                if problem or missing or failed:
                    why = problem or f"no observation of {sorted(missing | failed)}"
                    raise CourseError(f"{self.request['name']} fails on the solution: {why}")
                self._reference = observations
            return self._reference

    def observe(self, cells: list[str], every_cell_runs: bool = False) -> tuple[dict, str, str]:
        """Run these cells in a fresh child, then the observers: (observations, problem, the problem's kind). With
        `every_cell_runs` (the instructor's solution), a cell that raises is a problem too."""
        with self.sandbox.child(env=GRADING_ENV) as child:
            try:
                for number, source in enumerate(cells, 1):
                    ran = child.run(source)
                    if every_cell_runs and ran.get("success") is not True:
                        errors = [o for o in ran.get("outputs", []) if o.get("output_type") == "error"]
                        why = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else "no success"
                        return {}, f"code cell {number} failed ({why})", "a cell of the solution failed"
            except (ChildDied, CellTimeout) as error:
                return {}, str(error), error.kind
            return self.observe_in(child)

    def observe_in(self, child: Child) -> tuple[dict, str, str]:
        """The observers, in a child that has run a notebook's cells: (observations, problem, the problem's kind)."""
        try:
            reply = child.request(self.request)
        except (ChildDied, CellTimeout) as error:
            return {}, str(error), error.kind
        observations = reply.get("observations")
        if type(observations) is not dict:
            return {}, "the check sent no observations", "the check sent none"
        return observations, "", ""

    def verdict(self, observations: dict, problem: str, problem_kind: str) -> Verdict:
        """The points each graded test cell earns by comparing these observations with the solution's (`problem`:
        why there are none, '' if there are; `problem_kind`: its kind, the same for every submission with it)."""
        reference = self.reference()
        points, reasons, messages, mistakes = {}, {}, {}, {}
        for grade_id, max_points in self.test_points.items():
            seen, expected = observations.get(grade_id), reference[grade_id]
            if grade_id in self.visible and seen is not None and not problem:
                failure = observing.visible_failure(seen)
                points[grade_id] = 0.0 if failure else max_points
                if failure:  # the check in the course's words for statuses and the class; the values for the student
                    reasons[grade_id] = mistakes[grade_id] = failure[0]
                    messages[grade_id] = "\n  ".join(part for part in failure if part)
                continue
            if seen is not None and not problem and observing.agrees(seen, expected):
                points[grade_id] = max_points
                continue
            points[grade_id] = 0.0
            reasons[grade_id] = problem or _difference(seen, expected)
            explained = observing.explain(seen, expected) if seen is not None else ""
            messages[grade_id] = problem or explained or reasons[grade_id]
            mistakes[grade_id] = NO_OBSERVATION + problem_kind if problem else mistake(seen, expected)
        for hidden, (clauses, others) in self.must_not.items():
            broken = broken_rule(observations.get(hidden), reference[hidden], clauses)
            for grade_id in others if broken and not problem else ():
                points[grade_id] = 0.0
                reasons[grade_id] = mistakes[grade_id] = f'{hidden}: {broken} (a "must not" of the part)'
                messages[grade_id] = f"{hidden}: {broken}, so the part earns nothing"
        return Verdict(points, reasons, messages, mistakes)

    def failed(self, reason: str) -> Verdict:
        """The verdict when the check itself could not be made: no points for any cell, and why."""
        every = dict.fromkeys(self.test_points, reason)
        mistakes = dict.fromkeys(self.test_points, f"{NO_OBSERVATION}the trusted check failed")
        return Verdict(dict.fromkeys(self.test_points, 0.0), every, dict(every), mistakes)


def warm_up_source(checks_source: str) -> str:
    """The text of the checks' `warm_up` function alone ('' if they have none), for the warm server to run before
    it forks (grader.sandbox.Sandbox.warm_up): it imports what it uses, runs no solution code and touches no
    submission; it readies what torch does once per process on first use, so no child pays for it."""
    tree = ast.parse(checks_source)
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "warm_up"]
    return ast.get_source_segment(checks_source, found[0]) if found else ""


def must_not_rules(checks_source: str) -> dict[str, tuple[tuple[int, ...], tuple[str, ...]]]:
    """The checks' `MUST_NOT`, a literal {hidden test cell: (its "must not" clauses, the other test cells of its
    part)} ({} without one): when a fixed case of one of those clauses differs from the solution's, the part's other
    test cells earn nothing either (a shortcut that the contract forbids earns nothing)."""
    for node in ast.parse(checks_source).body:
        if isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] == ["MUST_NOT"]:
            rules = ast.literal_eval(node.value)
            return {hidden: (tuple(map(int, clauses)), tuple(others)) for hidden, (clauses, others) in rules.items()}
    return {}


def broken_rule(seen: object, expected: object, clauses: tuple[int, ...]) -> str:
    """'<label> differs' for the first fixed case of one of `clauses` whose observation differs from the solution's
    ('' if none, or if the observation has no cases: the hidden cell's own verdict says why)."""
    if type(seen) is not dict or type(expected) is not dict:
        return ""
    return next(
        (
            f"{label} differs"
            for label, theirs in expected.items()
            if observing.clause_of(label) in clauses and not observing.agrees(seen.get(label), theirs)
        ),
        "",
    )


def cells_to_run(notebook: NotebookNode) -> list[str]:
    """What a child runs of a notebook before the observers: every code cell, a hidden-test cell without its hidden
    block, as the execute step runs them."""
    return [runnable(cell, hidden_elsewhere=True) for cell in notebook.cells if cell.cell_type == "code"]


def replay_steps(notebook: NotebookNode) -> list[dict]:
    """What observing.replay runs of a source notebook, code cell by code cell: a solution cell's names taken from
    the submission, a visible test cell observed, every other cell (hidden-test cells without their block) run."""
    steps: list[dict] = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            steps.append({"take": defined_names(cell.source)})
        elif meta.get("grade") and not has_hidden_block(cell.source):
            steps.append({"run": cell.source, "grade_id": meta["grade_id"]})
        else:
            steps.append({"run": runnable(cell, hidden_elsewhere=True)})
    return steps


def defined_names(source: str) -> list[str]:
    """The names a cell's top-level statements bind: def, class, assignment targets, imports."""
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names += [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return list(dict.fromkeys(names))


def mistake(seen: object, expected: object) -> str:
    """A cell's mistake for the class's common mistakes: the label of the first case where an observation differs
    from the solution's (observing.first_case: "case 3 of 101", "clause 2: an LSTM's nested output"), without the
    path inside the case; the kind of problem where no case can be compared. Only the
    solution's labels and the grader's words: never text of the submission's."""
    label = observing.first_case(seen, expected)
    if label is not None:
        return label
    if seen is None:
        return f"{NO_OBSERVATION}nothing was observed"
    if type(seen) is list and seen[:1] == ["observer failed"]:
        return f"{NO_OBSERVATION}the observer failed"
    if type(seen) is list and seen[:1] == ["stopped"]:
        return "the check stopped (an exception)"
    return WHOLE


def _difference(seen: object, expected: object) -> str:
    """Where an observation first differs from the solution's, without saying what the solution's is."""
    if seen is None:
        return "nothing was observed"
    label, _, _ = observing.first_difference(seen, expected)
    return f"{label} differs" if label else "the observation differs"
