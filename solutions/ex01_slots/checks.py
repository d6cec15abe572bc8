"""Observers for exercise 1 (slots): classify_slots and copy_sharing_parameters driven on the cases of each graded
test cell, recording what they return and what they do to the modules, never what they should return."""

from __future__ import annotations

import random
import warnings
from collections import OrderedDict
from collections.abc import Callable

import torch
from torch import nn

from grader.observing import (
    GRAPH_SPACE,
    HOOK_KINDS,
    built,
    changed,
    every,
    fixed,
    graph_cases,
    holder,
    labelled,
    plain,
    register_hook,
    returns_type,
    seed_torch,
    seeded,
    single_thread,
    spanned,
    walk,
)

# The vocabulary of classify_slots (the read-only cell `group_names`), not an answer: which key belongs to which
# group is left to the parent's comparison.
GROUPS = (
    "registry",
    "non-persistent marker",
    "mode flag",
    "hook table",
    "hook flag table",
    "backward-kind flag",
    "other",
)
# The 17 slots nn.Module.__init__ writes (torch 2.1 to 2.15), in its order, as part 2's observation lists them.
SLOT_NAMES = [
    "training", "_parameters", "_buffers", "_non_persistent_buffers_set", "_backward_pre_hooks",
    "_backward_hooks", "_is_full_backward_hook", "_forward_hooks", "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks", "_modules",
]  # fmt: skip
CONTAINERS = set(SLOT_NAMES) - {"training", "_is_full_backward_hook"}


# ---------------------------------------------------------------------------------------------------------
# The input space of both parts: a module in each state (built, attributes set before super().__init__(), or
# half-built with the first k slots, for every k, its attributes before them, after them or none) and a built
# module with each kind of hook (every option), a removed one, and what else the slots may hold; part 1 every pair of
# unusual values, part 2 (slower) each value once, and every module graph of up to 3 modules and 3 child slots.
# ---------------------------------------------------------------------------------------------------------

SLOT_HOOKS: dict[str, Callable[[nn.Module], object]] = {
    "none": lambda module: None,
    **{kind: lambda module, kind=kind: register_hook(module, kind, silent_hook) for kind in HOOK_KINDS},
    "forward pre-hook prepended": lambda module: prepend_second(module, "forward pre-hook"),
    "forward hook prepended": lambda module: prepend_second(module, "forward hook"),
    "a removed hook": lambda module: register_hook(module, "forward hook always_call", silent_hook).remove(),
}
SLOT_EXTRAS: dict[str, Callable[[nn.Module], object]] = {
    "nothing": lambda module: None,
    "a non-persistent buffer and None entries": lambda module: none_entries(module),
    "eval mode": lambda module: module.eval(),
    "a training flag that is no bool": lambda module: vars(module).update(training=1),
    "attributes named like slots": lambda module: vars(module).update(
        _hooks=OrderedDict(),
        _buffers_old={},
        _custom_forward_hooks=OrderedDict(),
        _old_state_dict_hooks=OrderedDict(),
        _forward_hooks_cache_with_kwargs=OrderedDict(),
        _backward_hooks_always_called=OrderedDict(),
        forward_hooks=OrderedDict(),  # a slot's name but for its leading underscores: none, one more, one less
        __modules={},
        _training=True,
    ),
    "_compiled_call_impl": lambda module: vars(module).update(_compiled_call_impl=module._call_impl),
    "containers of the other dict type": lambda module: other_dict_types(module),
    "a module held as a plain attribute": lambda module: vars(module).update(helper=nn.Linear(2, 2)),
}
SLOT_SPACE = {
    "state": ["built", "attributes before super().__init__()", "half-built"],
    "hook": list(SLOT_HOOKS),
    "extra": list(SLOT_EXTRAS),
    "slots": [str(len(SLOT_NAMES)), *(str(count) for count in range(len(SLOT_NAMES)))],  # all of them first
    "attributes": ["none", "before the slots", "after the slots"],
}


def prepend_second(module: nn.Module, kind: str) -> None:
    """Two hooks in one table, the second prepended: the table's order is not the order of its ids."""
    register_hook(module, kind, silent_hook)
    register_hook(module, kind, print, prepend=True)


def other_dict_types(module: nn.Module) -> nn.Module:
    """Every dict container slot of the module holding the other type it may hold (a dict an OrderedDict, an
    OrderedDict a dict), same entries: rule 3's "exactly the same type as in the original", whichever it is."""
    state = vars(module)
    for name in CONTAINERS & set(state):
        if type(state[name]) is dict:
            state[name] = OrderedDict(state[name])
        elif type(state[name]) is OrderedDict:
            state[name] = dict(state[name])
    return module


def none_entries(module: nn.Module) -> None:
    module.register_buffer("scratch", torch.zeros(1), persistent=False)
    module.register_parameter("unused", None)
    module.register_module("absent", None)


def slot_space(most: int | None) -> list:
    """The generated cases of both parts, smallest first: (point, '', (point,)): every combination of at most `most`
    unusual values, the built modules' (hooks and extras) and the half-built ones' (slots and attributes) apart."""
    dimensions = {name: SLOT_SPACE[name] for name in ("state", "hook", "extra")}
    complete = [point for point in every(dimensions, most=most) if point["state"] != "half-built"]
    dimensions = {name: SLOT_SPACE[name] for name in ("slots", "attributes")}
    half = [{"state": "half-built", **point} for point in every(dimensions, most=most)]
    return [(point, "", (point,)) for point in complete + half]


class Light(nn.Module):
    """A module that is quick to build (generated cases build many): the attributes `before` set before
    super().__init__(), then a parameter and a plain attribute."""

    def __init__(self, before: list[tuple[str, object]]) -> None:
        for name, value in before:
            setattr(self, name, value)
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(2))
        self.width = 2


def slot_module(point: dict) -> nn.Module:
    """A generated case's module."""
    decoys = [("cache", OrderedDict()), ("_hooks", {"w": None})]
    if point["state"] == "half-built":
        return half_built(
            Light,
            SLOT_NAMES[: int(point["slots"])],
            [] if point["attributes"] == "none" else decoys,
            point["attributes"] == "before the slots",
        )
    module = Light(decoys if point["state"] == "attributes before super().__init__()" else [])
    SLOT_HOOKS[point["hook"]](module)
    SLOT_EXTRAS[point["extra"]](module)
    return module


def slot_graph(graph: tuple) -> nn.Module:
    """A generated case of part 2: plain modules in the shape of a module graph, each with a Parameter of its own,
    every other one with a forward hook."""

    def make(node: int, children: list) -> nn.Module:
        module = holder(children)
        module.register_parameter("w", nn.Parameter(torch.zeros(1)))
        if node % 2 == 0:
            module.register_forward_hook(silent_hook)
        return module

    return built(graph, make)[0]


# ---------------------------------------------------------------------------------------------------------
# Part 1: classify_slots
# ---------------------------------------------------------------------------------------------------------


class WithCache(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cache = OrderedDict()  # an OrderedDict like the hook tables, but a user attribute


# The seeded cases of part 1: modules generated from one seed, the same in every run.
CLASSIFY_SEED, CLASSIFY_CASES = 20130101, 100
CLASSIFY_DECOY_NAMES = [
    "cache", "hooks", "registry", "flags", "mode", "Training", "training_steps", "parameters_",
    "_forward_hooks_extra", "_parameters_backup", "_buffers_", "_modules_cache", "_Modules", "_hooks",
    "_non_persistent", "_is_full_backward_hook_seen", "_state_dict_hooks_old", "_backward_hooks2",
    "_forward_pre_hooks_with_kwargs_v2", "_load_state_dict_post_hook", "_compiled_call_impl",
    "forward_hooks", "__buffers", "_training", "parameters", "__is_full_backward_hook", "state_dict_pre_hooks",
]  # fmt: skip
CLASSIFY_DECOY_VALUES: list[Callable[[], object]] = [
    OrderedDict,
    lambda: OrderedDict([(0, True)]),
    dict,
    lambda: {"w": None},
    set,
    lambda: {"buf"},
    lambda: True,
    lambda: False,
    lambda: None,
    lambda: 3,
    lambda: "note",
    lambda: torch.zeros(2),
    lambda: [1, 2],
    lambda: print,
]


def draw_decoys(
    rng: random.Random, names: list[str], values: list[Callable[[], object]], low: int, high: int
) -> list[tuple[str, object]]:
    """Between low and high plain attributes named like the slots, drawn from the case's seed."""
    decoys = []
    for name in rng.sample(names, rng.randint(low, high)):
        make = rng.choice(values)
        decoys.append((name, make()))
    return decoys


def classify_decoys(rng: random.Random, low: int, high: int) -> list[tuple[str, object]]:
    return draw_decoys(rng, CLASSIFY_DECOY_NAMES, CLASSIFY_DECOY_VALUES, low, high)


class Extras(nn.Module):
    def __init__(self, width: int, decoys: list[tuple[str, object]]) -> None:
        super().__init__()
        self.width = width
        self.proj = nn.Linear(width, width)
        for name, value in decoys:
            setattr(self, name, value)
        self.register_buffer("scale", torch.ones(width), persistent=False)


class Early(nn.Module):
    def __init__(self, decoys: list[tuple[str, object]]) -> None:
        for name, value in decoys:  # plain attributes are accepted before super().__init__()
            setattr(self, name, value)
        super().__init__()
        self.head = nn.Linear(2, 2)


def silent_hook(*args: object, **kwargs: object) -> None:
    return None


def add_hooks(module: nn.Module, rng: random.Random, hook_for: Callable[[str], Callable], most: int) -> None:
    """Between 1 and `most` hooks of distinct kinds, drawn from the case's seed; hook_for(kind) is the
    function registered."""
    full_backward = rng.random() < 0.5
    kinds = ["pre", "fwd", "bwd_pre", "bwd", "sd_pre", "sd_post", "load_pre", "load_post", "removed"]
    for kind in rng.sample(kinds, rng.randint(1, min(most, len(kinds)))):
        prepend, with_kwargs, always_call = (rng.random() < 0.5 for _ in range(3))
        hook = hook_for(kind)
        if kind == "pre":
            module.register_forward_pre_hook(hook, prepend=prepend, with_kwargs=with_kwargs)
        elif kind == "fwd":
            module.register_forward_hook(hook, prepend=prepend, with_kwargs=with_kwargs, always_call=always_call)
        elif kind == "bwd_pre":
            module.register_full_backward_pre_hook(hook, prepend=prepend)
        elif kind == "bwd" and full_backward:
            module.register_full_backward_hook(hook, prepend=prepend)
        elif kind == "bwd":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module.register_backward_hook(hook)
        elif kind == "sd_pre":
            module.register_state_dict_pre_hook(hook)
        elif kind == "sd_post":
            module.register_state_dict_post_hook(hook)
        elif kind == "load_pre":
            module.register_load_state_dict_pre_hook(hook)
        elif kind == "load_post":
            module.register_load_state_dict_post_hook(hook)
        else:
            module.register_forward_hook(hook, with_kwargs=True, always_call=True).remove()


def half_made(module: nn.Module, slots: list[str], decoys: list[tuple[str, object]], decoys_first: bool) -> None:
    """Give a module made by __new__ the first slots of a fresh nn.Module, its decoys before or after them."""
    template = vars(nn.Module())
    if decoys_first:
        for name, value in decoys:
            setattr(module, name, value)
    for name in slots:
        vars(module)[name] = template[name]
    if not decoys_first:
        for name, value in decoys:
            setattr(module, name, value)


def classify_built(rng: random.Random) -> nn.Module:
    kind = rng.choice(["module", "linear", "conv", "norm", "sequential", "extras"])
    if kind == "module":
        return nn.Module()
    if kind == "linear":
        i, o, bias = rng.randint(1, 5), rng.randint(1, 5), rng.random() < 0.5
        return nn.Linear(i, o, bias=bias)
    if kind == "conv":
        cls = rng.choice([nn.Conv1d, nn.Conv2d])
        c_in, c_out, k = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
        return cls(c_in, c_out, k)
    if kind == "norm":
        n, affine, track = rng.randint(1, 4), rng.random() < 0.5, rng.random() < 0.5
        return nn.BatchNorm1d(n, affine=affine, track_running_stats=track)
    if kind == "sequential":
        shared = nn.Linear(3, 3)
        return nn.Sequential(shared, nn.ReLU(), nn.Sequential(shared, nn.Tanh()), shared)
    decoys = classify_decoys(rng, 1, 4)
    return Extras(rng.randint(1, 3), decoys)


def classify_case(rng: random.Random) -> nn.Module:
    kind = rng.choice(["built", "built", "built", "early", "new", "compiled"])
    if kind == "early":
        module = Early(classify_decoys(rng, 1, 4))
    elif kind == "new":
        cls = rng.choice([nn.Module, nn.Linear, nn.BatchNorm1d, Extras, Early])
        module = cls.__new__(cls)
        n_slots = rng.choice([0, 0, rng.randint(1, 16), 17])
        decoys = classify_decoys(rng, 0, 3)
        half_made(module, list(vars(nn.Module()))[:n_slots], decoys, decoys_first=rng.random() < 0.5)
        return module
    else:
        module = classify_built(rng)
        if kind == "compiled":
            module._compiled_call_impl = module._call_impl  # what m.compile() stores, without compiling
    if rng.random() < 0.6:
        add_hooks(module, rng, lambda kind: silent_hook, most=9)
    if rng.random() < 0.3:
        module.register_buffer("extra_buffer", torch.zeros(1), persistent=False)
        module.register_parameter("no_param", None)
        module.register_module("no_child", None)
    if rng.random() < 0.3:
        module.eval()
    if rng.random() < 0.3:
        for name, value in classify_decoys(rng, 1, 3):
            setattr(module, name, value)
    return module


def classify_snapshot(module: nn.Module) -> list:
    state = []
    for name, value in vars(module).items():
        entry: tuple = (name, type(value), id(value))
        if type(value) in (dict, OrderedDict):
            entry += (tuple((key, id(item)) for key, item in value.items()),)
        elif type(value) is set:
            entry += (frozenset(value),)
        state.append(entry)
    return state


def changed_entries(before: list, after: list) -> list[str]:
    """The entries of vars() that two snapshots (classify_snapshot's or CopyCase.snapshot's: each entry led by its
    str names, the module's path then the key) see differ, by name in the order met ("root.0._forward_hooks"): an
    object, container or key changed, an entry added or removed (observing.changed)."""

    def by_name(snapshot: list) -> dict:
        return {".".join(part for part in entry if type(part) is str): entry for entry in snapshot}

    return changed(by_name(before), by_name(after))


# The rules of part 1's contract (numbered as the notebook numbers them), by number.
CLAUSES = {
    "test_classify_slots_hidden": {
        1: "a plain dict: the keys of vars(module) in order, each mapped to one of the seven group names",
        2: "each of the seventeen slots in its group, whatever it holds",
        3: "every other key is OTHER, whatever its name or value",
        4: "half-built modules: attributes before the slots, only some slots, or none",
        5: "the module is not modified, and the dict returned is not the module's own",
    },
    "test_copy_hidden": {
        1: "a new object of exactly the module's type, made without calling a constructor",
        2: "vars(copy) has exactly the keys of vars(module), in order",
        3: "each container slot is a new object of the same type, with the same keys in the same order",
        4: "parameters and buffers are the very same objects (None stays None)",
        5: "children copied by the same rules, recursively; a shared submodule copied once",
        6: "the hook callables and the flag tables' True values are the same objects",
        7: "every other entry of vars refers to the same object",
        8: "the original is not modified (its containers stay its own)",
    },
}
FLAG_TABLES = {"_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs"}


def pairs(got: dict) -> list[tuple[object, object]]:
    """The items of a dict in its own order: an exact dict or OrderedDict iterated as it is (an OrderedDict keeps its
    order apart from the dict underneath, after move_to_end), any other subclass through dict's own methods (its
    overrides are not run)."""
    if type(got) in (dict, OrderedDict):
        return list(got.items())
    return list(dict.items(got))


def mapping_items(got: object) -> object:
    """The items of what classify_slots returned, read with dict's own methods (a dict subclass is read as a dict:
    its exact type is rule 1's business); anything else by its type."""
    if not isinstance(got, dict):
        return ["not a dict", type(got).__name__]
    return [[plain(key), plain(group)] for key, group in pairs(got)]


def classify_shape(classify: Callable, module: nn.Module) -> list:
    """Rule 1: the exact type returned, its keys in order, whether they are those of vars(module) and whether every
    value is exactly a str among GROUPS."""
    got = classify(module)
    if not isinstance(got, dict):
        return ["not a dict", type(got).__name__]
    keys = [plain(key) for key, _ in pairs(got)]
    values = [value for _, value in pairs(got)]
    return {
        "its class": type(got).__name__ if type(got) in (dict, OrderedDict) else "a subclass",
        "its keys, in order": keys,
        "they are those of vars(module)": keys == list(vars(module)),
        "every value is one of the seven group names": all(type(value) is str and value in GROUPS for value in values),
    }


def classify_items(classify: Callable, module: nn.Module) -> object:
    """Rules 2 and 3: every key with its group, in order."""
    return mapping_items(classify(module))


def classify_others(classify: Callable, module: nn.Module) -> object:
    """Rule 3: the group of every key that is not one of the seventeen slots, in order."""
    got = classify(module)
    if not isinstance(got, dict):
        return ["not a dict", type(got).__name__]
    slots = set(SLOT_NAMES)
    return [[plain(key), plain(group)] for key, group in pairs(got) if key not in slots]


def classify_early(classify: Callable, module: nn.Module) -> object:
    """Rule 4 on a module with attributes set before super().__init__(): the keys in order, the group of every key
    that is not a slot, and each slot that got none of the six slot groups (which one is rule 2's business)."""
    got = classify(module)
    if not isinstance(got, dict):
        return ["not a dict", type(got).__name__]
    slots = set(SLOT_NAMES)
    return {
        "its keys, in order": [plain(key) for key, _ in pairs(got)],
        "each key that is not a slot, with its group": [
            [plain(key), plain(group)] for key, group in pairs(got) if key not in slots
        ],
        "each slot that is not in one of the six slot groups, with its group": [
            [plain(key), plain(group)]
            for key, group in pairs(got)
            if key in slots and not (type(group) is str and group in GROUPS[:6])
        ],
    }


def classify_untouched(classify: Callable, module: nn.Module) -> list:
    """Rule 5: whether vars(module) and its containers are as before the call, whether the dict returned is a
    different object from vars(module), and whether a second call on a module of the same layout returns a new dict
    that a caller's edit of the first one does not reach (rule 1's "a new plain dict")."""
    before = classify_snapshot(module)
    got = classify(module)
    seen = {
        "the entries of vars(module) it changed": changed_entries(before, classify_snapshot(module)),
        "a dict of its own": got is not vars(module),
    }
    if isinstance(got, dict):
        marker = object()
        dict.__setitem__(got, marker, "other")  # what a caller may do with its own dict, undone below
        again = classify(module)
        dict.pop(got, marker)
        seen["a new dict on every call, which the caller's edits of an earlier one do not reach"] = (
            again is not got and not (isinstance(again, dict) and marker in dict.keys(again))
        )
    return seen


class Underscored(nn.Module):
    """A module whose user attributes differ from a slot only by leading underscores: none, one more, one less."""

    def __init__(self) -> None:
        super().__init__()
        for name in ("forward_hooks", "__modules", "_training", "parameters", "__forward_hooks_with_kwargs"):
            setattr(self, name, OrderedDict())
        vars(self).update(__non_persistent_buffers_set=set(), is_full_backward_hook=True, __training=False)


class CallableCache(nn.Module):
    """A module whose user attributes look like slots: names and values."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = OrderedDict()
        self._hooks = OrderedDict([(0, silent_hook)])
        self.my_forward_hooks = OrderedDict()
        self.extra_with_kwargs = OrderedDict([(0, True)])
        self._forward_hooks_extra = OrderedDict()
        self._custom_forward_hooks = OrderedDict()  # the patterns of slot names, not slot names
        self._forward_hooks_cache_with_kwargs = OrderedDict([(0, True)])
        self._old_state_dict_hooks = OrderedDict()
        self._parameters_backup = {}
        self._non_persistent = set()
        self.Training = True
        self.full = None


def half_built(cls: type, slots: list[str], decoys: list[tuple[str, object]], decoys_first: bool) -> nn.Module:
    module = cls.__new__(cls)
    half_made(module, slots, decoys, decoys_first)
    return module


def with_full_backward_hook() -> nn.Module:
    module = nn.Linear(2, 2)
    module.register_full_backward_hook(silent_hook)  # _is_full_backward_hook becomes True
    return module


def with_old_backward_hook() -> nn.Module:
    module = nn.Linear(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module.register_backward_hook(silent_hook)  # _is_full_backward_hook becomes False
    return module


def with_every_hook() -> nn.Module:
    module = nn.Linear(2, 3)
    module.register_forward_pre_hook(silent_hook, with_kwargs=True)
    module.register_forward_hook(silent_hook, with_kwargs=True, always_call=True)
    module.register_full_backward_pre_hook(silent_hook)
    module.register_state_dict_pre_hook(silent_hook)
    module.register_load_state_dict_post_hook(silent_hook)
    module.register_buffer("scratch", torch.zeros(1), persistent=False)
    return module


def in_eval(module: nn.Module) -> nn.Module:
    return module.eval()


def compiled_linear() -> nn.Module:
    module = nn.Linear(2, 2)
    module._compiled_call_impl = module._call_impl  # what m.compile() stores, without compiling
    return module


def replaced_slots() -> nn.Module:
    """A module whose slots hold values of unusual types: still the same slots."""
    module = nn.Linear(2, 2)
    vars(module)["_forward_hooks"] = {}  # a plain dict where an OrderedDict was
    vars(module)["_non_persistent_buffers_set"] = OrderedDict()
    vars(module)["training"] = 1
    return module


def classify_case_list() -> list:
    rng = random.Random(CLASSIFY_SEED)
    return [[classify_case(rng)] for _ in range(CLASSIFY_CASES)]


@single_thread
def observe_classify_hidden(ns: dict) -> object:
    """The hidden test: fixed cases rule by rule of part 1's contract, then for each generated module the items
    returned, in order, and whether vars(module) and its containers are as before the call."""
    classify = ns.get("classify_slots")
    if not callable(classify):
        return ["missing", type(classify).__name__]

    def observe_case(module: nn.Module) -> object:
        """One seeded case, each part under the rule that decides it: the class and the keys (rule 1), each slot's
        group (rule 2) and each other key's (rule 3), and the module left as it was (rule 5). In a half-built module
        rules 2, 3 and 4 decide each group together: those are unnamed (they break the rules the fixed cases show
        broken). What is not a dict at all differs as a whole (rule 1's fixed cases say it)."""
        half_built = list(vars(module))[: len(SLOT_NAMES)] != list(SLOT_NAMES)
        before = classify_snapshot(module)
        got = classify(module)
        if not isinstance(got, dict):
            return ["not a dict", type(got).__name__]
        slots = set(SLOT_NAMES)
        groups = [[plain(key), plain(group)] for key, group in pairs(got)]
        seen = {"rule 1: exactly a dict": type(got) is dict, "rule 1: its keys, in order": [key for key, _ in groups]}
        if half_built:
            seen["each key's group (a half-built module)"] = groups
        else:
            seen["rule 2: each slot's group"] = [[key, group] for key, group in groups if key in slots]
            seen["rule 3: each other key's group"] = [[key, group] for key, group in groups if key not in slots]
        seen["rule 5: the entries of vars(module) it changed"] = changed_entries(before, classify_snapshot(module))
        return seen

    def shape(make: Callable[[], nn.Module]) -> Callable[[], object]:
        return lambda: classify_shape(classify, make())

    def items(make: Callable[[], nn.Module]) -> Callable[[], object]:
        return lambda: classify_items(classify, make())

    def others(make: Callable[[], nn.Module]) -> Callable[[], object]:
        return lambda: classify_others(classify, make())

    def untouched(make: Callable[[], nn.Module]) -> Callable[[], object]:
        return lambda: classify_untouched(classify, make())

    first = lambda: returns_type(classify, dict, nn.Linear(2, 2))  # noqa: E731 - the visible line of the cell
    return labelled(
        fixed(1, "nn.Linear(2, 2) gives exactly a dict", first),
        fixed(1, "nn.Linear(3, 2): its keys in order, str group names", shape(lambda: nn.Linear(3, 2))),
        fixed(1, "a plain nn.Module()", shape(nn.Module)),
        fixed(1, "nn.Linear with hooks of every kind", shape(with_every_hook)),
        fixed(1, "a module with user attributes named like slots", shape(CallableCache)),
        fixed(2, "a fresh nn.Module(): its seventeen slots", items(nn.Module)),
        fixed(2, "nn.Linear(3, 2): the slots, then in_features, out_features", items(lambda: nn.Linear(3, 2))),
        fixed(2, "nn.Sequential of two modules", items(lambda: nn.Sequential(nn.Linear(2, 2), nn.ReLU()))),
        fixed(2, "a module in eval mode (training is False)", items(lambda: in_eval(nn.Linear(2, 2)))),
        fixed(2, "a full backward hook (_is_full_backward_hook is True)", items(with_full_backward_hook)),
        fixed(2, "an old-style backward hook (_is_full_backward_hook is False)", items(with_old_backward_hook)),
        fixed(2, "hooks of every kind and a non-persistent buffer", items(with_every_hook)),
        fixed(2, "slots holding values of unusual types", items(replaced_slots)),
        fixed(3, "a user attribute holding an OrderedDict", others(WithCache)),
        fixed(3, "user attributes named and typed like slots", others(CallableCache)),
        fixed(3, "names that differ from a slot only by leading underscores", others(Underscored)),
        fixed(3, "nn.BatchNorm1d: eps, momentum, affine...", others(lambda: nn.BatchNorm1d(3))),
        fixed(3, "_compiled_call_impl, which m.compile() stores", others(compiled_linear)),
        fixed(4, "nn.Linear.__new__(nn.Linear): no slots at all", items(lambda: half_built(nn.Linear, [], [], False))),
        fixed(
            4,
            "__new__ with the first five slots, then two attributes",
            items(lambda: half_built(Extras, SLOT_NAMES[:5], [("cache", OrderedDict()), ("width", 3)], False)),
        ),
        fixed(
            4,
            "__new__ with two attributes, then the first eight slots",
            items(lambda: half_built(nn.Module, SLOT_NAMES[:8], [("mode", True), ("flags", set())], True)),
        ),
        fixed(
            4,
            "__new__ with only attributes and no slot",
            items(lambda: half_built(Early, [], [("training_steps", 3), ("registry", {"w": None})], True)),
        ),
        fixed(
            4,
            "attributes set before super().__init__() come first",
            lambda: classify_early(classify, Early([("mode", True), ("cache", OrderedDict()), ("width", 2)])),
        ),
        fixed(5, "nn.Linear with hooks of every kind", untouched(with_every_hook)),
        fixed(5, "a module with user attributes named like slots", untouched(CallableCache)),
        fixed(5, "a module made by __new__ with no slot", untouched(lambda: half_built(nn.Linear, [], [], False))),
        fixed(
            5,
            "__new__ with the first five slots",
            untouched(lambda: half_built(nn.Module, SLOT_NAMES[:5], [("width", 3)], False)),
        ),
        *spanned(slot_space(most=2), lambda point: observe_case(slot_module(point))),
        *seeded(classify_case_list(), observe_case),
    )


# ---------------------------------------------------------------------------------------------------------
# Part 2: copy_sharing_parameters
# ---------------------------------------------------------------------------------------------------------


def same_keys(got: object, expected: dict) -> bool:
    got_keys, expected_keys = list(got), list(expected)
    if len(got_keys) != len(expected_keys):
        return False
    return all(type(a) is type(b) and a == b for a, b in zip(got_keys, expected_keys, strict=True))


STRUCTURE_RULES = {
    1: "the root's copy: a new object of exactly its class",
    2: "the keys of vars, in order",
    3: "each container slot: a new object of its class, its keys in order",
    4: "each parameter and buffer: the original's object",
    5: "each child: copied (once for a shared one), None kept",
    6: "each hook and flag table entry: the original's object",
    7: "every other entry of vars: the original's object",
}


def structure(original: nn.Module, copy: object) -> dict:
    """How the copy relates to the original, walking both trees side by side: for each rule of part 2 the tree
    shows, the first place where it fails ("nowhere" where it holds), each under the rule's label. A child's own
    class, keys, containers and entries are the rules of those things (rule 5 is the copying of children itself)."""
    modules = walk(original, "root", lenient=True)
    original_ids = {id(module) for _, module in modules}
    container_ids = {id(vars(m)[n]) for _, m in modules for n in CONTAINERS if n in vars(m)}
    copy_of: dict[int, object] = {}
    failed: dict[int, str] = {}

    def fact(rule: int, holds: bool, where: str) -> None:
        if not holds:
            failed.setdefault(rule, where)

    def visit(orig: nn.Module, clone: object, path: str) -> None:
        if id(orig) in copy_of:
            fact(5, clone is copy_of[id(orig)], f"{path}: the copy of a module met before")
            return
        copy_of[id(orig)] = clone
        fact(1 if path == "root" else 5, id(clone) not in original_ids, f"{path}: a new object")
        fact(5, all(clone is not other for other in list(copy_of.values())[:-1]), f"{path}: one copy per module")
        fact(1, type(clone) is type(orig), f"{path}: its class")
        vo, vc = vars(orig), getattr(clone, "__dict__", {})
        fact(2, list(vc) == list(vo), f"{path}: the keys of vars")
        for name, value in vo.items():
            if name not in vc:
                continue  # rule 2's
            got = vc[name]
            if name not in CONTAINERS:
                fact(7, got is value, f"{path}.{name}")
                continue
            fact(3, got is not value and id(got) not in container_ids, f"{path}.{name}: a new object")
            fact(3, type(got) is type(value), f"{path}.{name}: its class")
            if not isinstance(got, (dict, set)):
                continue
            if type(value) is set:
                fact(3, all(type(item) is str for item in got) and sorted(got) == sorted(value), f"{path}.{name}")
                continue
            fact(3, same_keys(got, value), f"{path}.{name}: its keys in order")
            for number, (key, item) in enumerate(value.items(), 1):
                inner = dict.get(got, key, "absent") if isinstance(got, dict) else "absent"
                if name == "_modules" and item is None:
                    fact(5, inner is None, f"{path}.{key}: None")
                elif name == "_modules":
                    fact(5, isinstance(inner, nn.Module), f"{path}.{key}: a module")
                    if isinstance(inner, nn.Module):
                        visit(item, inner, f"{path}.{key}")
                else:
                    registered = name in ("_parameters", "_buffers")
                    fact(
                        4 if registered else 6,
                        inner is item,
                        f"{path}.{name}[{key!r}]" if registered else f"{path}.{name}, entry {number}",
                    )

    visit(original, copy, "root")
    return {
        f"rule {rule}: {what}, first failing at": failed.get(rule, "nowhere") for rule, what in STRUCTURE_RULES.items()
    }


# The seeded cases of part 2: trees generated from one seed. Each case also seeds torch before it builds its
# modules, so the weights (and the outputs recorded) are the same in every run whatever the submission draws from
# torch's generator.
COPY_SEED, COPY_CASES = 20130202, 30
COPY_DECOY_NAMES = [
    "cache", "hooks", "registry", "flags", "mode", "Training", "training_steps", "parameters_",
    "_forward_hooks_extra", "_parameters_backup", "_buffers_", "_modules_cache", "_hooks",
    "_non_persistent", "_is_full_backward_hook_seen", "_state_dict_hooks_old",
]  # fmt: skip
COPY_DECOY_VALUES: list[Callable[[], object]] = [
    lambda: OrderedDict([(0, True)]),
    lambda: {"w": None},
    lambda: {"buf"},
    lambda: True,
    lambda: None,
    lambda: 3,
    lambda: torch.zeros(2),
    lambda: [1, 2],
]


class CopyCase:
    """The state one run of part 2's hidden test shares between its cases."""

    def __init__(self, copy_sharing_parameters: Callable) -> None:
        self.copy_sharing_parameters = copy_sharing_parameters
        self.constructed: list[nn.Module] = []
        self.log: list[str] = []
        self.classes = self.make_classes()

    def make_classes(self) -> dict[str, type]:
        constructed = self.constructed

        class Extras(nn.Module):
            def __init__(self, width: int, decoys: list) -> None:
                super().__init__()
                constructed.append(self)
                self.width = width
                self.proj = nn.Linear(width, width)
                for name, value in decoys:
                    setattr(self, name, value)
                self.register_buffer("scale", torch.full((width,), 0.5), persistent=False)
                self.helpers = [nn.Linear(1, 1)]  # a plain list of modules: not registered, shared as it is

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.proj(x) * self.scale

        class Fork(nn.Module):
            def __init__(self, left: nn.Module, right: nn.Module) -> None:
                super().__init__()
                constructed.append(self)
                self.left = left
                self.right = right
                self.register_module("missing", None)
                self.register_parameter("unused", None)
                self.register_buffer("empty", None)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.left(x) + self.right(x)

        class Early(nn.Module):
            def __init__(self, width: int, decoys: list) -> None:
                constructed.append(self)
                for name, value in decoys:  # plain attributes are accepted before super().__init__()
                    setattr(self, name, value)
                super().__init__()
                self.head = nn.Linear(width, width)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.head(x)

        return {"Extras": Extras, "Fork": Fork, "Early": Early}

    def logging_hook(self, tag: str) -> Callable:
        log = self.log

        def hook(*args: object, **kwargs: object) -> None:
            log.append(tag)

        return hook

    @staticmethod
    def decoys(rng: random.Random, low: int, high: int) -> list[tuple[str, object]]:
        return draw_decoys(rng, COPY_DECOY_NAMES, COPY_DECOY_VALUES, low, high)

    def build_tree(self, rng: random.Random, width: int, depth: int, pool: list) -> nn.Module:
        if pool and rng.random() < 0.3:
            return rng.choice(pool)  # the same object in a second place: a shared submodule
        kinds = ["linear", "linear", "linear", "relu", "tanh", "identity", "norm", "extras", "early"]
        kind = rng.choice(kinds + ["sequential", "fork"] * 4 if depth > 0 else kinds)
        if kind == "sequential":
            children = [self.build_tree(rng, width, depth - 1, pool) for _ in range(rng.randint(1, 3))]
            module = nn.Sequential(*children)
        elif kind == "fork":
            left = self.build_tree(rng, width, depth - 1, pool)
            right = self.build_tree(rng, width, depth - 1, pool)
            module = self.classes["Fork"](left, right)
        elif kind == "linear":
            module = nn.Linear(width, width, bias=rng.random() < 0.7)
        elif kind == "norm":
            affine, track = rng.random() < 0.5, rng.random() < 0.5
            module = nn.BatchNorm1d(width, affine=affine, track_running_stats=track)
        elif kind == "extras":
            module = self.classes["Extras"](width, self.decoys(rng, 0, 3))
        elif kind == "early":
            module = self.classes["Early"](width, self.decoys(rng, 1, 3))
        else:
            module = {"relu": nn.ReLU, "tanh": nn.Tanh, "identity": nn.Identity}[kind]()
        pool.append(module)
        return module

    def make_case(self, rng: random.Random) -> tuple[nn.Module, int | None]:
        """(module, width or None when the module must not be called)."""
        kind = rng.choice(["tree"] * 6 + ["compiled", "new"])
        if kind == "new":
            cls = rng.choice(
                [nn.Module, nn.Linear, self.classes["Extras"], self.classes["Fork"], self.classes["Early"]]
            )
            module = cls.__new__(cls)
            n_slots = rng.choice([0, rng.randint(1, 16), 17])
            decoys = self.decoys(rng, 0, 3)
            half_made(module, SLOT_NAMES[:n_slots], decoys, decoys_first=rng.random() < 0.5)
            if n_slots == 17 and rng.random() < 0.7:
                child = nn.Linear(2, 2)
                module.register_parameter("w", nn.Parameter(torch.zeros(2)))
                module.add_module("child", child)
                module.add_module("nothing", None)
                module.add_module("again", child)
                module.register_forward_hook(self.logging_hook("new"), with_kwargs=True)
            return module, None
        width = rng.randint(1, 4)
        pool: list[nn.Module] = []
        module = self.build_tree(rng, width, rng.choice([0, 1, 2, 2, 3, 3]), pool)
        linears = [m for m in pool if type(m) is nn.Linear]
        if len(linears) >= 2 and rng.random() < 0.5:
            a, b = rng.sample(linears, 2)
            b.weight = a.weight
        for number, node in enumerate(pool, start=1):
            if rng.random() < 0.3:
                add_hooks(node, rng, lambda kind, number=number: self.logging_hook(f"{kind}@#{number}"), most=5)
            if rng.random() < 0.15:
                node.eval()
            if rng.random() < 0.15:
                for name, value in self.decoys(rng, 1, 2):
                    setattr(node, name, value)
        if kind == "compiled":
            module._compiled_call_impl = module._call_impl  # what m.compile() stores, without compiling
            return module, None
        return module, width

    def behaviour(self, original: nn.Module, copy: nn.Module, x: torch.Tensor) -> dict:
        """What the copy computes and which hooks it fires, and whether changes to it reach the original, each under
        the rule that decides it (what it computes, which every rule shapes, unnamed)."""
        seen: dict = {}
        log = self.log
        with torch.no_grad():
            log.clear()
            seen["what the copy computes"] = plain(copy(x))
            seen["rule 6: the hooks the copy fires"] = list(log)
            for _, module in walk(original, "root", lenient=True):  # an in-place update of the original's parameters...
                for parameter in vars(module)["_parameters"].values():
                    if parameter is not None:
                        parameter.mul_(0.5).add_(0.25)
            seen["rule 4: what the copy computes after the original's parameters change in place"] = plain(copy(x))
            probe = original.register_forward_hook(self.logging_hook("probe"))
            copy_again = self.copy_sharing_parameters(original)
            seen["a second copy, made with a hook added to the original"] = structure(original, copy_again)
            probe.remove()
            log.clear()
            copy_again(x)
            seen["the second copy fires the hook added to the original"] = "probe" in log
        copy.register_parameter("added_to_copy", nn.Parameter(torch.zeros(1)))
        seen["rule 8: a parameter added to the copy is not the original's"] = (
            "added_to_copy" not in vars(original)["_parameters"]
        )
        hooks_before = list(vars(original)["_forward_pre_hooks"])
        copy.register_forward_pre_hook(self.logging_hook("copy only"))
        seen["rule 8: a hook added to the copy is not the original's"] = (
            list(vars(original)["_forward_pre_hooks"]) == hooks_before
        )
        modes = [(path, vars(module)["training"]) for path, module in walk(original, "root", lenient=True)]
        copy.train(False)
        seen["rule 8: the copy's eval() leaves the original's modes"] = all(
            (path, vars(module)["training"]) in modes for path, module in walk(original, "root", lenient=True)
        )
        return seen

    def observe(self, module: nn.Module, width: int | None, gen: torch.Generator) -> dict:
        """One seeded case, each part under the rule that decides it; what the copy does is looked at only where its
        structure holds, unnamed where it does not (it breaks the rules shown broken)."""
        before = CopyCase.snapshot(module)
        n_constructed = len(self.constructed)
        copy = self.copy_sharing_parameters(module)
        seen: dict = {
            "rule 1: no constructor runs": len(self.constructed) == n_constructed,
            "rule 8: the entries of the original's vars it changed": changed_entries(before, CopyCase.snapshot(module)),
            "rule 1: the copy is a new object": copy is not module,
        }
        related = structure(module, copy)
        seen.update(related)
        if width is not None:
            x = torch.randn(3, width, generator=gen)  # drawn whether or not it is used: the next cases draw the same
            holds = all(where == "nowhere" for where in related.values())
            seen["what the copy does"] = self.behaviour(module, copy, x) if holds else "not looked at"
        return seen

    @staticmethod
    def snapshot(root: nn.Module) -> list:
        state = []
        for path, module in walk(root, "root", lenient=True):
            for name, value in vars(module).items():
                entry: tuple = (path, name, type(value), id(value))
                if type(value) in (dict, OrderedDict):
                    entry += (tuple((key, id(item)) for key, item in value.items()),)
                elif type(value) is set:
                    entry += (frozenset(value),)
                state.append(entry)
        return state


# The fixed cases of part 2's hidden test, rule by rule. Each builds its own modules.
CONSTRUCTED = [0]  # how many times Counted.__init__ ran


class Counted(nn.Module):
    """A module whose constructor needs no argument, and counts its calls."""

    def __init__(self) -> None:
        super().__init__()
        CONSTRUCTED[0] += 1
        self.weight = nn.Parameter(torch.ones(2))
        self.note = "made by the constructor"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight


class CountingHook:
    """A hook that is an object (not a function): the copy must hold this very object."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, *args: object, **kwargs: object) -> None:
        self.calls.append("called")


class Holder(nn.Module):
    """User attributes of every kind next to the slots."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(2, 2)
        self.table = {"scale": 2}
        self.names = {"a", "b"}
        self.order = OrderedDict([(0, True)])
        self.items = [1, 2]
        self.raw = torch.zeros(2)
        self.helpers = [nn.Linear(1, 1)]  # a plain list of modules: not registered, shared as it is
        self.width = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)


class Pair(nn.Module):
    """Two branches, the same child in both, a None child, a None parameter and a None buffer."""

    def __init__(self, shared: nn.Module) -> None:
        super().__init__()
        self.left = shared
        self.right = nn.Sequential(nn.Tanh(), shared)
        self.register_module("missing", None)
        self.register_parameter("unused", None)
        self.register_buffer("empty", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.left(x) + self.right(x)


def hooked_linear() -> tuple[nn.Module, CountingHook]:
    """nn.Linear(2, 2) with hooks in every table (an object as the forward hook) and a non-persistent buffer."""
    seed_torch(20130203)
    module = nn.Linear(2, 2)
    hook = CountingHook()
    module.register_forward_pre_hook(silent_hook, with_kwargs=True)
    module.register_forward_hook(hook, with_kwargs=True, always_call=True)
    module.register_full_backward_pre_hook(silent_hook)
    module.register_full_backward_hook(silent_hook)
    module.register_state_dict_pre_hook(silent_hook)
    module.register_state_dict_post_hook(silent_hook)
    module.register_load_state_dict_pre_hook(silent_hook)
    module.register_load_state_dict_post_hook(silent_hook)
    module.register_buffer("scratch", torch.ones(2), persistent=False)
    return module, hook


def hooked() -> nn.Module:
    return hooked_linear()[0]


def prepended() -> nn.Module:
    """Two hooks in one table, the second put first (prepend=True): the table's order is not the ids' order."""
    module = nn.Linear(2, 2)
    module.register_forward_hook(silent_hook)
    module.register_forward_hook(print, prepend=True)
    module.register_forward_pre_hook(silent_hook, with_kwargs=True)
    module.register_forward_pre_hook(print, prepend=True, with_kwargs=True)
    return module


def shared_tree() -> nn.Module:
    seed_torch(20130204)
    shared = nn.Linear(2, 2)
    tree = nn.Sequential(Pair(shared), nn.ReLU(), shared)
    tree.add_module("again", tree[0])  # a whole branch registered twice
    return tree


def nested_tree() -> nn.Module:
    seed_torch(20130205)
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 2), nn.Tanh()))


def batch_norm() -> nn.Module:
    seed_torch(20130206)
    norm = nn.BatchNorm1d(2)
    norm.train(False)
    return norm


def early_module() -> nn.Module:
    return Early([("mode", True), ("cache", OrderedDict()), ("width", 2)])


def half_linear(n_slots: int) -> nn.Module:
    return half_built(nn.Linear, SLOT_NAMES[:n_slots], [("in_features", 2), ("cache", {"w": None})], False)


def with_helper() -> nn.Module:
    """nn.Linear(2, 2) holding another nn.Linear as a plain entry of vars (written past __setattr__): not a child."""
    module = nn.Linear(2, 2)
    vars(module)["helper"] = nn.Linear(2, 2)
    return module


def copy_kind(copy_sharing_parameters: Callable, make: Callable[[], nn.Module]) -> list:
    """Rule 1: whether the copy is a new object of exactly the module's type, made without a constructor."""
    original = make()
    before = CONSTRUCTED[0]
    copy = copy_sharing_parameters(original)
    return {
        "exactly the module's class": type(copy) is type(original),
        "a new object": copy is not original,
        "no constructor ran": CONSTRUCTED[0] == before,
    }


def copy_keys(copy_sharing_parameters: Callable, make: Callable[[], nn.Module]) -> list:
    """Rule 2: the keys of vars(copy), in order."""
    original = make()
    copy = copy_sharing_parameters(original)
    keys = [plain(key) for key in vars(copy)]
    return {"the keys of vars(module), in order": keys == list(vars(original)), "the keys of vars(copy)": keys}


def container_facts(original: nn.Module, copy: object, taken: set[int]) -> dict:
    """Rule 3 for one module: for each container slot the original has, whether the copy's is a new object (none of
    `taken`), of exactly the same type, with the same keys in the same order."""
    state = vars(copy)
    facts = {}
    for name, value in vars(original).items():
        if name not in CONTAINERS:
            continue
        got = state.get(name)
        if type(value) is set:
            same = isinstance(got, set) and sorted(map(str, got)) == sorted(value)
        else:
            same = isinstance(got, dict) and same_keys([key for key, _ in pairs(got)], value)
        facts[name] = {
            "a new object": id(got) not in taken,
            "the same class": type(got) is type(value),
            "the same keys": same,
        }
    return facts


def tree_containers(root: nn.Module) -> set[int]:
    return {id(vars(m)[n]) for _, m in walk(root, "root", lenient=True) for n in CONTAINERS if n in vars(m)}


def copy_containers(copy_sharing_parameters: Callable, make: Callable[[], nn.Module]) -> dict:
    """Rule 3 on the module itself (its children are rule 5's)."""
    original = make()
    copy = copy_sharing_parameters(original)
    return container_facts(original, copy, tree_containers(original))


def copy_registered(copy_sharing_parameters: Callable, make: Callable[[], nn.Module]) -> dict:
    """Rule 4: whether each parameter and buffer of the copy is the original's object (None: still None), and
    whether an in-place update of the original's parameters is seen by the copy."""
    original = make()
    copy = copy_sharing_parameters(original)
    state = vars(copy)
    facts = {}
    for registry in ("_parameters", "_buffers"):
        got = state.get(registry)
        for key, value in vars(original)[registry].items():
            item = dict.get(got, key, "absent") if isinstance(got, dict) else "absent"
            facts[f"{registry}[{key!r}] is the original's"] = item is value
    x = torch.linspace(-1.0, 1.0, 6).reshape(3, 2)
    with torch.no_grad():
        before = plain(copy(x))
        for parameter in vars(original)["_parameters"].values():
            if parameter is not None:
                parameter.mul_(0.5).add_(0.25)
        facts["what the copy computes, before and after an in-place update of the original's parameters"] = [
            before,
            plain(copy(x)),
        ]
        facts["what the original computes after it"] = plain(original(x))
    return facts


def copy_children(copy_sharing_parameters: Callable, make: Callable[[], nn.Module]) -> dict:
    """Rule 5: walking the original's tree and the copy's side by side, for each child place: None stays None; a
    child is a new module of the same type, one copy per original module (the same copy wherever the original
    appears), with no container slot of the original tree; and what the copy computes."""
    original = make()
    originals = {id(module) for _, module in walk(original, "root", lenient=True)}
    copy = copy_sharing_parameters(original)
    taken = tree_containers(original)
    copy_of: dict[int, object] = {id(original): copy}
    facts: dict = {}

    def visit(orig: nn.Module, clone: object, path: str) -> None:
        children = vars(clone).get("_modules")
        for key, child in vars(orig)["_modules"].items():
            place = f"{path}.{key}"
            got = dict.get(children, key, "absent") if isinstance(children, dict) else "absent"
            if child is None:
                facts[place] = {"still None": got is None}
                continue
            if id(child) in copy_of:
                facts[place] = {"the copy made where it was met before": got is copy_of[id(child)]}
                continue
            copy_of[id(child)] = got
            new = id(got) not in originals and all(got is not other for other in list(copy_of.values())[:-1])
            own = all(id(vars(got).get(name)) not in taken for name in vars(child) if name in CONTAINERS)
            facts[place] = {
                "the same class": type(got) is type(child),
                "a new module": new,
                "containers of its own": own,
            }
            visit(child, got, place)

    visit(original, copy, "root")
    x = torch.linspace(-1.0, 1.0, 6).reshape(3, 2)
    with torch.no_grad():
        facts["what the copy computes"] = plain(copy(x))
    return facts


def copy_hooks(copy_sharing_parameters: Callable, make: Callable[[], tuple[nn.Module, CountingHook]]) -> dict:
    """Rule 6: whether each entry of the copy's hook tables and flag tables is the original's object, and whether
    running the copy calls the original's hook object."""
    original, hook = make()
    copy = copy_sharing_parameters(original)
    state = vars(copy)
    facts = {}
    for name, table in vars(original).items():
        if name not in CONTAINERS or name in ("_parameters", "_buffers", "_modules") or type(table) is set:
            continue
        got = state.get(name)
        for number, (key, value) in enumerate(table.items(), 1):  # by position: a handle's id is the process's count
            item = dict.get(got, key, "absent") if isinstance(got, dict) else "absent"
            facts[f"{name}, entry {number}, is the original's"] = item is value
    with torch.no_grad():
        copy(torch.ones(1, 2))
    facts["the calls of the hook object when the copy runs"] = list(hook.calls)
    return facts


def copy_others(copy_sharing_parameters: Callable, make: Callable[[], nn.Module]) -> dict:
    """Rule 7: whether every entry of vars other than the container slots is the original's object."""
    original = make()
    copy = copy_sharing_parameters(original)
    state = vars(copy)
    return {
        f"{name} is the original's": state.get(name, "absent") is value
        for name, value in vars(original).items()
        if name not in CONTAINERS
    }


def copy_leaves_original(copy_sharing_parameters: Callable, make: Callable[[], nn.Module]) -> list[str]:
    """Rule 8: the entries of vars() in the original's whole tree (vars and containers) that the copy changed."""
    original = make()
    before = CopyCase.snapshot(original)
    copy_sharing_parameters(original)
    return changed_entries(before, CopyCase.snapshot(original))


def copy_handles(copy_sharing_parameters: Callable) -> int:
    """Rule 8: a handle made on the original before the copy still removes the hook from the original (whose
    tables stay its own)."""
    original = nn.Linear(2, 2)
    handle = original.register_forward_hook(silent_hook)
    copy_sharing_parameters(original)
    handle.remove()
    return len(vars(original)["_forward_hooks"])  # what the copy's own table holds is rule 3's


@single_thread
def observe_copy_hidden(ns: dict) -> object:
    """The hidden test: fixed cases rule by rule of part 2's contract; then for each generated tree whether the
    copy was built without a constructor and without changing the original, how it relates to the original
    (structure()), and for a tree that can be called, what behaviour() records."""
    copy_sharing_parameters = ns.get("copy_sharing_parameters")
    if not callable(copy_sharing_parameters):
        return ["missing", type(copy_sharing_parameters).__name__]
    first_linear = nn.Linear(2, 2)  # kept alive for the whole observation, as the cell keeps its global
    f = copy_sharing_parameters

    def case(observe: Callable, make: Callable) -> Callable[[], object]:
        return lambda: observe(f, make)

    cases = CopyCase(copy_sharing_parameters)
    rng = random.Random(COPY_SEED)
    gen = torch.Generator().manual_seed(COPY_SEED)

    def observe_case(number: int) -> list:
        seed_torch(COPY_SEED + number)
        module, width = cases.make_case(rng)
        return cases.observe(module, width, gen)

    return labelled(
        fixed(1, "nn.Linear(2, 2) gives an nn.Linear", lambda: returns_type(f, nn.Linear, first_linear)),
        fixed(1, "nn.Linear(2, 3): a new nn.Linear", case(copy_kind, lambda: nn.Linear(2, 3))),
        fixed(1, "a class whose constructor takes no argument", case(copy_kind, Counted)),
        fixed(1, "a Sequential holding such a module", case(copy_kind, lambda: nn.Sequential(Counted(), nn.ReLU()))),
        fixed(1, "such a class made by __new__, no slot", case(copy_kind, lambda: half_built(Counted, [], [], False))),
        fixed(2, "nn.Linear(2, 2)", case(copy_keys, lambda: nn.Linear(2, 2))),
        fixed(2, "_compiled_call_impl, which m.compile() stores, is kept", case(copy_keys, compiled_linear)),
        fixed(2, "attributes set before super().__init__() stay first", case(copy_keys, early_module)),
        fixed(2, "nn.Linear.__new__ with no slot: nothing added", case(copy_keys, lambda: half_linear(0))),
        fixed(2, "nn.Linear.__new__ with the first five slots", case(copy_keys, lambda: half_linear(5))),
        fixed(2, "nn.Linear.__new__ with the first twelve slots", case(copy_keys, lambda: half_linear(12))),
        fixed(3, "nn.Linear with hooks in every table", case(copy_containers, hooked)),
        fixed(3, "nn.BatchNorm1d: buffers and a non-persistent one", case(copy_containers, batch_norm)),
        fixed(3, "a Sequential: its _modules", case(copy_containers, nested_tree)),
        fixed(3, "nn.Linear.__new__ with the first twelve slots", case(copy_containers, lambda: half_linear(12))),
        fixed(3, "two hooks in a table, the second prepended: same order", case(copy_containers, prepended)),
        fixed(3, "children left, right, missing (None): same order", case(copy_containers, lambda: Pair(nn.Tanh()))),
        fixed(
            3,
            "every dict container slot of the other type (_modules an OrderedDict, the hook tables dicts)",
            case(copy_containers, lambda: other_dict_types(nested_tree())),
        ),
        fixed(4, "nn.Linear: weight and bias", case(copy_registered, lambda: nn.Linear(2, 2))),
        fixed(4, "nn.Linear without bias (bias is None)", case(copy_registered, lambda: nn.Linear(2, 2, bias=False))),
        fixed(4, "nn.BatchNorm1d in eval mode: its buffers", case(copy_registered, batch_norm)),
        fixed(4, "a None parameter and a None buffer", case(copy_registered, lambda: Pair(nn.Linear(2, 2)))),
        fixed(5, "a Sequential inside a Sequential", case(copy_children, nested_tree)),
        fixed(5, "one module in three places, a None child", case(copy_children, shared_tree)),
        fixed(5, "children with hooks in every table", case(copy_children, lambda: nn.Sequential(hooked(), hooked()))),
        fixed(6, "hooks in every table, one of them an object", case(copy_hooks, hooked_linear)),
        fixed(7, "nn.Linear: training, in_features...", case(copy_others, lambda: nn.Linear(2, 2))),
        fixed(7, "user attributes: a dict, a set, a list, a tensor...", case(copy_others, Holder)),
        fixed(7, "eval mode and a full backward hook", case(copy_others, lambda: in_eval(with_full_backward_hook()))),
        fixed(7, "attributes set before super().__init__()", case(copy_others, early_module)),
        fixed(7, "a module held as a plain attribute (not in _modules)", case(copy_others, with_helper)),
        fixed(8, "nn.Linear with hooks in every table", case(copy_leaves_original, hooked)),
        fixed(8, "one module in three places", case(copy_leaves_original, shared_tree)),
        fixed(8, "user attributes of every kind", case(copy_leaves_original, Holder)),
        fixed(8, "nn.Linear.__new__ with the first five slots", case(copy_leaves_original, lambda: half_linear(5))),
        fixed(8, "a handle of the original still removes the original's hook", lambda: copy_handles(f)),
        *spanned(slot_space(most=1), lambda point: cases.observe(slot_module(point), None, gen)),
        *spanned(graph_cases(3, 3), lambda graph: cases.observe(slot_graph(graph), None, gen)),
        *seeded([[number] for number in range(1, COPY_CASES + 1)], observe_case),
    )


# hidden test cell -> {dimension of its generated cases: the values they take, plainest first} (grader.coverage).
SPACES = {
    "test_classify_slots_hidden": SLOT_SPACE,
    "test_copy_hidden": {**SLOT_SPACE, **GRAPH_SPACE, "modules": ["1", "2", "3"], "depth": ["0", "1", "2"]},
}

OBSERVERS = {
    "test_classify_slots_hidden": observe_classify_hidden,
    "test_copy_hidden": observe_copy_hidden,
}
