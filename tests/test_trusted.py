"""The trusted comparison and the helpers observers use to report plain data."""

from __future__ import annotations

from collections import OrderedDict

import pytest
import torch

from grader.observing import (
    agrees,
    approx,
    attempt,
    clause_of,
    explain,
    first_difference,
    fixed,
    labelled,
    plain,
    seeded,
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


def test_a_labelled_observation_names_the_first_differing_case_by_its_label() -> None:
    def observe(seen: dict) -> dict:
        return labelled(
            fixed(1, "a plain case", lambda: seen["a"]),
            fixed(2, "a raising case", lambda: 1 // seen["b"]),
            *seeded([[1], [2]], lambda n: n * seen["c"]),
        )

    expected = observe({"a": 1, "b": 1, "c": 1})
    assert list(expected) == [
        "clause 1: a plain case",
        "clause 2: a raising case",
        "seeded case 1 of 2",
        "seeded case 2 of 2",
    ]
    assert [clause_of(label) for label in expected] == [1, 2, None, None]
    assert first_difference(observe({"a": 1, "b": 0, "c": 1}), expected) == (
        "clause 2: a raising case",
        1,
        ["raises", "ZeroDivisionError"],
    )
    assert first_difference(observe({"a": 1, "b": 1, "c": 2}), expected) == ("seeded case 1 of 2", 1, 2)
    with pytest.raises(ValueError, match="same label"):
        labelled(fixed(1, "x", lambda: 1), fixed(1, "x", lambda: 2))


def test_first_difference_names_the_case_and_the_items_down_to_it() -> None:
    expected = [["returns", 1], [["a", 1], ["b", 2]]]
    assert first_difference(expected, expected) is None
    assert first_difference([["returns", 1], [["a", 1], ["b", 3]]], expected) == ("case 2 of 2, item 2, item 2", 2, 3)
    assert first_difference([{"k": [1]}], [{"k": [2]}]) == ("case 1 of 1, 'k', item 1", 2, 1)
    # different lengths or keys: the whole observation differs
    assert first_difference([["returns", 1]], expected) == ("", expected, [["returns", 1]])
    # a tolerance the solution set is honoured here too
    assert first_difference([approx(2.0000001)], [approx(2.0, rel_tol=1e-5)]) is None


def test_explain_says_what_was_expected_and_what_came_back_shortened() -> None:
    message = explain(["x" * 2000], ["y"])
    assert message.startswith('case 1 of 1 differs\n  expected: "y"\n  got:      "xxx')
    assert message.endswith("...") and len(message) < 700
    assert explain(["y"], ["y"]) == ""
