"""Mutation analysis: do an exercise's hidden tests kill every mutant of its solution that mutmut makes?

    .venv/bin/python benchmarks/mutation.py [--assignment ex07_changing_class | all] [--workers N]

The mutants come from mutmut 2.5.1 (pinned in requirements.txt), used as a library: `mutmut.list_mutations` lists
every mutation its operators make of one solution cell and `mutmut.mutate` applies one (numbers +1, strings 'XX..XX',
operators and comparisons swapped, `and`/`or`, `not` dropped, `in`/`not in`, True/False, an assignment's value or a
call's argument replaced by None, a decorator dropped, ...). Its command line is not used: it runs a cold test
command per mutant, seconds of torch import each. The killing is the grader's own: one warm sandbox for the run,
and per mutant one fresh child of it (a few tenths of a second) that runs the submission's cells, then the
exercise's observers, exactly as grading does (grader.trusted.TrustedChecker).

For each solution cell (nbgrader `solution: true`) of each exercise: the cell's answer is what a perfect student
types (grader.scripted.solution_answers: the cell without its marker lines). Only the code between `### BEGIN
SOLUTION` and `### END SOLUTION` is mutated when the cell has those markers, else only the bodies of its functions;
never a docstring. Each mutant is the full solution with that one cell replaced (grader.sample_class.submission on
the fresh release), run and observed in a child, and judged by the trusted check:

    killed      some graded test cell with a hidden-test block earns fewer points than the solution does (the row
                records the first such cell and why: its first differing case's label, or the run's problem);
    invalid     the mutated cell does not compile (killed by definition);
    timeout     a cell or the observers ran past the time limit (killed by definition);
    survived    every hidden test cell earns its full points: either the mutant is equivalent to the solution (it
                must then be listed, with the reason, in solutions/<assignment>/equivalent_mutants.txt), or the
                hidden tests have a gap.

A mutant's identifier, used in the equivalence lists, is stable across runs and unaffected by edits elsewhere in
the notebook or cell (no line numbers): the solution cell's grade_id; the changed code as it is in the solution
(the lines from the first to the last one the mutation changes, without their comments, joined by single spaces,
every run of whitespace made one space); which occurrence of that code in the cell it is (1 for the first: the same
text may stand twice in one cell); and the mutated code, written the same way ('' where the mutation deletes the lines).
solutions/<assignment>/equivalent_mutants.txt holds one line per equivalent mutant, five fields separated by tabs:

    grade_id <TAB> occurrence <TAB> original code <TAB> mutated code <TAB> reason (one line)

Lines that are empty or start with '#' are comments. Every unexplained survivor is printed with the line to paste
there (reason '?'). The file is never released (CourseDirectory.ignore in grader/nbgrader_config.py).

Output: one row per exercise (mutants made, killed, invalid, timeout, survived, equivalent survivors, unexplained
survivors, wall seconds), then every unexplained survivor as `exNN grade_id line: original -> mutated`, and the
list entries that are wrong: a listed mutant that is killed (so it is not equivalent) or that mutmut no longer makes
(the solution changed). Exit status 1 when any survivor is unexplained or any list entry is wrong or malformed.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import sys
import tempfile
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import mutmut
from nbformat import NotebookNode

from grader.course import CourseError, assignment_names, relative, solutions
from grader.notebooks import assignment_notebooks, hidden_test_ids, nbgrader_cells, read_notebook
from grader.release import fresh_release
from grader.sample_class import submission
from grader.sandbox import CellTimeout, Limits, Sandbox, start_sandbox
from grader.scripted import MARKERS, solution_answers
from grader.trusted import TrustedChecker, cells_to_run

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
LIST_NAME = "equivalent_mutants.txt"


@dataclass(frozen=True)
class Mutant:
    """One mutant of one solution cell: its identifier (grade_id, occurrence, original, mutated), the line where the
    change starts (1-based, in the answer: for reading only) and the mutated answer."""

    grade_id: str
    occurrence: int
    original: str
    mutated: str
    line: int
    answer: str

    @property
    def key(self) -> tuple[str, int, str, str]:
        return (self.grade_id, self.occurrence, self.original, self.mutated)

    def describe(self, assignment: str) -> str:
        return f"{assignment[:4]} {self.grade_id} {self.line}: {self.original} -> {self.mutated or '(deleted)'}"

    def list_line(self, reason: str = "?") -> str:
        return "\t".join([self.grade_id, str(self.occurrence), self.original, self.mutated, reason])


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str  # killed, invalid, timeout or survived
    cell: str = ""  # the first hidden test cell that lost points
    why: str = ""  # its first differing case's label, or the run's problem


def normal(lines: list[str]) -> str:
    """Lines as one identifier text: each stripped, joined by a space, every run of whitespace one space."""
    return re.sub(r"\s+", " ", " ".join(line.strip() for line in lines)).strip()


def code_lines(source: str) -> list[str]:
    """A source's lines with their comments left out (an identifier does not change when a comment does)."""
    lines = source.splitlines()
    for token in reversed(list(tokenize.generate_tokens(io.StringIO(source).readline))):
        if token.type == tokenize.COMMENT:
            (row, start), (_, end) = token.start, token.end
            lines[row - 1] = lines[row - 1][:start] + lines[row - 1][end:]
    return lines


def answer_and_region(cell_source: str) -> tuple[str, set[int]]:
    """A solution cell's answer (the source without its marker lines) and the answer's lines (1-based) that may
    be mutated: those between the markers, else those of function bodies; docstrings never."""
    answer_lines, region, inside, markers = [], set(), False, False
    for line in cell_source.splitlines():
        if line.strip() in MARKERS:
            inside, markers = line.strip() == BEGIN, True
            continue
        answer_lines.append(line)
        if inside:
            region.add(len(answer_lines))
    answer = "\n".join(answer_lines)
    tree = ast.parse(answer)
    if not markers:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                region |= set(range(node.body[0].lineno, node.body[-1].end_lineno + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and type(first.value.value) is str:
                region -= set(range(first.lineno, first.end_lineno + 1))
    return answer, region


def cell_mutants(grade_id: str, cell_source: str) -> list[Mutant]:
    """Every mutant mutmut makes of a solution cell whose changed lines all lie in its mutable region."""
    answer, region = answer_and_region(cell_source)
    before, code_before = answer.splitlines(), code_lines(answer)
    made = []
    for mutation_id in mutmut.list_mutations(mutmut.Context(source=answer)):
        mutated, _ = mutmut.mutate(mutmut.Context(source=answer, mutation_id=mutation_id))
        after, code_after = mutated.splitlines(), code_lines(mutated)
        start = 0
        while start < min(len(before), len(after)) and before[start] == after[start]:
            start += 1
        end = 0  # lines equal at the end, after `start`
        while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
            end += 1
        changed = range(start + 1, len(before) - end + 1)
        if not changed or not set(changed) <= region:
            continue
        original = normal(code_before[start : len(before) - end])
        width = len(changed)
        occurrence = 1 + sum(normal(code_before[earlier : earlier + width]) == original for earlier in range(start))
        replaced = normal(code_after[start : len(after) - end])
        made.append(Mutant(grade_id, occurrence, original, replaced, start + 1, mutated))
    return made


def solution_mutants(source: NotebookNode) -> list[Mutant]:
    """Every mutant of every solution cell of a source notebook."""
    return [
        mutant
        for _, cell, meta in nbgrader_cells(source)
        if meta.get("solution") and cell.cell_type == "code"
        for mutant in cell_mutants(meta["grade_id"], cell.source)
    ]


def read_list(assignment: str) -> tuple[dict[tuple[str, int, str, str], str], list[str]]:
    """The exercise's equivalent mutants ({key: reason}) and the problems of its list's lines."""
    path = solutions() / assignment / LIST_NAME
    listed, problems = {}, []
    if not path.is_file():
        return listed, problems
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 5 or not fields[1].isdigit() or not fields[4].strip() or fields[4].strip() == "?":
            problems.append(f"{relative(path)}:{number}: not grade_id, occurrence, original, mutated, reason")
            continue
        grade_id, occurrence, original, mutated, reason = fields
        listed[(grade_id, int(occurrence), original, mutated)] = reason.strip()
    return listed, problems


class Harness:
    """The mutants of one exercise, judged in a sandbox by the trusted check."""

    def __init__(self, assignment: str, sandbox: Sandbox, release: NotebookNode | None = None) -> None:
        self.assignment = assignment
        [path] = assignment_notebooks(solutions() / assignment)
        self.source = read_notebook(path)
        self.release = release if release is not None else fresh_release(assignment)[path.name]
        self.answers = solution_answers(self.source)
        self.checker = TrustedChecker(assignment, sandbox)
        self.hidden = sorted(hidden_test_ids(self.source) & set(self.checker.test_points))
        if not self.hidden:
            raise CourseError(f"{assignment}: no graded test cell with a hidden-test block")

    def mutants(self) -> list[Mutant]:
        return solution_mutants(self.source)

    def judge(self, grade_id: str, answer: str) -> tuple[str, str, str]:
        """(status, cell, why) of the solution with this one cell's answer replaced."""
        try:
            compile(answer, f"<{grade_id}>", "exec")
        except (SyntaxError, ValueError) as error:
            return "invalid", grade_id, f"does not compile: {error}"
        cells = cells_to_run(submission(self.release, {**self.answers, grade_id: answer}))
        observations, problem, kind = self.checker.observe(cells)
        if kind == CellTimeout.kind:
            return "timeout", "", problem
        verdict = self.checker.verdict(observations, problem, kind)
        for cell in self.hidden:
            if verdict.points[cell] < self.checker.test_points[cell]:
                return "killed", cell, verdict.reasons[cell]
        return "survived", "", ""

    def outcome(self, mutant: Mutant) -> Outcome:
        return Outcome(mutant, *self.judge(mutant.grade_id, mutant.answer))


def analyse(assignment: str, sandbox: Sandbox, workers: int, verbose: bool = False) -> tuple[list[str], bool]:
    """Run every mutant of one exercise: (the lines to print, whether all is explained)."""
    started = time.perf_counter()
    harness = Harness(assignment, sandbox)
    harness.checker.reference()  # once, before the threads
    # The harness itself first: the unmutated solution, built and judged as every mutant is, must survive.
    grade_id = next(iter(harness.answers))
    status, cell, why = harness.judge(grade_id, harness.answers[grade_id])
    if status != "survived":
        return [f"{assignment}: the solution itself does not survive the harness: {status} {cell} {why}"], False
    mutants = harness.mutants()
    with ThreadPoolExecutor(workers) as pool:
        outcomes = list(pool.map(harness.outcome, mutants))
    seconds = time.perf_counter() - started
    listed, problems = read_list(assignment)
    count = {status: sum(o.status == status for o in outcomes) for status in ("killed", "invalid", "timeout")}
    survivors = [o.mutant for o in outcomes if o.status == "survived"]
    equivalent = [m for m in survivors if m.key in listed]
    unexplained = [m for m in survivors if m.key not in listed]
    made = {m.key for m in mutants}
    wrongly_listed = [o.mutant for o in outcomes if o.status != "survived" and o.mutant.key in listed]
    problems += [f"{assignment}: listed as equivalent but killed: {m.describe(assignment)}" for m in wrongly_listed]
    problems += [
        f"{assignment}: listed as equivalent but no longer made: {'  '.join(map(str, key))}"
        for key in listed
        if key not in made
    ]
    row = (
        f"{assignment:<22} {len(mutants):>6} {count['killed']:>6} {count['invalid']:>7} {count['timeout']:>7} "
        f"{len(survivors):>8} {len(equivalent):>10} {len(unexplained):>11} {seconds:>8.1f}"
    )
    details = [f"  unexplained: {m.describe(assignment)}\n    paste: {m.list_line()}" for m in unexplained]
    if verbose:
        details += [
            f"  {o.status}: {o.mutant.describe(assignment)}" + (f"  [{o.cell}: {o.why}]" if o.cell else "")
            for o in outcomes
        ]
    return [row, *details, *(f"  {problem}" for problem in problems)], not unexplained and not problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="all", help="an assignment, or all (the default)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="mutants judged at once")
    parser.add_argument("--cell-seconds", type=float, default=60.0, help="a cell's time limit (a mutant may loop)")
    parser.add_argument("--verbose", action="store_true", help="also print every mutant's outcome")
    args = parser.parse_args()
    assignments = assignment_names() if args.assignment == "all" else assignment_names([args.assignment])
    print(f"mutmut {mutmut.__version__} mutants, killed by the hidden tests; {args.workers} workers")
    header = ("assignment", "made", "killed", "invalid", "timeout", "survived", "equivalent", "unexplained", "seconds")
    print(
        f"{header[0]:<22} {header[1]:>6} {header[2]:>6} {header[3]:>7} {header[4]:>7} {header[5]:>8} "
        f"{header[6]:>10} {header[7]:>11} {header[8]:>8}"
    )
    limits = Limits(cell_seconds=args.cell_seconds, notebook_seconds=max(args.cell_seconds * 4, 300.0))
    clean = True
    with tempfile.TemporaryDirectory(prefix="grader-mutation-") as scratch:
        with start_sandbox(Path(scratch), args.workers, limits) as sandbox:
            for assignment in assignments:
                lines, explained = analyse(assignment, sandbox, args.workers, args.verbose)
                print("\n".join(lines), flush=True)
                clean = clean and explained
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
