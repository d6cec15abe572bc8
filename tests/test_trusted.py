"""The trusted comparison and the helpers observers use to report plain data."""

from __future__ import annotations

from collections import OrderedDict

import torch

from grader.observing import agrees, approx, attempt, plain


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
