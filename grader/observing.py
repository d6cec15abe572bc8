"""Helpers for an exercise's checks (solutions/<exercise>/checks.py): turn whatever a submission returns into plain
JSON data, call it case by case, run observers on one thread or record a failure that stops them; load a checks
module from its text; compare observations with the solution's (agrees; grader.rules judges the differences rule by
rule).

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

import ast
import functools
import itertools
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


def plain(value: object, depth: int = 0, sets: bool = False) -> object:
    """`value` as JSON data, judged by exact type: a subclass of str, dict, list... is reported, not converted.

    Tensors (and Parameters) become {"tensor": nested lists}; with `sets`, a set or frozenset becomes {"set": its
    items, sorted}; anything else becomes {"type": its class name}.
    """
    kind = type(value)
    if depth > 20:
        return {"type": "too deep"}
    if kind in SCALARS:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind in (list, tuple):
        return [plain(item, depth + 1, sets) for item in value]
    if kind is dict:
        if all(type(key) is str for key in value):
            return {key: plain(item, depth + 1, sets) for key, item in value.items()}
        return {"dict items": [[plain(k, depth + 1, sets), plain(v, depth + 1, sets)] for k, v in value.items()]}
    if sets and kind in (set, frozenset):
        return {"set": sorted((plain(item, depth + 1, sets) for item in value), key=json.dumps)}
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


def fixed(rule: int, what: str, observe: Callable[[], object]) -> tuple[str, object]:
    """A fixed case of rule `rule` of a part's contract (its number as the notebook states it): the case's label,
    "rule 2: what the case does", and observe(), a failure recorded as its exception. It observes only what its rule
    asks, so that no other rule's mistake makes it differ (grader.rules)."""
    [seen] = in_turn([[]], observe)
    return f"rule {rule}: {what}", seen


def seeded(cases: list, observe: Callable[..., object]) -> list[tuple[str, object]]:
    """observe(*case) for every generated case, labelled "seeded case 3 of 100". Each case's observation names what
    it looks at by the rule that asks for it: {"rule 3: every gradient": ..., ...} (grader.rules)."""
    return [(f"seeded case {n} of {len(cases)}", seen) for n, seen in enumerate(in_turn(cases, observe), start=1)]


def labelled(*cases: tuple[str, object]) -> dict[str, object]:
    """A hidden test's observation: each case's observation under its label, in the order they run (fixed cases
    first). Each difference from the solution's is judged by the rule its label names (grader.rules)."""
    observation = dict(cases)
    if len(observation) != len(cases):
        raise ValueError("two cases of one observation have the same label")
    return observation


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


def changed(before: dict, after: dict) -> list[str]:
    """What differs between two records of the same things by name (a snapshot before a call, one after): each name
    whose record differs, or that one lacks, in the order met; "the order" where only the order of the names
    changed. [] when nothing did: an observation that says what changed lets a message name it."""
    names = [name for name in dict.fromkeys([*before, *after]) if before.get(name, _LACKED) != after.get(name, _LACKED)]
    return names or ([] if list(before) == list(after) else ["the order"])


_LACKED = object()  # what stands for a name one record lacks


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


# An input space: the generated cases of a hidden test, every combination of small values of the dimensions its
# contract names (bounded-exhaustive), each case labelled with its values ("combination 3 of 48: registry=buffer,
# persistent=no"), smallest first, so that the first case that differs is the smallest one that does.
# grader/coverage.py counts the cases per value from these labels.

COMBINATION_LABEL = re.compile(r"combination (\d+) of (\d+): ([^;]*)")
Point = dict[str, str]  # a generated case: its value of each dimension


def every(
    dimensions: dict[str, list[str]], most: int | None = None, together: list[tuple[str, ...]] | None = None
) -> list[Point]:
    """Every combination of the dimensions' values, smallest first. Each dimension lists its values from the plainest
    (first) to the most unusual; a combination's size is how many of its values are not the plainest, then the sum
    of their places. With `most`, only the combinations of at most that many unusual values (each pair of unusual
    values, say, with most=2); with `together` (groups of the dimensions that interact), only those whose unusual
    values all lie in one group."""
    places = [range(len(values)) for values in dimensions.values()]
    names = list(dimensions)
    groups = [set(group) for group in together] if together is not None else None
    chosen = []
    for indices in itertools.product(*places):
        unusual = {name for name, index in zip(names, indices, strict=True) if index > 0}
        if most is not None and len(unusual) > most or groups is not None and not any(unusual <= g for g in groups):
            continue
        chosen.append(indices)
    chosen.sort(key=lambda indices: (sum(index > 0 for index in indices), sum(indices)))
    return [{name: dimensions[name][index] for name, index in zip(names, indices, strict=True)} for indices in chosen]


def spanned(cases: list[tuple[Point, str, tuple]], observe: Callable[..., object]) -> list[tuple[str, object]]:
    """observe(*arguments) for every generated case (its point, a short text that draws it or '', the arguments of
    observe), in the order given (smallest first), each labelled with its point: "combination 3 of 48:
    registry=buffer, persistent=no; <text>"."""
    labels = []
    for number, (point, text, _) in enumerate(cases, start=1):
        values = ", ".join(f"{name}={value}" for name, value in point.items())
        if any(mark in part for pair in point.items() for part in pair for mark in ",;="):
            raise ValueError(f"a dimension or value holds ',', ';' or '=': {values}")
        labels.append(f"combination {number} of {len(cases)}: {values}" + (f"; {text}" if text else ""))
    return list(zip(labels, in_turn([arguments for _, _, arguments in cases], observe), strict=True))


def dimensions_of(label: str) -> Point | None:
    """The dimension values a generated case's label carries (None for a fixed or seeded case)."""
    found = COMBINATION_LABEL.match(label)
    if found is None:
        return None
    return dict(pair.split("=", 1) for pair in found.group(3).split(", "))


# The values the shapes of graphs(4, 4) reach, as a part's SPACES declares them (a part may declare fewer).
GRAPH_SPACE = {
    "modules": ["1", "2", "3", "4"],
    "depth": ["0", "1", "2", "3"],
    "None children": ["0", "1", "2 or more"],
    "twice in a parent": ["no", "yes"],
    "under two parents": ["no", "yes"],
    "inside a shared module": ["no", "yes"],
}
Graph = tuple[tuple[int | None, ...], ...]  # node -> its child slots in order: a node's index, or None
# A graph with a bit of everything, for the cases that vary something else: module 3 under two parents at two
# depths, a None slot. With children under c0, c1, ...: '' (0), 'c0' (1), 'c0.c0' (3), 'c0.c1' None, 'c1' (2), and
# 'c1.c0' the same module as 'c0.c0' (named_modules() order: 0, 1, 3, 2).
SHOWCASE: Graph = ((1, 2), (3, None), (3,), ())


def graphs(modules: int, slots: int, width: int = 3) -> list[Graph]:
    """Every module graph of at most `modules` modules and `slots` child slots in all (at most `width` per module),
    smallest first: node 0 is the root, nodes are numbered in the order they are first placed, and each slot holds
    a new module, None, or a module already placed (registered a second time: shared), never an ancestor."""
    found: list[Graph] = []

    def children(node: int, count: int, used: int, prefix: tuple) -> list[tuple[tuple, int]]:
        lists = [(prefix, count)]
        if len(prefix) < width and used < slots:
            for entry in [*([count] if count < modules else []), None, *(j for j in range(count) if j != node)]:
                grown = count + 1 if entry == count else count
                lists += children(node, grown, used + 1, (*prefix, entry))
        return lists

    def extend(nodes: list[tuple], node: int, used: int) -> None:
        if node == len(nodes):
            if _acyclic(nodes):
                found.append(tuple(nodes))
            return
        for slots_here, count in children(node, len(nodes), used, ()):
            grown = [*nodes[:node], slots_here, *nodes[node + 1 :], *[() for _ in range(count - len(nodes))]]
            extend(grown, node + 1, used + len(slots_here))

    extend([()], 0, 0)
    found.sort(key=lambda graph: (len(graph), sum(map(len, graph))))
    return found


def graph_cases(modules: int, slots: int) -> list[tuple[Point, str, tuple[Graph]]]:
    """Every graph of graphs(modules, slots) as a generated case (spanned): its dimensions, its drawing, (graph,)."""
    return [(graph_dimensions(graph), drawn(graph), (graph,)) for graph in graphs(modules, slots)]


def _acyclic(nodes: list[tuple]) -> bool:
    state: dict[int, str] = {}

    def visit(node: int) -> bool:
        if state.get(node) == "open":
            return False
        if node not in state:
            state[node] = "open"
            if not all(visit(child) for child in nodes[node] if child is not None):
                return False
            state[node] = "done"
        return True

    return visit(0)


def graph_dimensions(graph: Graph) -> Point:
    """What a module graph's shape is made of: its modules, its depth (the longest path down), its None slots, and
    which sharing it has: a module twice under one parent, under two parents, or with one parent but reached along
    several paths (inside a shared module)."""
    parents: dict[int, list[int]] = {}
    for node, slots in enumerate(graph):
        for child in slots:
            if child is not None:
                parents.setdefault(child, []).append(node)
    paths = [1] + [0] * (len(graph) - 1)
    depth = [0] * len(graph)
    for node in _parents_first(graph):
        for child in graph[node]:
            if child is not None:
                paths[child] += paths[node]
                depth[child] = max(depth[child], depth[node] + 1)
    nones = sum(child is None for slots in graph for child in slots)
    return {
        "modules": str(len(graph)),
        "depth": str(max(depth)),
        "None children": str(nones) if nones < 2 else "2 or more",
        "twice in a parent": _yes(any(len(set(held)) < len(held) for held in parents.values())),
        "under two parents": _yes(any(len(set(held)) > 1 for held in parents.values())),
        "inside a shared module": _yes(
            any(len(parents.get(node, [])) == 1 and paths[node] > 1 for node in range(len(graph)))
        ),
    }


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _parents_first(graph: Graph) -> list[int]:
    """The nodes of an acyclic graph, every parent before its children."""
    order: list[int] = []
    done: set[int] = set()

    def visit(node: int) -> None:
        if node in done:
            return
        done.add(node)
        for child in graph[node]:
            if child is not None:
                visit(child)
        order.append(node)

    visit(0)
    return order[::-1]


def drawn(graph: Graph) -> str:
    """A graph as text, for a case's label: "graph 0>1,2 1>3,None 2>3" (each module with children, then its
    slots)."""
    return "graph " + (
        " ".join(f"{node}>{','.join(map(str, slots))}" for node, slots in enumerate(graph) if slots) or "0"
    )


def built(graph: Graph, make: Callable[[int, list[object]], object]) -> list[object]:
    """The modules of a graph, in node order (the root first): make(node, its children or None, in slot order)
    builds each, children first."""
    made: dict[int, object] = {}
    for node in reversed(_parents_first(graph)):
        made[node] = make(node, [None if child is None else made[child] for child in graph[node]])
    return [made[node] for node in range(len(graph))]


HOOK_KINDS = {  # a kind of hook: the method of nn.Module that registers it, and the options that make the kind
    "forward pre-hook": ("register_forward_pre_hook", {}),
    "forward pre-hook with_kwargs": ("register_forward_pre_hook", {"with_kwargs": True}),
    "forward hook": ("register_forward_hook", {}),
    "forward hook with_kwargs": ("register_forward_hook", {"with_kwargs": True}),
    "forward hook always_call": ("register_forward_hook", {"always_call": True}),
    "full backward pre-hook": ("register_full_backward_pre_hook", {}),
    "full backward hook": ("register_full_backward_hook", {}),
    "old backward hook": ("register_backward_hook", {}),
    "state_dict pre-hook": ("register_state_dict_pre_hook", {}),
    "state_dict post-hook": ("register_state_dict_post_hook", {}),
    "load_state_dict pre-hook": ("register_load_state_dict_pre_hook", {}),
    "load_state_dict post-hook": ("register_load_state_dict_post_hook", {}),
}


def register_hook(module: torch.nn.Module, kind: str, hook: Callable, **options: object) -> object:
    """Register `hook` on `module` as a hook of `kind` (HOOK_KINDS), with these options too (prepend=True...): the
    handle. The old-style backward hook's deprecation warning is silenced."""
    import warnings

    method, kind_options = HOOK_KINDS[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(module, method)(hook, **kind_options, **options)


def orders(count: int, removals: int) -> list[str]:
    """Every order of registering `count` hooks (a, b, ... in that order) and removing each through its handle up to
    `removals` times, every removal after its hook's registration: "+a +b -a -a". Shortest first."""
    names = "abcdefghijklmnopqrstuvwxyz"[:count]
    found: list[tuple[str, ...]] = []

    def grow(events: tuple[str, ...], registered: int, removed: dict[str, int]) -> None:
        if registered == count:
            found.append(events)
        if registered < count:
            grow((*events, f"+{names[registered]}"), registered + 1, removed)
        for name in names[:registered]:
            if removed.get(name, 0) < removals:
                grow((*events, f"-{name}"), registered, {**removed, name: removed.get(name, 0) + 1})

    grow((), 0, {})
    return [" ".join(events) for events in sorted(found, key=len)]


def holder(children: list[object]) -> torch.nn.Module:
    """A plain nn.Module holding these children (None included) under the keys c0, c1, ..., in order: a node of a
    module graph (built)."""
    import torch

    module = torch.nn.Module()
    for slot, child in enumerate(children):
        module.register_module(f"c{slot}", child)
    return module


VISIBLE_TESTS = "the visible tests"  # the one case of a visible test cell's observation (replay)
STOPPED = "the visible tests stop with an exception"  # how visible_failure says that a test cell raised
SAME_DATA = ("torch.equal", "torch.allclose")  # calls whose two arguments must also hold the same plain data


def replay(steps: list[dict], submission: dict) -> dict[str, dict]:
    """The notebook's visible test cells, run again from the course's own text in a fresh namespace: they are written
    once (in the notebook) and observed here as plain data, judged by the grader (visible_failure).

    Each step is {"run": a cell's source} (a given cell, or the visible lines of a hidden-test cell), {"run": ...,
    "grade_id": ...} (a visible test cell, observed) or {"take": names} (a solution cell: the names it defines, taken
    from the submission's namespace). Only the submission's answers come from it, never a test's helpers or a name
    the submission shadows. In a visible test cell every `assert` records what it looks at (recording) and the cell's
    outcome ends the list: {VISIBLE_TESTS: [record, ..., ["passes"] or ["fails", class name, message]]}. torch's
    generator is seeded, and restored afterwards."""
    import builtins

    import torch

    fresh: dict = {"__name__": "__main__", "__builtins__": builtins}
    outcomes: dict[str, dict] = {}
    with torch.random.fork_rng(devices=[]):
        seed_torch(0)
        for step in steps:
            if "take" in step:
                fresh.update({name: submission[name] for name in step["take"] if name in submission})
                continue
            records: list = []
            fresh["__recorded__"] = functools.partial(_record, records)
            code = recording(step["run"], step["grade_id"]) if "grade_id" in step else step["run"]
            try:
                exec(compile(code, step.get("grade_id", "a given cell"), "exec"), fresh)
                records.append(["passes"])
            except (Exception, SystemExit) as error:  # noqa: BLE001 - a failing test is an observation
                records.append(["fails", type(error).__name__, _message(error)])
            if "grade_id" in step:
                outcomes[step["grade_id"]] = {VISIBLE_TESTS: records}
    return outcomes


def recording(source: str, name: str) -> ast.Module:
    """A test cell whose asserts record what they look at: `assert a and b` is two checks, `assert x == y`
    records both sides, `assert torch.equal(x, y)` both arguments, any other assert its truth; each is judged in
    the cell (raising AssertionError with the assert's message, as the notebook does) and again by the grader."""
    tree = ast.parse(source, name)

    class Recorded(ast.NodeTransformer):
        def visit_Assert(self, node: ast.Assert) -> list[ast.stmt]:
            self.generic_visit(node)
            test = node.test
            parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
            message = ast.Lambda(_no_arguments(), node.msg or ast.Constant(None))
            return [
                ast.Expr(ast.Call(ast.Name("__recorded__", ast.Load()), [*_looked_at(part), message], []))
                for part in parts
            ]

    return ast.fix_missing_locations(Recorded().visit(tree))


def _no_arguments() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def _looked_at(test: ast.expr) -> list[ast.expr]:
    """The arguments of __recorded__ for one checked expression: its kind and text, then what it looks at."""
    text = ast.Constant(ast.unparse(test))
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        kind = ast.Constant(type(test.ops[0]).__name__)
        return [kind, text, test.left, test.comparators[0]]
    if isinstance(test, ast.Call) and ast.unparse(test.func) in SAME_DATA and len(test.args) == 2:
        return [ast.Constant("SameData"), text, test.func, *test.args]
    return [ast.Constant("Truth"), text, test]


def _record(records: list, kind: str, text: str, *looked_at: object) -> None:
    """Record one check of a visible test cell and judge it here too, as the notebook's assert does."""
    message = looked_at[-1]
    if kind == "Truth":
        holds = bool(looked_at[0])
        records.append([kind, text, holds])
    elif kind == "SameData":
        function, first, second = looked_at[:3]
        holds = bool(function(first, second))
        records.append([kind, text, holds, data(first), data(second)])
    else:
        left, right = looked_at[:2]
        holds = bool(COMPARISONS[kind](left, right))
        records.append([kind, text, holds, plain(left, sets=True), plain(right, sets=True)])
    if not holds:
        raise AssertionError(message())


COMPARISONS: dict[str, Callable[[object, object], object]] = {
    "Eq": lambda a, b: a == b,
    "NotEq": lambda a, b: a != b,
    "Is": lambda a, b: a is b,
    "IsNot": lambda a, b: a is not b,
    "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
    "Lt": lambda a, b: a < b,
    "LtE": lambda a, b: a <= b,
    "Gt": lambda a, b: a > b,
    "GtE": lambda a, b: a >= b,
}


def visible_failure(observation: object) -> tuple[str, str] | None:
    """Why a visible test cell's observation (replay) fails, judged here from its plain data: the first check that
    does not hold (a comparison that held in the submission's process must also hold on the plain values it saw), or
    the cell's own failure, as (the check in the course's words, what the submission's values were); None when it
    passes."""
    records = observation.get(VISIBLE_TESTS) if type(observation) is dict else None
    if type(records) is not list or not records or type(records[-1]) is not list:
        return "the visible tests could not be observed", ""
    for record in records[:-1]:
        problem = _check_failure(record)
        if problem:
            return problem
    if records[-1] != ["passes"]:
        ending = records[-1] + ["", ""]
        return STOPPED, f"{shown(ending[1])}: {shown(ending[2])}"
    return None


def _check_failure(record: object) -> tuple[str, str] | None:
    """Why one recorded check fails: it did not hold in the submission's process, or its values are not the same."""
    named = type(record) is list and len(record) >= 3 and type(record[1]) is str
    if not named or record[2] is not True:
        return f"`assert {record[1] if named else '...'}` does not hold", ""
    if record[0] in ("Eq", "SameData") and (len(record) != 5 or not _same_data(record[3], record[4])):
        sides = [*record, None, None]
        return f"`assert {record[1]}` does not hold", f"it compares {shown(sides[3])} with {shown(sides[4])}"
    return None


def _same_data(left: object, right: object) -> bool:
    """Whether two compared values hold the same plain data. An object plain() can only name by its class (a module,
    a named tuple) compared with another such object or with a sequence is left to the comparison made where they
    live; compared with a scalar or a mapping, it is not the same data (an object that claims to equal a string)."""
    opaque = [type(side) is dict and list(side) == ["type"] for side in (left, right)]
    if any(opaque):
        return all(type(side) is list or is_opaque for side, is_opaque in zip((left, right), opaque, strict=True))
    return agrees(left, right)


def _message(error: BaseException, limit: int = 400) -> str:
    """An exception's message, shortened; '' where the submission's exception cannot even say it."""
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - a submission's __str__ may raise
        return ""
    short = str.__getitem__(text, slice(0, limit))  # str's own slicing: a plain str, whatever subclass it came as
    return short if str.__len__(text) <= limit else short[: limit - 3] + "..."


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
    if compared_as_floats(seen, expected):
        return math.isclose(seen, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return seen == expected


def compared_as_floats(seen: object, expected: object) -> bool:
    """Two numbers compared within the tolerance: both int or float (never bool), at least one a float."""
    numbers = (int, float)
    return type(seen) in numbers and type(expected) in numbers and float in (type(seen), type(expected))


def shown(value: object, limit: int = 600) -> str:
    """An observation as compact JSON, shortened to `limit` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


MODULE_SOURCE = ("torch/nn/modules/module.py", "torch\\nn\\modules\\module.py")  # where nn.Module's machinery lives


def borrowed_machinery(
    roots: dict[str, object], namespace: dict, also: tuple = (), leave: tuple = (), allow: tuple = ()
) -> list[str]:
    """What a submission's own objects reach of torch.nn.Module's machinery, as "path: what" strings (plain data for
    a "must not" rule of a contract; [] when nothing is found).

    From each root (a class or function the submission defines) the walk follows, by reference: a class's MRO,
    metaclass and __dict__ values; a function's __wrapped__, closure cells, defaults and keyword defaults, the
    globals of `namespace` its code (and nested code) names, and attributes of a module object named by that code
    (`nn.Module.__setattr__` names nn, Module, __setattr__); staticmethod, classmethod, property, partial and bound
    method wrappers; containers' items. It never enters the objects in `leave` (another part's, judged there) nor
    those in `allow` (nn.Module itself, where the contract lets the code name it for isinstance). It enters only
    objects the submission made (classes whose __module__ is the namespace's, functions whose globals are the
    namespace); anything else is judged, not entered. Found: nn.Module or a subclass of it, an instance of one, a
    function or code object of torch/nn/modules/module.py (a method of nn.Module, its __func__,
    register_module_forward_hook...), that module itself, and any object in `also`. Not airtight: a name built at run
    time (getattr with a computed string, exec, importlib) is not followed; the contract says so."""
    import torch

    module_type, source_module = torch.nn.Module, sys.modules.get("torch.nn.modules.module")
    home = namespace.get("__name__")
    found: list[str] = []
    seen: set[int] = {id(value) for value in (*leave, *allow)}

    def forbidden(value: object) -> str | None:
        code = getattr(value, "__code__", value) if callable(value) or isinstance(value, types.CodeType) else None
        filename = getattr(code, "co_filename", "")
        if value is module_type:
            return "torch.nn.Module"
        if isinstance(value, type) and issubclass(value, module_type):
            return f"{value.__qualname__}, a subclass of torch.nn.Module"
        if isinstance(value, module_type):
            return f"an instance of {kind_of(value)}"
        if value is source_module:
            return "the module torch.nn.modules.module"
        if any(value is other for other in also):
            return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__name__)}"
        if type(filename) is str and filename.endswith(MODULE_SOURCE):
            return f"{getattr(value, '__qualname__', getattr(code, 'co_qualname', 'code'))} of torch.nn.Module's source"
        return None

    def visit(value: object, path: str, depth: int = 0) -> None:
        if depth > 12 or id(value) in seen:
            return
        seen.add(id(value))
        what = forbidden(value)
        if what:
            found.append(f"{path}: {what}")
            return
        for inner, where in parts(value):
            visit(inner, f"{path}{where}", depth + 1)

    def parts(value: object) -> list[tuple[object, str]]:
        if type(value) in (list, tuple, set, frozenset):
            return [(item, f"[{n}]") for n, item in enumerate(value)]
        if type(value) is dict:
            return [(item, f"[{key!r}]") for key, item in value.items()]
        if isinstance(value, (staticmethod, classmethod)):
            return [(value.__func__, ".__func__")]
        if isinstance(value, property):
            return [(value.fget, ".fget"), (value.fset, ".fset"), (value.fdel, ".fdel")]
        if isinstance(value, functools.partial):
            return [(value.func, ".func"), (value.args, ".args"), (value.keywords, ".keywords")]
        if isinstance(value, types.MethodType):
            return [(value.__func__, ".__func__"), (value.__self__, ".__self__")]
        if isinstance(value, type):
            if value.__module__ != home:
                return []
            bases = [(base, f".__mro__[{n}]") for n, base in enumerate(value.__mro__[1:], start=1)]
            return [(type(value), ".__class__"), *bases, *((item, f".{key}") for key, item in vars(value).items())]
        if isinstance(value, types.FunctionType):
            if value.__globals__ is not namespace:
                return [(value.__code__, ".__code__")]
            cells = [
                (cell.cell_contents, f".__closure__[{n}]")
                for n, cell in enumerate(value.__closure__ or ())
                if _has_contents(cell)
            ]
            wrapped = [(vars(value)["__wrapped__"], ".__wrapped__")] if "__wrapped__" in vars(value) else []
            return [
                (value.__code__, ".__code__"),
                *wrapped,
                *cells,
                (value.__defaults__, ".__defaults__"),
                (value.__kwdefaults__, ".__kwdefaults__"),
                *named_globals(value.__code__),
            ]
        if isinstance(value, types.CodeType):
            return [(const, f".{const.co_name}") for const in value.co_consts if isinstance(const, types.CodeType)]
        if type(value).__module__ == home and hasattr(value, "__dict__"):  # an instance of the submission's class
            return [(type(value), ".__class__"), (vars(value), ".__dict__")]
        return []

    def named_globals(code: types.CodeType) -> list[tuple[object, str]]:
        names = set(code.co_names)
        stack = [const for const in code.co_consts if isinstance(const, types.CodeType)]
        while stack:
            inner = stack.pop()
            names.update(inner.co_names)
            stack += [const for const in inner.co_consts if isinstance(const, types.CodeType)]
        reached = [(namespace[name], f" -> global {name}") for name in sorted(names) if name in namespace]
        modules = [(value, path) for value, path in reached if isinstance(value, types.ModuleType)]
        entered = {id(value) for value, _ in modules}
        while modules:  # attributes of a module named by the code: nn.Module, torch.nn.modules.module.Module
            module, path = modules.pop()
            for name in sorted(names):
                inner = vars(module).get(name)
                if inner is None or id(inner) in entered:
                    continue
                entered.add(id(inner))
                reached.append((inner, f"{path}.{name}"))
                if isinstance(inner, types.ModuleType):
                    modules.append((inner, f"{path}.{name}"))
        return reached

    for name, root in roots.items():
        visit(root, name)
    return found


def _has_contents(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises ValueError
    except ValueError:
        return False
    return True


def code_that_runs(action: Callable[[], object], watched: dict) -> list[str]:
    """What runs while action() runs that a "must not" rule forbids, in the order seen: the names (watched: {code
    object: name}) of the watched functions whose code runs, "the profiler was switched off" if the action removed
    it, and, inside the grading sandbox, what its guard (grader/inside_sandbox/guard.py) sees: code the submission
    made at run time that runs, a process or a thread started, the profiler replaced. What action() returns or
    raises is not observed here.

    sys.setprofile sees every Python call of this thread by its code, whatever reference made it (a method looked up
    then, or a function captured long before), and a copy of a watched function's code too (code objects compare
    by their content); threading.setprofile sees those of the threads the threading module starts. Outside the
    sandbox there is no guard: a copy compiled again from the source, or work done in another process or a thread
    started without the threading module, is not seen there."""
    import contextlib
    import threading

    guard = getattr(sys.modules.get("guard"), "GUARD", None)  # the grading sandbox's child installs it
    ran: list[str] = []

    def profile(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            if code in watched:
                ran.append(watched[code])
            elif guard is not None and guard.made_at_run_time(code):
                ran.append(f"code made at run time ran ({code.co_qualname})")

    previous, previous_threads = sys.getprofile(), threading.getprofile()
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        with guard.watching() if guard is not None else contextlib.nullcontext([]) as escapes:
            with contextlib.suppress(Exception):  # what it returns or raises is other clauses' business
                action()
            switched_off = sys.getprofile() is not profile or threading.getprofile() is not profile
    finally:
        sys.setprofile(previous)
        threading.setprofile(previous_threads)
    return list(dict.fromkeys([*ran, *escapes, *(["the profiler was switched off"] if switched_off else [])]))
