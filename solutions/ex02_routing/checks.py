"""Observers for exercise 2 (routing): predict_setattr and find_unregistered_tensors driven on the cases of each
graded test cell, recording what they return and what they do to the modules, never what they should return."""

from __future__ import annotations

import random
from collections import OrderedDict, namedtuple
from collections.abc import Callable

import torch
from torch import nn

from grader.observing import attempt, plain, raised, returns_type, single_thread

# ---------------------------------------------------------------------------------------------------------
# Part 1: predict_setattr
# ---------------------------------------------------------------------------------------------------------


class Probe(nn.Module):
    assignments = 0  # every assignment that goes through Probe.__setattr__ adds one

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(2))
        self.register_buffer("mean", torch.zeros(2))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)
        self.inner = nn.Linear(2, 2)
        self.note = "a plain attribute"

    @property
    def size(self) -> int:  # a property without a setter
        return 2

    def __setattr__(self, name: str, value: object) -> None:
        Probe.assignments += 1
        super().__setattr__(name, value)

    def __copy__(self) -> None:
        raise RuntimeError("predict_setattr must not copy the module")

    def __deepcopy__(self, memo: dict) -> None:
        raise RuntimeError("predict_setattr must not copy the module")

    def __reduce_ex__(self, protocol: object) -> None:
        raise RuntimeError("predict_setattr must not copy or pickle the module")


def registries(module: nn.Module) -> list:
    held = vars(module)
    return (
        [(key, id(item)) for key, item in held.items()]
        + [
            (key, sorted((k, id(v)) for k, v in held[key].items()))
            for key in ("_parameters", "_buffers", "_modules")
            if key in held
        ]
        + [sorted(held.get("_non_persistent_buffers_set", ()))]
    )


@single_thread
def observe_predict_visible(ns: dict) -> list:
    """The visible cell: what is returned for each of its assignments to a Probe and to a half-initialised Probe,
    and whether the Probe was assigned to or changed, or the half-initialised one given any attribute."""
    predict_setattr = ns.get("predict_setattr")
    if not callable(predict_setattr):
        return ["missing", type(predict_setattr).__name__]
    probe = Probe()
    cases = [
        ("weight", nn.Parameter(torch.zeros(2))),
        ("weight", torch.zeros(2)),
        ("mean", torch.ones(2)),
        ("scratch", torch.ones(2)),
        ("inner", nn.ReLU()),
        ("inner", torch.zeros(2)),
        ("fresh", torch.zeros(2)),
        ("fresh", nn.Buffer(torch.zeros(2), persistent=False)),
        ("note", nn.Buffer(torch.zeros(2))),
        ("note", nn.Parameter(torch.zeros(2))),
        ("size", torch.zeros(2)),
        ("a.b", nn.Parameter(torch.zeros(2))),
    ]
    before, assignments = registries(probe), Probe.assignments
    observations: list = [attempt(predict_setattr, probe, name, value) for name, value in cases]
    observations.append(Probe.assignments == assignments)
    observations.append(registries(probe) == before)
    half = Probe.__new__(Probe)  # nn.Module.__init__ never ran
    for name, value in [("weight", nn.Parameter(torch.zeros(2))), ("fresh", torch.zeros(2))]:
        observations.append(attempt(predict_setattr, half, name, value))
    observations.append(vars(half) == {})
    return observations


# The generated assignments of the hidden cell of part 1: the same classes, the same chosen cases, the same draws
# from the same seed, labels left out. The cell also performs each assignment on a copy, to know the answer; an
# observer does not.
PREDICT_SEED, PREDICT_CASES = 20130303, 60


class CopyRefused(RuntimeError):
    pass


def refuse(what: str) -> None:
    raise CopyRefused(
        f"predict_setattr must not copy the module ({what} was called): "
        "reason from the rules instead of trying the assignment on a copy"
    )


class Demo(nn.Module):
    scale_factor = 2.0  # a class attribute

    @property
    def level(self) -> object:  # a property with a setter: the setter stores the value elsewhere
        return vars(self).get("_level_store", 0)

    @level.setter
    def level(self, value: object) -> None:
        vars(self)["_level_store"] = value

    @property
    def kind(self) -> str:  # a property without a setter
        return "demo"

    def helper(self) -> str:
        return "a method"

    def forward(self, inputs: object) -> object:
        return inputs

    def __copy__(self) -> None:
        refuse("copy.copy")

    def __deepcopy__(self, memo: dict) -> None:
        refuse("copy.deepcopy")  # the cell's own copies are never made here

    def __reduce_ex__(self, protocol: object) -> None:
        refuse("__reduce_ex__ (pickle or copy)")

    def __getstate__(self) -> None:
        refuse("__getstate__ (pickle or copy)")


DEMO_CLASS_NAMES = ["level", "kind", "helper", "forward", "scale_factor", "extra_repr", "dump_patches"]
NAME_POOL = ["alpha", "beta", "gamma", "mean", "stats", "head", "body", "note", "cache", "table", "gain", "shift"]
EXISTING_KINDS = [
    "parameter", "None parameter", "buffer", "non-persistent buffer", "None buffer",
    "None non-persistent buffer", "submodule", "None submodule", "plain attribute", "plain tensor attribute",
]  # fmt: skip


def add_existing(module: nn.Module, name: str, kind: str, rng: random.Random) -> None:
    if kind == "parameter":
        module.register_parameter(name, nn.Parameter(torch.randn(2), requires_grad=rng.random() < 0.8))
    elif kind == "None parameter":
        module.register_parameter(name, None)
    elif kind == "buffer":
        module.register_buffer(name, torch.randn(2))
    elif kind == "non-persistent buffer":
        module.register_buffer(name, torch.randn(2), persistent=False)
    elif kind == "None buffer":
        module.register_buffer(name, None)
    elif kind == "None non-persistent buffer":
        module.register_buffer(name, None, persistent=False)
    elif kind == "submodule":
        module.add_module(name, rng.choice([nn.ReLU, nn.Tanh])())
    elif kind == "None submodule":
        module.register_module(name, None)
    elif kind == "plain attribute":
        object.__setattr__(module, name, rng.choice([3, "text", [1, 2], 0.5, None]))
    else:
        object.__setattr__(module, name, torch.zeros(rng.randint(1, 3)))


def make_module(rng: random.Random) -> tuple[nn.Module, list, list[str]]:
    """(module, the names it holds, names found on its class)."""
    kind = rng.choice(["demo"] * 6 + ["half"] * 2 + ["linear", "norm", "sequential"])
    if kind in ("demo", "half"):
        module = Demo() if kind == "demo" else Demo.__new__(Demo)
        kinds = EXISTING_KINDS if kind == "demo" else ["plain attribute", "plain tensor attribute"]
        held = []
        for name in rng.sample(NAME_POOL, rng.randint(0, 4)):
            held.append(name)
            add_existing(module, name, rng.choice(kinds), rng)
        return module, held, DEMO_CLASS_NAMES
    if kind == "linear":
        module = nn.Linear(2, 3, bias=rng.random() < 0.6)
        return (
            module,
            ["in_features", "out_features", "weight", "bias"],
            ["forward", "reset_parameters", "dump_patches"],
        )
    if kind == "norm":
        affine, track = rng.random() < 0.5, rng.random() < 0.5
        module = nn.BatchNorm1d(3, affine=affine, track_running_stats=track)
        held = ["eps", "momentum", "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
        return module, held, ["forward", "reset_running_stats", "_version"]
    return nn.Sequential(nn.Linear(2, 2), nn.ReLU()), ["0", "1"], ["forward", "append"]


def make_value(rng: random.Random) -> object:
    kind = rng.choice([
        "None", "None", "None", "a leaf Parameter", "a leaf Parameter", "a Parameter with requires_grad=False",
        "a non-leaf Parameter", "a persistent nn.Buffer", "a non-persistent nn.Buffer", "a module (nn.ReLU())",
        "a module (nn.Linear(1, 1))", "a plain tensor", "a plain tensor", "a plain int64 tensor",
        "a plain tensor that requires grad", "an int", "a list", "a str",
    ])  # fmt: skip
    if kind == "None":
        return None
    if kind == "a leaf Parameter":
        return nn.Parameter(torch.randn(2))
    if kind == "a Parameter with requires_grad=False":
        return nn.Parameter(torch.randn(2), requires_grad=False)
    if kind == "a non-leaf Parameter":
        value = nn.Parameter(torch.zeros(2), requires_grad=False)
        value.add_(torch.ones(2, requires_grad=True))  # in place: now a Parameter with a grad_fn
        return value
    if kind == "a persistent nn.Buffer":
        return nn.Buffer(torch.randn(2))
    if kind == "a non-persistent nn.Buffer":
        return nn.Buffer(torch.randn(2), persistent=False)
    if kind == "a module (nn.ReLU())":
        return nn.ReLU()
    if kind == "a module (nn.Linear(1, 1))":
        return nn.Linear(1, 1)
    if kind == "a plain tensor":
        return torch.randn(2)
    if kind == "a plain int64 tensor":
        return torch.arange(3)
    if kind == "a plain tensor that requires grad":
        return torch.randn(2, requires_grad=True)
    return {"an int": 7, "a list": [1, 2], "a str": "hello"}[kind]


def make_name(rng: random.Random, held: list, extra: list[str]) -> str:
    roll = rng.random()
    if held and roll < 0.55:
        return rng.choice(sorted(held))
    if roll < 0.7:
        return rng.choice(["fresh", "new_name", "extra"])
    if roll < 0.9:
        return rng.choice(extra)
    return rng.choice(["a.b", "head.weight", "x.y.z", ""])


def chosen_cases() -> list[tuple[nn.Module, str, object]]:
    with_none, with_note, with_stats = Demo(), Demo(), Demo()
    with_none.register_parameter("gain", None)
    object.__setattr__(with_note, "note", "text")
    with_stats.register_buffer("stats", torch.randn(2), persistent=False)
    return [
        (nn.Linear(2, 3), "weight", nn.ReLU()),
        (nn.Linear(2, 3), "bias", torch.zeros(3)),
        (with_none, "gain", 7),
        (with_note, "note", nn.Parameter(torch.randn(2))),
        (with_stats, "stats", nn.Buffer(torch.randn(2))),
    ]


def random_case(rng: random.Random) -> tuple[nn.Module, str, object]:
    module, held, extra = make_module(rng)
    name = make_name(rng, held, extra)
    return module, name, make_value(rng)


def predict_snapshot(module: nn.Module) -> list:
    state = []
    for key, item in vars(module).items():
        entry: tuple = (key, id(item))
        if key in ("_parameters", "_buffers", "_modules"):
            entry += (tuple((k, id(v)) for k, v in item.items()),)
        elif key == "_non_persistent_buffers_set":
            entry += (frozenset(item),)
        state.append(entry)
    return state


WATCHED = ["__setattr__", "register_parameter", "register_buffer", "register_module", "add_module"]


@single_thread
def observe_predict_hidden(ns: dict) -> list:
    """The hidden cell: the type returned for one assignment to an nn.Linear, then for each chosen and generated
    assignment what is returned, whether nn.Module's ways of assigning were left uncalled while it ran, and whether
    the module is as before the call."""
    predict_setattr = ns.get("predict_setattr")
    observations: list = [returns_type(predict_setattr, str, nn.Linear(2, 2), "in_features", 3)]
    if not callable(predict_setattr):
        return observations
    calls: list[str] = []
    watching_now = [False]

    def watching(method_name: str, original: Callable) -> Callable:
        def wrapper(self: nn.Module, *args: object, **kwargs: object) -> object:
            if watching_now[0]:
                calls.append(method_name)
            return original(self, *args, **kwargs)

        return wrapper

    rng = random.Random(PREDICT_SEED)
    originals = {method: vars(nn.Module)[method] for method in WATCHED}
    try:
        for method, original in originals.items():  # once: replacing a method of nn.Module is slow
            setattr(nn.Module, method, watching(method, original))
        chosen = chosen_cases()
        for case in range(1, len(chosen) + PREDICT_CASES + 1):
            module, name, value = chosen[case - 1] if case <= len(chosen) else random_case(rng)
            before = predict_snapshot(module)
            calls.clear()
            watching_now[0] = True
            try:
                got = predict_setattr(module, name, value)
            except Exception as error:  # noqa: BLE001
                observations.append(raised(error))
                continue
            finally:
                watching_now[0] = False
            try:
                observations.append([plain(got), not calls, predict_snapshot(module) == before])
            except Exception as error:  # noqa: BLE001 - a module left in a state the snapshot cannot read
                observations.append(raised(error))
    finally:
        for method, original in originals.items():
            setattr(nn.Module, method, original)
    return observations


# ---------------------------------------------------------------------------------------------------------
# Part 2: find_unregistered_tensors
# ---------------------------------------------------------------------------------------------------------


class Inner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(2, 2)  # registered: its weight and bias are not reported
        self.raw = torch.zeros(2)  # a plain tensor attribute
        self.pairs = [(1, torch.zeros(1))]


class Keeper(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(2))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)  # registered, though never saved
        self.raw = torch.zeros(2)
        self.table = [torch.zeros(1), 3, "text"]
        self.cache = {"key": torch.zeros(1), 7: (torch.ones(1), None)}
        self.extra = [nn.Parameter(torch.ones(1))]  # a Parameter in a plain list: not registered
        self.helpers = [Inner()]  # a module in a plain list: not walked
        self.inner = Inner()


@single_thread
def observe_find_visible(ns: dict) -> list:
    """The visible cell: what is returned for a Keeper and for an nn.Linear."""
    find = ns.get("find_unregistered_tensors")
    return [attempt(find, Keeper()), attempt(find, nn.Linear(2, 2))]


# The generated trees of the hidden cell of part 2: the same classes, the same chosen tree, the same draws from the
# same seed; the labels and the expected names are left out.
FIND_SEED, FIND_CASES = 20130404, 100
SLOT_NAMES = set(vars(nn.Module()))
Pair = namedtuple("Pair", "first second")
READS: list[str] = []  # attribute reads on Watched modules, recorded by the class below


class Bag(nn.Module):
    def forward(self, inputs: object) -> object:
        return inputs


class Watched(Bag):
    """Records every read of its state through attribute access; vars() goes unnoticed."""

    def __getattribute__(self, name: str) -> object:
        state = object.__getattribute__(self, "__dict__")
        if name in state and name not in SLOT_NAMES:
            READS.append(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> object:
        READS.append(name)
        return super().__getattr__(name)

    @property
    def loud(self) -> None:
        raise RuntimeError("the property 'loud' of a Watched module was read: read vars(module) instead")


ATTRIBUTE_NAMES = [
    "raw", "cache", "table", "pairs", "stash", "history", "extra", "_buffers_old", "_hooks_cache", "notes", "scale",
    "count",
]  # fmt: skip
CHILD_NAMES = ["inner", "left", "right", "head", "tail", "core"]
REGISTERED_NAMES = ["w", "v", "gain", "mean", "var", "mask", "step"]
DICT_KEYS = ["key", "w", 0, 7, -1, "it's", (1, "x"), 2.5, None, "0", "a b"]


def tree_value(rng: random.Random, depth: int, aliases: dict) -> object:
    kinds = ["tensor", "tensor", "Parameter", "nn.Buffer", "int", "str", "None", "module", "set", "alias"]
    if depth > 0:
        kinds += ["list", "tuple", "dict", "OrderedDict", "Pair"] * 2
    kind = rng.choice(kinds)
    if kind == "tensor":
        return torch.zeros(rng.randint(1, 3))
    if kind == "Parameter":
        return nn.Parameter(torch.zeros(1))
    if kind == "nn.Buffer":
        return nn.Buffer(torch.zeros(1), persistent=rng.random() < 0.5)
    if kind == "alias" and aliases:
        return aliases[rng.choice(sorted(aliases))]
    if kind == "int":
        return 3
    if kind == "str":
        return "text"
    if kind in ("None", "alias"):
        return None
    if kind == "module":
        held = Bag()
        vars(held)["raw"] = torch.zeros(1)  # not reported: modules outside _modules are not walked
        return held
    if kind == "set":
        return {1, 2} if rng.random() < 0.5 else {torch.zeros(1)}
    count = rng.randint(0, 3)
    if kind in ("dict", "OrderedDict"):
        keys = rng.sample(DICT_KEYS, count)
        items = [(key, tree_value(rng, depth - 1, aliases)) for key in keys]
        return (dict if kind == "dict" else OrderedDict)(items)
    if kind == "Pair":
        return Pair(*[tree_value(rng, depth - 1, aliases) for _ in range(2)])
    parts = [tree_value(rng, depth - 1, aliases) for _ in range(count)]
    return parts if kind == "list" else tuple(parts)


def fill(module: nn.Module, rng: random.Random) -> None:
    """Give a module registered state and plain attributes, as the cell does."""
    aliases = {}
    for name in rng.sample(REGISTERED_NAMES, rng.randint(0, 3)):
        if name in vars(module)["_parameters"] or name in vars(module)["_buffers"]:
            continue
        kind = rng.choice(["parameter", "None parameter", "buffer", "non-persistent buffer", "None buffer"])
        if kind == "parameter":
            module.register_parameter(name, nn.Parameter(torch.zeros(2)))
        elif kind == "None parameter":
            module.register_parameter(name, None)
        elif kind == "None buffer":
            module.register_buffer(name, None, persistent=rng.random() < 0.5)
        else:
            module.register_buffer(name, torch.zeros(2), persistent=kind == "buffer")
        if kind in ("parameter", "buffer", "non-persistent buffer"):
            aliases[name] = getattr(module, name)
    names = [n for n in rng.sample(ATTRIBUTE_NAMES, rng.randint(0, 4)) if n not in vars(module)]
    shared_list = None
    for name in names:
        if shared_list is not None and rng.random() < 0.2:
            value = shared_list
        elif rng.random() < 0.07:
            value = nn.Parameter(torch.zeros(1))
        else:
            value = tree_value(rng, rng.randint(0, 3), aliases)
        vars(module)[name] = value  # a plain attribute, whatever its value
        if type(value) is list:
            shared_list = value


def build(rng: random.Random, depth: int, finished: list) -> nn.Module:
    if finished and rng.random() < 0.2:
        return rng.choice(finished)  # the same object registered a second time: a shared submodule
    kinds = ["bag", "bag", "watched", "linear", "norm"] + (["sequential", "bag", "watched"] if depth else [])
    kind = rng.choice(kinds)
    if kind in ("bag", "watched"):
        module = Bag() if kind == "bag" else Watched()
        fill(module, rng)
        if depth:
            for name in rng.sample(CHILD_NAMES, rng.randint(0, 2)):
                if rng.random() < 0.15:
                    module.register_module(name, None)
                else:
                    module.add_module(name, build(rng, depth - 1, finished))
    else:
        if kind == "linear":
            module = nn.Linear(2, 2, bias=rng.random() < 0.5)
        elif kind == "norm":
            module = nn.BatchNorm1d(2, track_running_stats=rng.random() < 0.5)
        else:
            module = nn.Sequential(*[build(rng, depth - 1, finished) for _ in range(rng.randint(1, 3))])
        if rng.random() < 0.3:
            fill(module, rng)
    finished.append(module)
    return module


def chosen_tree() -> nn.Module:
    shared, left, root = Bag(), Bag(), Bag()
    vars(shared)["raw"] = torch.zeros(1)
    left.add_module("inner", shared)
    root.add_module("left", left)
    root.add_module("right", shared)
    return root


def find_snapshot(root: nn.Module) -> list:
    state = []
    for _, module in root.named_modules(remove_duplicate=False):
        for key, item in vars(module).items():
            entry: tuple = (key, id(item))
            if type(item) in (dict, set):
                entry += (
                    tuple(sorted((repr(k), id(v)) for k, v in item.items())) if type(item) is dict else frozenset(item),
                )
            state.append(entry)
    return state


@single_thread
def observe_find_hidden(ns: dict) -> list:
    """The hidden cell: the type returned for an nn.Linear, then for each chosen and generated tree what is
    returned, whether no Watched module saw an attribute read, and whether the tree is as before the call."""
    find = ns.get("find_unregistered_tensors")
    observations: list = [returns_type(find, list, nn.Linear(2, 2))]
    if not callable(find):
        return observations
    rng = random.Random(FIND_SEED)
    chosen = [chosen_tree()]
    for case in range(1, len(chosen) + FIND_CASES + 1):
        root = chosen[case - 1] if case <= len(chosen) else build(rng, rng.choice([0, 1, 2, 2, 3]), [])
        before = find_snapshot(root)
        READS.clear()
        try:
            got = find(root)
            observations.append([plain(got), not READS, find_snapshot(root) == before])
        except Exception as error:  # noqa: BLE001
            observations.append(raised(error))
    return observations


OBSERVERS = {
    "test_predict_setattr_visible": observe_predict_visible,
    "test_predict_setattr_hidden": observe_predict_hidden,
    "test_find_unregistered_tensors_visible": observe_find_visible,
    "test_find_unregistered_tensors_hidden": observe_find_hidden,
}
