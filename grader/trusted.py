"""Trusted checking: each graded test cell's points from a comparison made outside the submission's process.

The submission's code cells run in a fresh sandboxed child (a hidden-test cell without its hidden block, as the
execute step runs them); then, in the same child, the exercise's observers (solutions/<assignment>/checks.py) call
the submission's functions on the hidden inputs and send back plain JSON. The instructor's solution goes through
the same steps once per grading run. Here, in the grader, the two are compared: a visible test cell earns its points
when every check of it holds; a hidden test cell earns a share of its points for each rule of its part that holds
(grader.rules has the policy), nothing while its own visible lines fail. What this protects, and what not:
docs/sandbox.md.
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from nbformat import NotebookNode

from grader import observing, rules
from grader.course import CourseError, checks_file, relative, solutions
from grader.hidden_tests import has_hidden_block, runnable
from grader.notebooks import assignment_notebooks, nbgrader_cells, read_notebook
from grader.sandbox import CellTimeout, Child, ChildDied, Sandbox, SandboxFailure
from grader.sandboxed_execute import GRADING_ENV

NO_OBSERVATION = "no observation: "  # how a cell's mistake begins where no case could be compared
# How a part's other test cells record a broken "must not" rule of its hidden cell (grader.common_mistakes reads it).
MUST_NOT_REASON = '{hidden}: rule {rule} broken (a "must not" of the part)'
MUST_NOT_REASON_PATTERN = re.compile(
    re.escape(MUST_NOT_REASON).replace(r"\{hidden\}", r"(?P<hidden>\w+)").replace(r"\{rule\}", r"(?P<rule>\d+)")
)
WHOLE = "the observation as a whole"  # a cell's mistake where the observation's shape is not the solution's


@dataclass(frozen=True)
class Verdict:
    """Trusted points per graded test cell, and for each cell that earned less than its points, why: `reasons`
    without the solution's observations (for statuses), `messages` with each broken rule's first differing case,
    what the solution's observation is there and what came back (for the student, as the generated hidden tests say
    it), `mistakes` each broken rule by its number and name, or the kind of problem, in the course's words only (for
    the class's common mistakes)."""

    points: dict[str, float]
    reasons: dict[str, str]
    messages: dict[str, str]
    mistakes: dict[str, list[str]]


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
        self.rules = part_rules(self.request["module"])
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
                missing = (set(self.test_points) | self.visible) - set(observations)
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
        verdict = Verdict({}, {}, {}, {})
        judgements = {}
        for grade_id, max_points in self.test_points.items():
            seen = observations.get(grade_id)
            if problem or seen is None:
                result = _unobserved(problem, problem_kind)
            elif grade_id in self.visible:
                result = _visible(seen, max_points)
            else:
                judgements[grade_id] = self.judge(grade_id, seen)
                result = _hidden(judgements[grade_id], observations.get(visible_lines(grade_id)))
            _record(verdict, grade_id, max_points, result)
        for hidden, judgement in judgements.items():
            if judgement.forbidden:
                self._take_part(verdict, hidden, judgement)
        return verdict

    def judge(self, grade_id: str, seen: object) -> rules.Judgement:
        """A hidden test cell's observation judged rule by rule against the solution's (grader.rules)."""
        must_not = self.must_not.get(grade_id, ((), ()))[0]
        part = self.rules.get(grade_id, {})
        return rules.judge(seen, self.reference()[grade_id], part, self.test_points[grade_id], must_not)

    def _take_part(self, verdict: Verdict, hidden: str, judgement: rules.Judgement) -> None:
        """A broken "must not" rule of the part `hidden` tests: its other test cells earn nothing either."""
        rule = judgement.forbidden[0]
        reason = MUST_NOT_REASON.format(hidden=hidden, rule=rule)
        message = f"{judgement.rule_name(rule)} is broken (see the part's hidden tests), so the part earns nothing"
        for grade_id in self.must_not[hidden][1]:
            _record(verdict, grade_id, self.test_points[grade_id], CellResult(0.0, reason, message, (reason,)))

    def failed(self, reason: str) -> Verdict:
        """The verdict when the check itself could not be made: no points for any cell, and why."""
        every = dict.fromkeys(self.test_points, reason)
        mistakes = {grade_id: [f"{NO_OBSERVATION}the trusted check failed"] for grade_id in self.test_points}
        return Verdict(dict.fromkeys(self.test_points, 0.0), every, dict(every), mistakes)


class CellResult(NamedTuple):
    """What one graded test cell came to: its points, and where they fall short, why (as Verdict says it)."""

    points: float
    reason: str = ""
    message: str = ""
    mistakes: tuple[str, ...] = ()


def _record(verdict: Verdict, grade_id: str, max_points: float, result: CellResult) -> None:
    """Put one cell's result into the verdict: its points, and why wherever it earned less than `max_points`."""
    verdict.points[grade_id] = result.points
    for found in (verdict.reasons, verdict.messages, verdict.mistakes):
        found.pop(grade_id, None)
    if result.points < max_points:
        verdict.reasons[grade_id], verdict.messages[grade_id] = result.reason, result.message or result.reason
        verdict.mistakes[grade_id] = list(result.mistakes)


def _unobserved(problem: str, problem_kind: str) -> CellResult:
    """A cell with no observation: nothing earned."""
    why = problem or "nothing was observed"
    return CellResult(0.0, why, why, (NO_OBSERVATION + (problem_kind if problem else why),))


def _visible(seen: object, max_points: float) -> CellResult:
    """A visible test cell: its points when every check of it holds (observing.visible_failure), else none, with the
    check in the course's words (for statuses and the class) and the submission's values (for the student)."""
    failure = observing.visible_failure(seen)
    if failure is None:
        return CellResult(max_points)
    return CellResult(0.0, failure[0], "\n  ".join(part for part in failure if part), (failure[0],))


def _hidden(judgement: rules.Judgement, lines_seen: object) -> CellResult:
    """A hidden test cell: its rules' shares (grader.rules), none while its own visible lines fail (as a notebook
    that runs them gives none). Where they fail on a check, every broken rule is said too; where they stop with an
    exception (a part not attempted, or code that raises), that alone."""
    lines = observing.visible_failure(lines_seen)
    if lines is None:
        return CellResult(judgement.points, judgement.reason(), judgement.message(), tuple(judgement.mistakes()))
    said = [f"its visible lines fail, so this cell earns nothing until they pass: {lines[0]}"]
    said += [f"  {detail}" for detail in lines[1:] if detail]
    broken = judgement.mistakes() if lines[0] != observing.STOPPED else []
    if broken:
        said.append(judgement.message())
    return CellResult(0.0, f"its visible lines fail: {lines[0]}", "\n".join(said), (lines[0], *broken))


def warm_up_source(checks_source: str) -> str:
    """The text of the checks' `warm_up` function alone ('' if they have none), for the warm server to run before
    it forks (grader.sandbox.Sandbox.warm_up): it imports what it uses, runs no solution code and touches no
    submission; it readies what torch does once per process on first use, so no child pays for it."""
    tree = ast.parse(checks_source)
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "warm_up"]
    return ast.get_source_segment(checks_source, found[0]) if found else ""


def part_rules(checks_source: str) -> dict[str, dict[int, str]]:
    """The checks' `CLAUSES`, a literal {hidden test cell: {number of a rule of its part's contract: its short name}}
    ({} without one)."""
    return {hidden: dict(numbered) for hidden, numbered in _literal(checks_source, "CLAUSES", {}).items()}


def must_not_rules(checks_source: str) -> dict[str, tuple[tuple[int, ...], tuple[str, ...]]]:
    """The checks' `MUST_NOT`, a literal {hidden test cell: (its "must not" rules, the other test cells of its part)}
    ({} without one): when one of those rules is broken, the hidden cell and the part's other test cells earn nothing
    (a shortcut that the contract forbids earns nothing)."""
    rules = _literal(checks_source, "MUST_NOT", {})
    return {hidden: (tuple(map(int, numbers)), tuple(others)) for hidden, (numbers, others) in rules.items()}


def _literal(checks_source: str, name: str, default: object) -> object:
    """The value of a top-level `name = <literal>` of the checks, read without running them."""
    for node in ast.parse(checks_source).body:
        if isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] == [name]:
            return ast.literal_eval(node.value)
    return default


def cells_to_run(notebook: NotebookNode) -> list[str]:
    """What a child runs of a notebook before the observers: every code cell, a hidden-test cell without its hidden
    block, as the execute step runs them."""
    return [runnable(cell, hidden_elsewhere=True) for cell in notebook.cells if cell.cell_type == "code"]


def replay_steps(notebook: NotebookNode) -> list[dict]:
    """What observing.replay runs of a source notebook, code cell by code cell: a solution cell's names taken from
    the submission, a visible test cell observed, a hidden-test cell's visible lines observed (under
    `visible_lines`), every other cell run."""
    steps: list[dict] = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            steps.append({"take": defined_names(cell.source)})
        elif meta.get("grade") and has_hidden_block(cell.source):
            steps.append({"run": runnable(cell, hidden_elsewhere=True), "grade_id": visible_lines(meta["grade_id"])})
        elif meta.get("grade"):
            steps.append({"run": cell.source, "grade_id": meta["grade_id"]})
        else:
            steps.append({"run": runnable(cell, hidden_elsewhere=True)})
    return steps


def visible_lines(grade_id: str) -> str:
    """The key of a hidden-test cell's visible lines among the observations (replay_steps)."""
    return f"{grade_id}: its visible lines"


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
