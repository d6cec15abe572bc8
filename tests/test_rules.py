"""A hidden test cell judged rule by rule (grader.rules): attribution, every broken rule at once, names, credit."""

from __future__ import annotations

import json

import pytest

from grader.observing import approx, fixed, labelled, seeded
from grader.rules import credit, judge, rule_of

RULES = {1: "returns a plain dict", 2: "keys in order", 3: "must not call the forbidden helper"}


def observe(answer: dict) -> dict:
    """A labelled observation of a toy answer: fixed cases of rules 1 and 2, seeded cases naming both."""

    def seeded_case(n: int) -> dict:
        return {"rule 1: the result's class": answer["kind"], "rule 2: the keys": answer["keys"][:n]}

    return labelled(
        fixed(1, "a one-layer model", lambda: answer["kind"]),
        fixed(2, "three layers", lambda: {"the keys in order": answer["keys"]}),
        fixed(3, "the forbidden helper never runs", lambda: answer["calls"]),
        *seeded([[1], [2]], seeded_case),
    )


RIGHT = {"kind": "dict", "keys": ["0", "1", "2"], "calls": []}


def test_labels_name_the_rule_each_fixed_case_tests() -> None:
    expected = observe(RIGHT)
    assert list(expected)[:3] == [
        "rule 1: a one-layer model",
        "rule 2: three layers",
        "rule 3: the forbidden helper never runs",
    ]
    assert [rule_of(label) for label in expected] == [1, 2, 3, None, None]
    with pytest.raises(ValueError, match="same label"):
        labelled(fixed(1, "x", lambda: 1), fixed(1, "x", lambda: 2))


def test_every_broken_rule_is_reported_at_once_and_each_rule_that_holds_earns_its_share() -> None:
    expected = observe(RIGHT)
    assert judge(expected, expected, RULES, 6).points == 6
    both = judge(observe({**RIGHT, "kind": "OrderedDict", "keys": ["1", "0", "2"]}), expected, RULES, 6)
    assert sorted(both.broken) == [1, 2] and both.points == 2
    message = both.message()
    assert message.startswith('rule 1 (returns a plain dict) is broken: in the case "a one-layer model"\n')
    assert "rule 2 (keys in order) is broken: in the case \"three layers\", at 'the keys in order'\n" in message
    assert message.endswith("rule 3 holds: 2 of 6 points (2 a rule)")
    assert both.mistakes() == ["rule 1 (returns a plain dict)", "rule 2 (keys in order)"]
    assert both.reason() == "rule 1 broken (rule 1: a one-layer model); rule 2 broken (rule 2: three layers)"


def test_a_seeded_case_breaks_the_rule_its_differing_part_names() -> None:
    expected = observe(RIGHT)  # the fixed cases agree; one part of one seeded case differs
    seen = observe(RIGHT) | {"seeded case 2 of 2": {"rule 1: the result's class": "dict", "rule 2: the keys": ["1"]}}
    judged = judge(seen, expected, RULES, 6)
    assert list(judged.broken) == [2] and judged.points == 4
    assert judged.broken[2].where(2) == "seeded case 2 of 2, at the keys"


def test_a_case_that_raised_breaks_the_rules_shown_broken_else_only_the_first_rule_it_looks_at() -> None:
    expected = observe(RIGHT)
    stopped = {"seeded case 1 of 2": ["raises", "AttributeError"]}
    alone = judge(observe(RIGHT) | stopped, expected, RULES, 6)
    assert sorted(alone.broken) == [1] and alone.points == 4  # the first of the rules it looks at: 1 (of 1 and 2)
    assert alone.message() == (
        "rule 1 (returns a plain dict) is broken: in seeded case 1 of 2\n"
        '  expected: {"rule 1: the result\'s class": "dict", "rule 2: the keys": ["0"]}\n'
        '  got:      ["raises", "AttributeError"]\n'
        "  this case raised AttributeError before its other rules could be checked: only rule 1, the first it looks"
        " at, is charged\n"
        "rules 2 and 3 hold: 4 of 6 points (2 a rule)"
    )
    with_order = judge(observe({**RIGHT, "keys": ["2", "1", "0"]}) | stopped, expected, RULES, 6)
    assert sorted(with_order.broken) == [2] and with_order.points == 4  # explained by the broken rule 2
    assert "only rule" not in with_order.message()
    named = judge(observe(RIGHT) | {"seeded case 1 of 2": {"the call": ["raises", "KeyError"]}}, expected, RULES, 6)
    assert named.broken[1].charged(1).startswith("this case raised KeyError before its other rules could be checked")


def test_the_first_rule_a_case_looks_at_is_the_first_its_observation_names() -> None:
    expected = labelled(
        fixed(1, "one", lambda: 1),
        fixed(2, "two", lambda: 2),
        fixed(3, "three", lambda: 3),
        *seeded([[]], lambda: {"outcome": {"rule 3: returns": 1}, "rule 1: later": 2, "rule 2: last": 3}),
    )
    judged = judge(expected | {"seeded case 1 of 1": ["raises", "TypeError"]}, expected, {}, 3)
    assert list(judged.broken) == [3] and judged.points == 2


def test_an_unnamed_step_of_a_sequence_is_charged_to_the_first_rule_the_sequence_names() -> None:
    def steps(later: list) -> dict:
        return labelled(
            fixed(1, "one", lambda: 1),
            fixed(2, "two", lambda: 2),
            fixed(3, "three", lambda: 3),
            *seeded([[]], lambda: {"the steps": [{"rule 2: first": [1]}, {"then, as rule 2 left it": later}]}),
        )

    expected = steps(["a"])
    judged = judge(steps(["b"]), expected, RULES, 6)  # nothing else differs: not every rule, only the sequence's
    assert list(judged.broken) == [2] and judged.points == 4
    shown = judge(steps(["b"]) | {"rule 3: three": 4}, expected, RULES, 6)  # a broken rule explains it
    assert list(shown.broken) == [3] and shown.points == 4


def test_a_must_not_rule_costs_the_part_only_where_a_case_naming_it_differs() -> None:
    expected = observe(RIGHT)
    cheat = judge(observe({**RIGHT, "calls": ["helper"]}), expected, RULES, 6, must_not=(3,))
    assert cheat.forbidden == (3,) and cheat.points == 0
    assert cheat.summary() == 'rule 3 of the part is a "must not": the part earns nothing'
    crash = {"rule 3: the forbidden helper never runs": ["raises", "KeyError"]}
    assert judge(observe(RIGHT) | crash, expected, RULES, 6, must_not=(3,)).forbidden == (3,)
    stopped = judge(observe(RIGHT) | {"seeded case 1 of 2": ["raises", "KeyError"]}, expected, RULES, 6, (3,))
    assert stopped.forbidden == () and stopped.points == 4


def test_a_difference_is_named_down_to_its_key_and_a_list_of_plain_values_is_shown_whole() -> None:
    expected = labelled(fixed(1, "a nested case", lambda: {"outer": [{"inner": [1, 2, 3]}], "other": 1}))
    seen = labelled(fixed(1, "a nested case", lambda: {"outer": [{"inner": [1, 5, 3]}], "other": 1}))
    difference = judge(seen, expected, {1: "one"}, 1).broken[1]
    assert difference.where(1) == "the case \"a nested case\", at 'outer', entry 1, 'inner'"
    assert difference.values() == "expected: [1, 2, 3]\ngot:      [1, 5, 3] (they first differ at entry 2)"
    records = labelled(fixed(1, "named records", lambda: [["weight", 1, True], ["bias", 2, True]]))
    changed = labelled(fixed(1, "named records", lambda: [["weight", 1, True], ["bias", 2, False]]))
    assert judge(changed, records, {1: "one"}, 1).broken[1].where(1) == "the case \"named records\", at 'bias'"
    missing = judge(labelled(fixed(1, "a nested case", lambda: {"outer": []})), expected, {1: "one"}, 1)
    assert missing.broken[1].within == ()  # other keys: the case differs as a whole


def test_values_are_shortened_and_a_tolerance_is_said() -> None:
    expected = labelled(fixed(1, "long", lambda: "y"), fixed(2, "close", lambda: 1.0))
    judged = judge(labelled(fixed(1, "long", lambda: "x" * 2000), fixed(2, "close", lambda: 1.5)), expected, {}, 2)
    assert len(judged.broken[1].values()) < 400 and judged.broken[1].values().endswith("xxx...")
    assert "(they differ beyond the tolerance, relative 0.001" in judged.broken[2].values()
    tolerant = labelled(fixed(1, "approx", lambda: approx(2.0, rel_tol=1e-5)))
    assert judge(labelled(fixed(1, "approx", lambda: approx(2.000001))), tolerant, {}, 1).points == 1
    assert judge(labelled(fixed(1, "approx", lambda: approx(2.1))), tolerant, {}, 1).points == 0


def test_values_cut_short_are_followed_by_where_they_first_differ_and_both_values_there() -> None:
    weights = {f"layer{n}.weight": {"Tensor": [[0.5] * 4] * 3} for n in range(6)}
    changed = {**weights, "layer4.weight": {"Tensor": [[0.5] * 4, [0.5, 0.25, 0.5, 0.5], [0.5] * 4]}, "extra": 1}
    expected = labelled(fixed(1, "a long dict", lambda: weights))
    values = judge(labelled(fixed(1, "a long dict", lambda: changed)), expected, {1: "values"}, 1).broken[1].values()
    assert values.splitlines()[0].endswith("...")  # other keys: the case differs as a whole, shown cut short
    assert values.splitlines()[2:] == [
        "they first differ at 'layer4.weight':",
        '  expected: {"Tensor": [[0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]]}',
        '  got:      {"Tensor": [[0.5, 0.5, 0.5, 0.5], [0.5, 0.25, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]]}',
    ]
    records = [[f"p{n}", list(range(n, n + 30))] for n in range(4)]
    fewer = labelled(fixed(1, "records", lambda: [*records[:2], ["p2", [0]], *records[3:], ["p9", []]]))
    values = judge(fewer, labelled(fixed(1, "records", lambda: records)), {1: "records"}, 1).broken[1].values()
    assert values.splitlines()[2:] == [
        "they first differ at 'p2':",
        f"  expected: {json.dumps(records[2])}",
        '  got:      ["p2", [0]]',
    ]
    short = judge(labelled(fixed(1, "short", lambda: {"a": 2})), labelled(fixed(1, "short", lambda: {"b": 1})), {}, 1)
    assert "first differ" not in short.broken[1].values()  # shown whole: nothing to point at


def test_an_observation_that_cannot_be_compared_case_by_case_earns_nothing() -> None:
    expected = observe(RIGHT)
    assert judge(["stopped", ["raises", "KeyError"]], expected, RULES, 6).message() == (
        "the checks stopped: your code raised KeyError where every case starts, so no rule could be checked: "
        "0 of 6 points"
    )
    assert judge(None, expected, RULES, 6).mistakes() == ["nothing was observed"]


def test_credit_is_an_even_share_per_rule_in_hundredths() -> None:
    assert credit(4, 5, 6) == 3.33 and credit(4, 6, 6) == 4 and credit(4, 0, 6) == 0
    assert credit(6, 4, 5) == 4.8 and float(repr(credit(4, 2, 3))) == 2.67  # what nbgrader reads back
