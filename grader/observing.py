"""Helpers for an exercise's checks (solutions/<exercise>/checks.py): turn whatever a submission returns into plain
JSON data, call it case by case, run observers on one thread or record a failure that stops them; load a checks
module from its text; compare observations with the solution's and say where they first differ.

This text runs in three places: in the sandboxed child of the trusted check (grader.trusted sends it), in a notebook
whose hidden-test block runs (grader.hidden_tests), and in the grader, which compares. Inside a submission's process
nothing here is a security boundary (the submission can change anything there); the points the grader records come
from its own comparison.

The comparison rule (agrees): observations are equal where a contract makes them exact (types, names, order,
shapes, flags, exception types, ints, strings), and floats are equal within REL_TOL and ABS_TOL, as math.isclose
has it: wide enough that another CPU kernel, thread count or summation order never changes a grade, far narrower
than any mistake the checks look for.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: the grader compares observations without loading torch
    import torch

SCALARS = (str, int, bool, type(None))
REL_TOL = 1e-3  # float observations agree within this relative difference...
ABS_TOL = 1e-4  # ...or this absolute one (values near zero)
TOLERANCE = f"relative {REL_TOL:g}, absolute {ABS_TOL:g}"


def plain(value: object, depth: int = 0) -> object:
    """`value` as JSON data, judged by exact type: a subclass of str, dict, list... is reported, not converted.

    Tensors (and Parameters) become {"tensor": nested lists}; anything else becomes {"type": its class name}.
    """
    kind = type(value)
    if depth > 20:
        return {"type": "too deep"}
    if kind in SCALARS:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind in (list, tuple):
        return [plain(item, depth + 1) for item in value]
    if kind is dict:
        if all(type(key) is str for key in value):
            return {key: plain(item, depth + 1) for key, item in value.items()}
        return {"dict items": [[plain(k, depth + 1), plain(v, depth + 1)] for k, v in value.items()]}
    if kind.__name__ in ("Tensor", "Parameter") and kind.__module__.startswith("torch"):
        return {kind.__name__: value.detach().tolist()}
    return {"type": kind.__name__}


def approx(value: object, rel_tol: float = 0.0, abs_tol: float = 0.0) -> object:
    """A number the grader compares with a tolerance, as math.isclose does; the solution's tolerances are the ones used.

    Anything but a plain int or float is reported by type.
    """
    if type(value) in (int, float) and math.isfinite(value):
        return {"approx": value, "rel_tol": rel_tol, "abs_tol": abs_tol}
    return {"type": type(value).__name__}


def attempt(function: object, *args: object, **kwargs: object) -> object:
    """Call function(*args, **kwargs): ["returns", plain result] or ["raises", exception class name]."""
    if not callable(function):
        return ["missing", type(function).__name__]
    try:
        return ["returns", plain(function(*args, **kwargs))]
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        return raised(error)


def raised(error: BaseException) -> list:
    """An exception as an observation: ["raises", its class name]."""
    return ["raises", type(error).__name__]


def returns_type(function: object, expected: type, *args: object) -> object:
    """The visible lines of a hidden cell: only the type of what the function returns is checked."""
    if not callable(function):
        return ["missing", type(function).__name__]
    try:
        return ["returns", type(function(*args)) is expected]
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        return raised(error)


def in_turn(cases: list, observe: Callable[..., object]) -> list:
    """observe(*case) for every case, a failing case recorded as its exception."""
    seen = []
    for case in cases:
        try:
            seen.append(observe(*case))
        except Exception as error:  # noqa: BLE001 - a failure of the submission is an observation
            seen.append(raised(error))
    return seen


def fixed(clause: int, what: str, observe: Callable[[], object]) -> tuple[str, object]:
    """A fixed case of clause `clause` of a part's contract (its number as the notebook states it): the case's label,
    "clause 2: what the case does", and observe(), a failure recorded as its exception."""
    [seen] = in_turn([[]], observe)
    return f"clause {clause}: {what}", seen


def seeded(cases: list, observe: Callable[..., object]) -> list[tuple[str, object]]:
    """observe(*case) for every generated case, labelled "seeded case 3 of 100"."""
    return [(f"seeded case {n} of {len(cases)}", seen) for n, seen in enumerate(in_turn(cases, observe), start=1)]


def labelled(*cases: tuple[str, object]) -> dict[str, object]:
    """A hidden test's observation: each case's observation under its label, in the order they run (fixed cases
    first). A failure message names the first case that differs by its label."""
    observation = dict(cases)
    if len(observation) != len(cases):
        raise ValueError("two cases of one observation have the same label")
    return observation


CLAUSE_LABEL = re.compile(r"clause (\d+): ")


def clause_of(label: str) -> int | None:
    """The clause a fixed case's label names (None for a seeded case)."""
    found = CLAUSE_LABEL.match(label)
    return int(found.group(1)) if found else None


def seed_torch(number: int) -> None:
    """Seed torch's default (CPU) generator: the draws torch.manual_seed gives on CPU, without its cost there.

    torch.manual_seed also queues a seeding of every accelerator type torch was not started on, each with the
    caller's formatted stack (about 0.6 ms a call, a quarter of a heavy check's time); the checks draw on CPU only.
    """
    import torch

    torch.default_generator.manual_seed(number)


def single_thread(observer: Callable[[dict], object]) -> Callable[[dict], object]:
    """Run an observer on one thread (tiny tensors: faster, and the same arithmetic in every run), leaving torch's
    generator as it was."""

    def run(ns: dict) -> object:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.random.fork_rng(devices=[]):
                return observer(ns)
        finally:
            torch.set_num_threads(threads)

    run.__name__ = observer.__name__
    return run


def whole(observe: Callable[[dict], list]) -> Callable[[dict], list]:
    """observe, with a failure that stops it (the submission broke what it builds on) recorded as an observation."""

    @functools.wraps(observe)
    def run(ns: dict) -> list:
        try:
            return observe(ns)
        except Exception as error:  # noqa: BLE001
            return ["stopped", raised(error)]

    return run


def exact(value: object) -> list:
    """A scalar with its type: True, 1 and 1.0 stay apart."""
    return [type(value).__name__, plain(value)]


def kind_of(value: object) -> str:
    """The class of value with its module: "torch.Tensor", "builtins.int"."""
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def numbers(tensor: object) -> object:
    """The values of a tensor, JSON-safe: non-finite values spelled out; anything else (None...) as plain() has it."""
    import torch

    if not isinstance(tensor, torch.Tensor):
        return plain(tensor)
    values = tensor.detach().tolist()
    return values if bool(torch.isfinite(tensor).all()) else {"non-finite": repr(values)}


def data(tensor: object, qualified: bool = False) -> object:
    """What torch.equal looks at: the shape and the values (non-finite ones spelled out). Anything but a tensor is
    reported by its class name, with its module (kind_of) when qualified."""
    import torch

    if not isinstance(tensor, torch.Tensor):
        return {"not a tensor": kind_of(tensor) if qualified else type(tensor).__name__}
    return [list(tensor.shape), plain(tensor.detach().tolist())]


def walk(root: torch.nn.Module, root_path: str = "", lenient: bool = False) -> list[tuple[str, torch.nn.Module]]:
    """Every module of a tree once, breadth first, with its first path (root_path, then the keys joined by dots),
    following _modules in vars(). lenient: a module whose _modules is missing or not a plain dict is a leaf (else
    that raises)."""
    found, todo, seen = [], [(root, root_path)], set()
    while todo:
        module, path = todo.pop(0)
        if id(module) in seen:
            continue
        seen.add(id(module))
        found.append((path, module))
        children = vars(module).get("_modules") if lenient else vars(module)["_modules"]
        if lenient and type(children) is not dict:
            continue
        for key, child in children.items():
            if child is not None:
                todo.append((child, key if path == "" else f"{path}.{key}"))
    return found


def load_checks(helpers: types.ModuleType, checks_source: str, checks_name: str) -> types.ModuleType:
    """A checks module run from its text; its `from grader.observing import ...` gets `helpers` (this module, run
    from its own text where the grader package is absent)."""
    sys.modules.setdefault("grader", types.ModuleType("grader"))
    sys.modules["grader.observing"] = helpers
    checks = types.ModuleType("checks")
    exec(compile(checks_source, checks_name, "exec"), checks.__dict__)
    return checks


def as_sent(observation: object) -> object:
    """An observation as the trusted check's child sends it: through JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(observation))


def agrees(seen: object, expected: object) -> bool:
    """Whether an observation equals the solution's; numbers the solution marked {"approx": x, "rel_tol": r,
    "abs_tol": a} (approx) only need to be that close, by the solution's tolerances."""
    if type(expected) is dict and set(expected) == {"approx", "rel_tol", "abs_tol"}:
        number = seen.get("approx") if type(seen) is dict else None
        return type(number) in (int, float) and math.isclose(
            number, expected["approx"], rel_tol=expected["rel_tol"], abs_tol=expected["abs_tol"]
        )
    if type(expected) is list:
        return type(seen) is list and len(seen) == len(expected) and all(map(agrees, seen, expected))
    if type(expected) is dict:
        same_keys = type(seen) is dict and seen.keys() == expected.keys()
        return same_keys and all(agrees(seen[key], value) for key, value in expected.items())
    if _floats(seen, expected):
        return math.isclose(seen, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return seen == expected


def _floats(seen: object, expected: object) -> bool:
    """Two numbers compared within the tolerance: both int or float (never bool), at least one a float."""
    numbers = (int, float)
    return type(seen) in numbers and type(expected) in numbers and float in (type(seen), type(expected))


def first_difference(seen: object, expected: object, depth: int = 0) -> tuple[str, object, object] | None:
    """Where an observation first differs from the solution's: (a label such as "case 3 of 101, item 2" or
    "clause 2: a nested output, item 1", the solution's part there, the observed part there); None when they
    agree."""
    if agrees(seen, expected):
        return None
    for here, mine, theirs in _side_by_side(seen, expected, depth):
        inner = first_difference(mine, theirs, depth + 1)
        if inner is not None:
            return _within(here, *inner)
    return "", expected, seen


def first_case(seen: object, expected: object) -> str | None:
    """The label of the first case (at the top: "case 3 of 101", "clause 2: a nested output") where an observation
    differs from the solution's; None when they agree or cannot be compared case by case."""
    return next((here for here, mine, theirs in _side_by_side(seen, expected, 0) if not agrees(mine, theirs)), None)


def _side_by_side(seen: object, expected: object, depth: int) -> list[tuple[str, object, object]]:
    """The parts of two observations of the same shape, paired and labelled ("case 3 of 101" or a labelled case's
    key at the top, "item 2" or a key's repr below); none when their shapes differ."""
    if type(seen) is list and type(expected) is list and len(seen) == len(expected):
        labels = [f"case {n} of {len(expected)}" if depth == 0 else f"item {n}" for n in range(1, len(expected) + 1)]
        return list(zip(labels, seen, expected, strict=True))
    if type(seen) is dict and type(expected) is dict and seen.keys() == expected.keys():
        return [(key if depth == 0 else repr(key), seen[key], theirs) for key, theirs in expected.items()]
    return []


def _within(here: str, label: str, expected: object, seen: object) -> tuple[str, object, object]:
    return (f"{here}, {label}" if label else here), expected, seen


def shown(value: object, limit: int = 600) -> str:
    """An observation as compact JSON, shortened to `limit` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def explain(seen: object, expected: object) -> str:
    """A failure message for a student: the case that differs, what was expected there and what came back."""
    difference = first_difference(seen, expected)
    if difference is None:
        return ""
    label, want, got = difference
    how = f"differs beyond the tolerance ({TOLERANCE})" if _floats(got, want) else "differs"
    return f"{label or 'the observation'} {how}\n  expected: {shown(want)}\n  got:      {shown(got)}"
