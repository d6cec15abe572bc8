"""The trusted comparison and the helpers observers use to report plain data."""

from __future__ import annotations

from collections import OrderedDict

import torch

from grader.observing import (
    VISIBLE_TESTS,
    agrees,
    approx,
    attempt,
    plain,
    replay,
    visible_failure,
)


def test_plain_reports_lying_subclasses_by_type() -> None:
    class Liar(str):
        def __eq__(self, other: object) -> bool:
            return True

    assert plain(Liar("registry")) == {"type": "Liar"}
    assert plain(OrderedDict(a=1)) == {"type": "OrderedDict"}
    assert plain({"a": (1, 2.5, None)}) == {"a": [1, 2.5, None]}
    assert plain(torch.tensor([1.0, 2.0])) == {"Tensor": [1.0, 2.0]}
    assert plain(float("nan")) == {"float": "nan"}


def test_attempt_records_results_and_exceptions() -> None:
    assert attempt(lambda: [1]) == ["returns", [1]]
    assert attempt(lambda: 1 / 0) == ["raises", "ZeroDivisionError"]
    assert attempt(None) == ["missing", "NoneType"]


def test_agrees_uses_the_solutions_tolerance_only() -> None:
    expected = [approx(2.0, rel_tol=1e-5), "x"]
    assert agrees([approx(2.000001), "x"], expected)
    assert not agrees([approx(2.1), "x"], expected)
    # a submission cannot widen the tolerance: only the solution's counts
    assert not agrees([{"approx": 2.1, "rel_tol": 1.0, "abs_tol": 1.0}, "x"], expected)
    assert not agrees([{"approx": "2.0", "rel_tol": 0, "abs_tol": 0}, "x"], expected)
    assert not agrees([approx(2.0)], expected)


def test_agrees_is_equality_elsewhere() -> None:
    assert agrees({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]})
    assert not agrees({"a": [1, {"b": "c"}], "extra": 1}, {"a": [1, {"b": "c"}]})
    assert not agrees(["returns", {"type": "Liar"}], ["returns", "registry"])


def test_floats_agree_within_the_stated_tolerance_and_nothing_else_does() -> None:
    assert agrees([0.28430265188217163], [0.284302681684494])  # one value on two CPUs (issue 23)
    assert agrees({"g": 0.0}, {"g": -1.05e-5})  # a gradient that cancels to zero on one kernel only
    assert not agrees([0.2843], [0.2853])
    assert not agrees(["1.0"], [1.0])
    assert agrees([2], [2.0])  # as equality has it: the contract's own checks observe types where they matter


VISIBLE_CELL = """
assert type(groups) is dict
assert groups["a"] == "x" and len(groups) == 1, "groups is wrong"
assert torch.equal(view(torch.ones(2)), torch.ones(2) * 2)
"""


def _visible(groups: object, view: object, given: str = "import torch") -> dict:
    steps = [
        {"run": given},
        {"take": ["groups", "view"]},
        {"run": VISIBLE_CELL, "grade_id": "test_visible"},
    ]
    return replay(steps, {"groups": groups, "view": view, "type": lambda value: dict})["test_visible"]


def test_a_replayed_visible_cell_passes_on_the_same_data_only() -> None:
    assert visible_failure(_visible({"a": "x"}, lambda t: t * 2)) is None
    # what the submission shadows in its own namespace (here `type`) never reaches the replayed cell
    assert visible_failure(_visible(OrderedDict(a="x"), lambda t: t * 2)) == (
        "`assert type(groups) is dict` does not hold",
        "",
    )

    class Liar(str):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

    # equal where it lives, not as data: the grader's judgement of the plain values fails it
    assert visible_failure(_visible({"a": Liar("y")}, lambda t: t * 2)) == (
        "`assert groups['a'] == 'x'` does not hold",
        'it compares {"type": "Liar"} with "x"',
    )
    # a torch.equal patched to say yes, seen through the data it was given
    real_equal = torch.equal
    try:
        patched = "import torch\ntorch.equal = lambda *args: True"
        failure = visible_failure(_visible({"a": "x"}, lambda t: t * 3, given=patched))
    finally:
        torch.equal = real_equal
    assert failure == (
        "`assert torch.equal(view(torch.ones(2)), torch.ones(2) * 2)` does not hold",
        "it compares [[2], [3.0, 3.0]] with [[2], [2.0, 2.0]]",
    )
    stopped = visible_failure(_visible({"a": "x", "b": "y"}, lambda t: t * 2))
    assert stopped == ("`assert len(groups) == 1` does not hold", "")


def test_objects_named_only_by_their_class_are_left_to_the_comparison_where_they_live() -> None:
    from collections import namedtuple

    Pair = namedtuple("Pair", "left right")
    cell = "assert result == Pair([], [])\nassert value == 'x'"
    steps = [{"run": cell, "grade_id": "t"}]
    ok = replay(steps, {})
    assert ok["t"][VISIBLE_TESTS][-1][0] == "fails"  # NameError: nothing is taken that the steps do not name
    namespace = {"Pair": Pair, "result": ([], []), "value": "x"}
    passing = replay([{"take": ["Pair", "result", "value"]}, *steps], namespace)
    assert visible_failure(passing["t"]) is None  # a tuple equal to a named tuple, as Python has it

    class AlwaysEqual:
        def __eq__(self, other: object) -> bool:
            return True

    namespace["value"] = AlwaysEqual()
    lying = replay([{"take": ["Pair", "result", "value"]}, *steps], namespace)
    assert visible_failure(lying["t"]) == (
        "`assert value == 'x'` does not hold",
        'it compares {"type": "AlwaysEqual"} with "x"',
    )
