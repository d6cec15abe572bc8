"""A message names what differs: the observers of the checks say which key, entry, module or order a wrong answer
changed (reviewers' wrong answers, each judged by grader.rules against what the right answer gives)."""

from __future__ import annotations

import runpy
from collections.abc import Callable

import torch
from torch import nn

from grader.course import checks_file
from grader.observing import changed, fixed, labelled
from grader.rules import judge


def _checks(assignment: str) -> dict:
    return runpy.run_path(str(checks_file(assignment)))


def message(rule: int, right: Callable[[], object], wrong: Callable[[], object]) -> str:
    """The message of a part whose one fixed case (of `rule`) the right answer and the wrong one are observed by."""
    expected = labelled(fixed(rule, "the case", right))
    return judge(labelled(fixed(rule, "the case", wrong)), expected, {rule: "the rule"}, 1).message()


def test_changed_names_what_differs_by_name() -> None:
    assert changed({"a": 1, "b": 2}, {"a": 1, "b": 2}) == []
    assert changed({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 5, "d": 3}) == ["b", "c", "d"]
    assert changed({"a": 1, "b": 2}, {"b": 2, "a": 1}) == ["the order"]


def test_ex01_a_copy_that_swaps_the_originals_containers_is_told_which() -> None:
    copy_leaves_original = _checks("ex01_slots")["copy_leaves_original"]

    def swaps(module: nn.Module) -> None:  # the original gets a new _parameters, the copy would keep its own
        vars(module)["_parameters"] = dict(vars(module)["_parameters"])

    said = message(
        8,
        lambda: copy_leaves_original(lambda module: None, lambda: nn.Linear(2, 2)),
        lambda: copy_leaves_original(swaps, lambda: nn.Linear(2, 2)),
    )
    assert '  got:      ["root._parameters"]' in said


def test_ex04_findings_out_of_order_are_shown_in_both_orders() -> None:
    in_order = _checks("ex04_persistence")["in_order"]

    def finding(kind: str, model_key: str) -> dict:
        return {"kind": kind, "model_key": model_key, "checkpoint_key": None}

    ordered = [finding("missing", "bias"), finding("missing", "weight")]
    said = message(6, lambda: in_order(ordered), lambda: in_order(ordered[::-1]))
    assert '"in the order given": [["missing", "weight", ""], ["missing", "bias", ""]]' in said
    assert '"in the contract\'s order": [["missing", "bias", ""], ["missing", "weight", ""]]' in said


def test_ex05_a_strip_that_changes_the_model_is_told_which_table_of_which_module() -> None:
    kept = _checks("ex05_hooks")["kept"]

    def model() -> nn.Module:
        built = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
        built[0].register_forward_hook(lambda *args: None)
        return built

    def clears(built: nn.Module) -> None:
        vars(built[0])["_forward_hooks"].clear()

    said = message(3, lambda: kept(model(), [], lambda built: None), lambda: kept(model(), [], clears))
    assert "at 'the entries of vars() it changed'" in said and '  got:      ["0._forward_hooks"]' in said


def test_ex08_a_call_of_forward_is_told_that_module_args_never_ran() -> None:
    comes_back = _checks("ex08_calls_and_swaps")["comes_back"]
    output = torch.zeros(1)
    said = message(4, lambda: comes_back(output, output, 1), lambda: comes_back(torch.zeros(1), None, 0))
    assert "the model's forward hooks saw no call: module(*args) never ran" in said
