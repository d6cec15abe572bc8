"""Exercise 6's self-check (the read-only cell `self_check`): chapter 6's differential test on the student's own
MiniModule, with the exercise's names; it agrees with nn.Module on the solution and finds a scripted mistake."""

from __future__ import annotations

import contextlib
import io
import runpy

import nbformat

from grader.course import mistakes_file
from tests.conftest import REPO

SOURCE = REPO / "solutions/ex06_minimodule/ex06_minimodule.ipynb"
RUN = ("imports", "parts", "mini_module", "trees", "self_check", "traversal", "attach_traversal", "state_dict",
       "attach_state_dict", "modes_and_hooks", "attach_modes_and_hooks")  # fmt: skip


def _self_check(mini_module: str | None = None) -> str:
    """The notebook's code cells up to part 4 run in a fresh namespace (`mini_module`: another part 1), then
    self_check() on 80 seeds: what it prints."""
    cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nbformat.read(SOURCE, 4).cells}
    namespace: dict = {}
    for grade_id in RUN:
        source = mini_module if grade_id == "mini_module" and mini_module else cells[grade_id]
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, grade_id, "exec"), namespace)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["self_check"](seeds=range(80))
    return printed.getvalue()


def test_the_solution_agrees_with_nn_module_on_every_sequence() -> None:
    said = _self_check()
    assert said.splitlines() == [
        "comparing your MiniModule with nn.Module on parts [1, 2, 3]",
        "0 of 80 seeded sequences disagree",
    ]


def test_a_routing_mistake_is_shown_as_its_shortest_sequence_in_the_exercises_names() -> None:
    answers = runpy.run_path(str(mistakes_file("ex06_minimodule")))["ANSWERS"]
    said = _self_check(answers["parameter_keeps_submodule"]["mini_module"])
    lines = said.splitlines()
    assert lines[1].endswith("seeded sequences disagree") and not lines[1].startswith("0 of")
    assert "the shortest: " in said and "  MiniModule: " in said and "DIFFERENT" in said
    assert "TinyModule" not in said
    assert any(line.startswith("    n0.a = a Parameter") for line in lines), said
