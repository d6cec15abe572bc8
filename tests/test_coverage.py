"""Input spaces (issue 28): the bounded-exhaustive generators of grader.observing, the labels that carry each generated
case's dimension values, and the coverage table `python -m grader coverage` prints from a course's observations. That
every real part declares its space and reaches each value is proven in tests/test_clauses.py, on the references it
computes anyway."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from grader import observing, references, rules
from grader.coverage import Coverage, coverage, table
from tests.conftest import grader


def test_every_combination_comes_smallest_first() -> None:
    points = observing.every({"a": ["0", "1", "2"], "b": ["x", "y"]})
    assert len(points) == 6 and points[0] == {"a": "0", "b": "x"}
    unusual = [sum(value not in ("0", "x") for value in point.values()) for point in points]
    assert unusual == sorted(unusual) and points[-1] == {"a": "2", "b": "y"}
    pairs = observing.every({"a": ["0", "1"], "b": ["x", "y"], "c": ["p", "q"]}, most=1)
    assert pairs == [
        {"a": "0", "b": "x", "c": "p"},
        {"a": "0", "b": "x", "c": "q"},
        {"a": "0", "b": "y", "c": "p"},
        {"a": "1", "b": "x", "c": "p"},
    ]


def test_a_generated_case_is_labelled_with_its_values() -> None:
    cases = [({"registry": "buffer", "persistent": "no"}, "a drawing", (2,)), ({"registry": "parameter"}, "", (3,))]
    seen = observing.labelled(*observing.spanned(cases, lambda n: n * 10))
    assert list(seen.items()) == [
        ("combination 1 of 2: registry=buffer, persistent=no; a drawing", 20),
        ("combination 2 of 2: registry=parameter", 30),
    ]
    assert [observing.dimensions_of(label) for label in seen] == [
        {"registry": "buffer", "persistent": "no"},
        {"registry": "parameter"},
    ]
    assert observing.dimensions_of("seeded case 1 of 2") is None and rules.rule_of(list(seen)[0]) is None
    with pytest.raises(ValueError, match="holds ',', ';' or '='"):
        observing.spanned([({"value": "a, b"}, "", ())], lambda: None)


def test_the_module_graphs_are_every_small_shape_once() -> None:
    found = observing.graphs(4, 4)
    assert len(found) == len(set(found)) == 183
    assert found[0] == ((),)  # the plainest: a module alone
    sizes = [(len(graph), sum(map(len, graph))) for graph in found]
    assert sizes == sorted(sizes)
    reached: dict[str, set[str]] = {}
    for graph in found:
        assert sum(map(len, graph)) <= 4 and len(graph) <= 4
        for dimension, value in observing.graph_dimensions(graph).items():
            reached.setdefault(dimension, set()).add(value)
    assert reached == {dimension: set(values) for dimension, values in observing.GRAPH_SPACE.items()}


def test_the_dimensions_of_a_graph() -> None:
    # apply()'s worked example of ex08: a layer shared by two blocks, a ReLU, a None slot.
    shared_by_blocks = ((1, 2), (3, 4), (3, None), (), ())
    assert observing.graph_dimensions(shared_by_blocks) == {
        "modules": "5",
        "depth": "2",
        "None children": "1",
        "twice in a parent": "no",
        "under two parents": "yes",
        "inside a shared module": "no",
    }
    block_twice = ((1, 1), (2,), ())  # a block registered twice in one parent: its layer reached along two paths
    assert observing.graph_dimensions(block_twice) == {
        "modules": "3",
        "depth": "2",
        "None children": "0",
        "twice in a parent": "yes",
        "under two parents": "no",
        "inside a shared module": "yes",
    }
    assert observing.drawn(block_twice) == "graph 0>1,1 1>2" and observing.drawn(((),)) == "graph 0"
    names = observing.built(block_twice, lambda node, children: (node, children))
    assert names[0] == (0, [names[1], names[1]]) and names[1] == (1, [names[2]])


def _coverage(observation: dict) -> Coverage:
    [part] = coverage({"test_x": {"kind": ["plain", "odd"], "size": ["one", "many"]}}, {"test_x": observation})
    return part


def test_the_table_counts_the_cases_per_value_and_names_what_is_missing() -> None:
    observation = {
        "rule 1: a fixed case": 1,
        "combination 1 of 2: kind=plain, size=one": 1,
        "combination 2 of 2: kind=plain, size=many; drawn": 1,
        "seeded case 1 of 1": 1,
    }
    part = _coverage(observation)
    assert (part.fixed, part.seeded, part.generated) == (1, 1, 2)
    assert part.problems() == ["test_x: no generated case has kind=odd"]
    assert table("exnn", part).splitlines() == [
        "exnn test_x: 2 generated cases (besides 1 fixed and 1 seeded)",
        "  dimension  value  cases",
        "  kind       plain  2",
        "             odd    0",
        "  size       one    1",
        "             many   1",
    ]
    stray = _coverage({"combination 1 of 1: kind=odd, size=one, depth=3": 1})
    assert stray.problems()[-1] == "test_x: a generated case has depth=3, which SPACES does not declare"


@pytest.mark.parametrize(("declared", "code"), [(["none"], 0), (["none", "some"], 1)])
def test_the_coverage_command_prints_each_part_and_fails_on_a_value_not_reached(
    toy_course: Path, monkeypatch: pytest.MonkeyPatch, declared: list[str], code: int
) -> None:
    """The command reads the checks' SPACES and the solution's observations (here stand-ins: computing them is
    grader.references' business, proven elsewhere)."""
    spaces = {"test_answer": {"calls": ["one", "two"], "argument": declared}}
    cases = [(point, "", ()) for point in observing.every({"calls": ["one", "two"], "argument": ["none"]})]
    observations = {"test_answer": observing.labelled(*observing.spanned(cases, lambda: 42))}
    monkeypatch.setattr(references, "load_checks", lambda assignment: SimpleNamespace(SPACES=spaces))
    monkeypatch.setattr(references, "solution_observations", lambda assignment: observations)
    run = grader("coverage", "extoy", root=toy_course)
    assert run.returncode == code, run.stderr
    assert run.stdout.splitlines()[:4] == [
        "extoy test_answer: 2 generated cases (besides 0 fixed and 0 seeded)",
        "  dimension  value  cases",
        "  calls      one    1",
        "             two    1",
    ]
    assert ("no generated case has argument=some" in run.stderr) is (code == 1)
