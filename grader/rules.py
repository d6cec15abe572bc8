"""A hidden test cell judged rule by rule: which rule each difference breaks, every broken rule's first difference in
the contract's words, and the points the cell earns (the course's credit policy).

A hidden test's observation is labelled case by case (grader.observing.labelled). A fixed case's label names the rule
it tests ("rule 2: a module called twice"); a seeded case names each thing it looks at by the rule that asks for it
({"rule 3: every gradient": ...}, a sequence of steps [{"rule 2: step 3, ...": ...}, ...]). Comparing it with the
solution's finds the differences, down to the key or entry where each is (an entry of a list of named records,
[["weight", ...], ...], by its name): in every part of two dicts with the same keys, and in the first differing entry
of a list (what follows in a sequence builds on it). Each difference breaks the innermost rule its path names (so a
part that looks at a later rule only once an earlier one held sits inside the earlier rule's: {"rule 4: the
outcome": {"raises TypeError": {"rule 5: its message": ...}}}). A difference whose path names no rule (a seeded case
that raised before it could look at anything, an output every rule shapes) says nothing of which rule failed: it
breaks the rules that the differences naming theirs show broken, and where they show none, only the first rule the
solution's observation names there (in its order: the checks' observers name what the call returns or raises first),
its message saying so (failing that, the first rule named by the innermost sequence around it, whose later steps
build on the earlier ones; failing that, every rule of the part).

Credit: a hidden test cell's points are split evenly across its part's rules (the contract's numbered items); each
rule whose cases all agree with the solution's earns its share, rounded to hundredths (all of them: the whole cell). A
broken "must not" rule (the checks' MUST_NOT) costs the whole part; an observation that cannot be compared case by
case (the check stopped, or saw nothing) earns nothing. The trusted check, a notebook's hidden-test block, the
feedback, `grader check --hidden` and the gradebook all take their points from `judge`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from grader.observing import TOLERANCE, agrees, compared_as_floats, shown

RULE_LABEL = re.compile(r"rule (\d+): ")
WRAPPERS = {"Tensor", "Parameter", "type", "float", "set", "dict items", "non-finite", "not a tensor", "too deep"}


class _Absent:
    """What stands for a key that one side of a comparison lacks."""

    def __repr__(self) -> str:
        return "(nothing)"


ABSENT = _Absent()


def rule_of(label: object) -> int | None:
    """The rule a label names ("rule 2: what the case does" -> 2), None for any other label."""
    found = RULE_LABEL.match(label) if type(label) is str else None
    return int(found.group(1)) if found else None


def credit(points: float, held: int, count: int) -> float:
    """The points of a hidden test cell whose `held` rules of `count` hold: an even share each, in hundredths."""
    return points if held == count else round(points * held / count, 2)


@dataclass(frozen=True)
class Difference:
    """Where a case's observation differs from the solution's: the case's label, the keys and positions below it,
    the solution's value there and the observed one, and the rules it breaks."""

    case: str
    within: tuple[str | int, ...]
    expected: object
    seen: object
    rules: frozenset[int]
    named: bool  # whether a label on its path names its rule (else: the rules observed there, see judge)
    first_at: int | None = None  # where two lists of plain values, shown whole, first differ
    alone: bool = False  # charged to the first rule the case looks at only, no named difference showing one (judge)

    def where(self, rule: int) -> str:
        """The case and the place in it, as a student reads them (the label's "rule k: " left out for rule k)."""
        place = ", ".join(_step(step, rule) for step in self.within)
        case = f'the case "{_step(self.case, rule)}"' if rule_of(self.case) is not None else self.case
        return f"{case}, at {place}" if place else case

    def values(self) -> str:
        """What the solution's observation is there and what came back."""
        beyond = (
            f" (they differ beyond the tolerance, {TOLERANCE})" if compared_as_floats(self.seen, self.expected) else ""
        )
        shortened = not (_whole_shown(self.expected) and _whole_shown(self.seen))
        first = "" if self.first_at is None or shortened else f" (they first differ at entry {self.first_at + 1})"
        text = f"expected: {_shown(self.expected)}\ngot:      {_shown(self.seen)}{beyond}{first}"
        inner = _first_difference(self.expected, self.seen) if shortened else None
        if inner is None:
            return text
        within, expected, seen = inner
        place = ", ".join(_step(step, 0) for step in within)
        return f"{text}\nthey first differ at {place}:\n  expected: {_shown(expected)}\n  got:      {_shown(seen)}"

    def charged(self, rule: int) -> str:
        """Why a difference that names no rule is charged to `rule` alone ('' for any other difference)."""
        if not self.alone:
            return ""
        error = _raised(self.seen)
        what = f"raised {error}" if error else "differs as a whole"
        return (
            f"this case {what} before its other rules could be checked: only rule {rule}, the first it looks at,"
            " is charged"
        )


@dataclass(frozen=True)
class Judgement:
    """A hidden test cell's verdict: its points, its part's rules (number: name), each broken rule's first
    difference (in rule order), the "must not" rules broken, and why no case could be compared ('' when they
    could)."""

    points: float
    max_points: float
    rules: dict[int, str]
    broken: dict[int, Difference] = field(default_factory=dict)
    forbidden: tuple[int, ...] = ()  # the broken "must not" rules: each broken by a case whose label names it
    whole: str = ""

    def message(self) -> str:
        """For the student: every broken rule with its first difference, and the points (empty when all hold)."""
        if self.whole:
            return f"{self.whole}, so no rule could be checked: 0 of {self.max_points:g} points"
        if not self.broken:
            return ""
        lines = []
        for rule, difference in self.broken.items():
            lines.append(f"{self.rule_name(rule)} is broken: in {difference.where(rule)}")
            lines += [f"  {line}" for line in difference.values().splitlines()]
            lines += [f"  {line}" for line in [difference.charged(rule)] if line]
        lines.append(self.summary())
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: which rules hold and the points they earn, or the "must not" rule that costs the part."""
        if self.forbidden:
            return f'{_rules(self.forbidden)} of the part is a "must not": the part earns nothing'
        held = [rule for rule in self.rules if rule not in self.broken]
        holding = f"{_rules(held)} {'holds' if len(held) == 1 else 'hold'}" if held else "no rule holds"
        share = self.max_points / len(self.rules)
        return f"{holding}: {self.points:g} of {self.max_points:g} points ({share:.3g} a rule)"

    def reason(self) -> str:
        """For statuses and flags: the broken rules and their cases, none of the solution's values."""
        if self.whole:
            return self.whole
        return "; ".join(f"rule {rule} broken ({difference.case})" for rule, difference in self.broken.items())

    def mistakes(self) -> list[str]:
        """For the class's common mistakes: each broken rule by its number and name (the course's words only)."""
        return [self.whole] if self.whole else [self.rule_name(rule) for rule in self.broken]

    def rule_name(self, rule: int) -> str:
        name = self.rules.get(rule)
        return f"rule {rule} ({name})" if name else f"rule {rule}"


def judge(
    seen: object, expected: dict, rules: dict[int, str], points: float, must_not: tuple[int, ...] = ()
) -> Judgement:
    """Compare a hidden test cell's observation with the solution's (a labelled one) under the credit policy. `rules`:
    its part's rules (number: name); a rule a label names is one too, and a part that names none is one rule."""
    if agrees(seen, expected):
        return Judgement(points, points, rules)
    rules = dict(sorted({**dict.fromkeys(named_rules(expected), ""), **rules}.items())) or {1: "the hidden tests"}
    if type(seen) is not dict:
        return Judgement(0.0, points, rules, whole=_whole(seen))
    found = list(differences(seen, expected, frozenset(rules)))
    shown_broken = frozenset(rule for difference in found if difference.named for rule in difference.rules)
    broken: dict[int, Difference] = {}
    for difference in found:
        if not difference.named and not shown_broken and len(named_rules(difference.expected)) > 1:
            difference = replace(difference, alone=True)
        for rule in sorted(difference.rules if difference.named else shown_broken or difference.rules):
            broken.setdefault(rule, difference)
    forbidden = shown_broken & set(must_not)
    earned = 0.0 if forbidden else credit(points, len(set(rules) - set(broken)), len(rules))
    return Judgement(earned, points, rules, dict(sorted(broken.items())), tuple(sorted(forbidden)))


def differences(seen: dict, expected: dict, every: frozenset[int]) -> Iterator[Difference]:
    """Every difference of a labelled observation from the solution's, case by case in the solution's order (a case
    the solution lacks last), each with the rules it breaks."""
    for case in _keys(expected, seen):
        here = rule_of(case)
        mine, theirs = seen.get(case, ABSENT), expected.get(case, ABSENT)
        for within, want, got, rule, first_at, around in _walk(mine, theirs, (), here):
            first = next((found for found in (rule, first_rule(want), around) if found is not None), None)
            rules = frozenset([first]) if first is not None else every
            yield Difference(case, within, want, got, rules, rule is not None, first_at)


def _walk(
    seen: object, expected: object, within: tuple, rule: int | None, around: int | None = None
) -> Iterator[tuple]:
    """(path, expected, seen, innermost rule, where two lists of plain values first differ, the first rule the
    innermost sequence around it names) of each place where two observations differ: every key of two dicts of the
    same named parts (dicts with other keys, such as a result and an exception, differ as a whole); a list's first
    differing entry only (a sequence: what follows builds on it, so a step that names no rule is charged to the
    first rule the sequence names); two lists of plain values (names in an order...) as a whole."""
    if agrees(seen, expected):
        return
    if _plain_list(seen) and _plain_list(expected):
        yield within, expected, seen, rule, _first_entry(seen, expected), around
    elif _named_parts(seen) and _named_parts(expected) and seen.keys() == expected.keys():
        for key, theirs in expected.items():
            inner = rule_of(key) if rule_of(key) is not None else rule
            yield from _walk(seen[key], theirs, (*within, key), inner, around)
    elif type(seen) is list and type(expected) is list and len(seen) == len(expected):
        position = _first_entry(seen, expected)
        named = first_rule(expected)
        inner = (*within, _entry(expected, position))
        yield from _walk(seen[position], expected[position], inner, rule, around if named is None else named)
    else:
        yield within, expected, seen, rule, None, around


def _keys(expected: dict, seen: dict) -> list:
    """The keys of two observations compared: the solution's in its order, then those only the other has."""
    return [*expected, *(key for key in seen if key not in expected)]


def _first_entry(seen: list, expected: list) -> int:
    """The position where two lists first differ: their first differing entry, else where the shorter one ends."""
    pairs = enumerate(zip(seen, expected, strict=False))
    return next((n for n, pair in pairs if not agrees(*pair)), min(len(seen), len(expected)))


def _entry(entries: list, position: int) -> str | int:
    """How a path names an entry of a list: by its name where the list is one of named records (every entry a list
    whose first item is a str, each a different one: [["weight", ...], ["bias", ...]]), else by its position."""
    names = [entry[0] if type(entry) is list and entry and type(entry[0]) is str else None for entry in entries]
    named = None not in names and len(set(names)) == len(names)
    return names[position] if named else position


def _plain_list(value: object) -> bool:
    return type(value) is list and all(type(item) in (str, int, float, bool, type(None)) for item in value)


def _named_parts(value: object) -> bool:
    """A dict whose keys name parts of an observation: not a value plain() or approx() wrapped."""
    if type(value) is not dict:
        return False
    return not (len(value) == 1 and next(iter(value)) in WRAPPERS) and "approx" not in value


def named_rules(value: object) -> frozenset[int]:
    """The rules named by the keys of a part of the solution's observation, at any depth."""
    if type(value) is dict:
        own = {rule_of(key) for key in value} - {None}
        return frozenset(own).union(*map(named_rules, value.values()))
    if type(value) is list:
        return frozenset().union(*map(named_rules, value))
    return frozenset()


def first_rule(value: object) -> int | None:
    """The first rule a part of the solution's observation names, in its order (depth first), None where none."""
    if type(value) is dict:
        for key, inner in value.items():
            found = rule_of(key) if rule_of(key) is not None else first_rule(inner)
            if found is not None:
                return found
    if type(value) is list:
        return next((found for found in map(first_rule, value) if found is not None), None)
    return None


def _step(step: str | int, rule: int) -> str:
    """One step of a path: a position as "entry n" (from 1), a label of the rule at hand without its "rule k: ",
    another rule's label as it is, any other key quoted."""
    if type(step) is int:
        return f"entry {step + 1}"
    named = rule_of(step)
    if named is None:
        return repr(step)
    return step.split(": ", 1)[1] if named == rule else step


def _rules(numbers: list[int]) -> str:
    names = [str(number) for number in numbers]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"rule{'s' if len(names) > 1 else ''} {listed}"


VALUE_CHARS = 300  # of each value a message shows: every broken rule of a part fits in one message


def _shown(value: object) -> str:
    return repr(ABSENT) if value is ABSENT else shown(value, VALUE_CHARS)


def _raised(seen: object, depth: int = 0) -> str | None:
    """The exception class a case's observation records it raised (["raises", "KeyError"], alone or beside the name
    of what raised it: ["strip_hooks", ["raises", "KeyError"]]), None where it records none."""
    if type(seen) is list and len(seen) == 2 and seen[0] == "raises" and type(seen[1]) is str:
        return seen[1]
    parts = list(seen.values()) if type(seen) is dict else seen if type(seen) is list else []
    if depth > 1 or len(parts) > 2:
        return None
    return next(filter(None, (_raised(part, depth + 1) for part in parts)), None)


def _whole_shown(value: object) -> bool:
    """Whether a message shows a value whole (not cut at VALUE_CHARS)."""
    return value is ABSENT or len(shown(value, VALUE_CHARS + 1)) <= VALUE_CHARS


def _first_difference(expected: object, seen: object) -> tuple[tuple, object, object] | None:
    """Where two values a message cuts short first differ: the keys and entries down to the first place whose values
    it shows whole (a dict's first key, in the solution's order, whose values differ or that one lacks; a list's
    first differing entry, named as a path names it), and both values there; None where they differ only as
    wholes (other types)."""
    within: tuple = ()
    while not (_whole_shown(expected) and _whole_shown(seen)):
        if type(expected) is dict and type(seen) is dict:
            differing = [
                key for key in _keys(expected, seen) if not agrees(seen.get(key, ABSENT), expected.get(key, ABSENT))
            ]
            if not differing:
                break
            step, expected, seen = differing[0], expected.get(differing[0], ABSENT), seen.get(differing[0], ABSENT)
        elif type(expected) is list and type(seen) is list:
            at = _first_entry(seen, expected)
            step = _entry(expected, at) if at < len(expected) else at
            expected = expected[at] if at < len(expected) else ABSENT
            seen = seen[at] if at < len(seen) else ABSENT
        else:
            break
        within = (*within, step)
    return (within, expected, seen) if within else None


def _whole(seen: object) -> str:
    """Why an observation that is not a labelled one cannot be compared case by case."""
    if seen is None:
        return "nothing was observed"
    if type(seen) is list and seen[:1] == ["observer failed"]:
        return "the check could not observe your code"
    if type(seen) is list and seen[:1] == ["stopped"]:
        error = seen[1] if len(seen) == 2 and type(seen[1]) is list and len(seen[1]) == 2 else ["", "an exception"]
        return f"the checks stopped: your code raised {error[1]} where every case starts"
    return "the observation as a whole differs"
