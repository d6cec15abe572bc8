"""Trusted checks for ex06_minimodule: the sequences of each test cell (fixed and seeded sequences)
replayed on the submission's MiniModule alone, and what it returns, raises and holds after every step."""

from __future__ import annotations

import random
import sys
import types
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Mapping

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from grader.observing import (
    GRAPH_SPACE,
    SHOWCASE,
    borrowed_machinery,
    code_that_runs,
    data,
    drawn,
    every,
    exact,
    fixed,
    graph_dimensions,
    graphs,
    in_turn,
    kind_of,
    labelled,
    orders,
    plain,
    raised,
    seeded,
    spanned,
    whole,
)

SLOTS = (
    "training",
    "_parameters",
    "_buffers",
    "_non_persistent_buffers_set",
    "_forward_hooks",
    "_forward_pre_hooks",
    "_modules",
)


class Skip(Exception):
    """A step that cannot run on this sequence."""


def outcome(action: Callable[[], object]) -> tuple:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", action()
    except Exception as error:  # noqa: BLE001
        return "raised", error


def quiet_threads() -> int:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the tensors are tiny
    return threads


# ---------------------------------------------------------------------------------------------------------
# Part 1: MiniModule (construction and routing)
# ---------------------------------------------------------------------------------------------------------


MINI_SEED, MINI_SEQUENCES = 20130601, 120
FIXED_MINI_STEPS = [("start", "built"), ("buffer", "mean", ("tensor", (2,)), False), ("del", "mean")]
MINI_NAMES = ["w", "w", "b", "sub", "sub", "mean", "mean", "x", "level", "size", "kind", "forward", "a.b", ""]
PLAIN = (int, float, str, bool, type(None))


def mini_classes(base: type) -> tuple:
    class Probe(base):
        kind = "probe"  # a class attribute

        def __init__(self):
            base.__init__(self)

        @property
        def level(self):  # a property with a setter that stores the value under another name
            return vars(self).get("_level", 0)

        @level.setter
        def level(self, value):
            vars(self)["_level"] = value

        @property
        def size(self):  # a property without a setter
            return 3

        def forward(self, x):
            return x

    class Leaf(base):
        def forward(self, x):
            return x

    return Probe, Leaf


class World:
    """The objects of one sequence, labelled as the observation labels them (P1, T1, M1...)."""

    def __init__(self, probe: type, leaf: type) -> None:
        self.probe, self.leaf = probe, leaf
        self.mini = None
        self.label: dict = {}  # what the state shows: Parameters, tensors and Leafs
        self.identity: dict = {}  # every object the steps hand over, for the results of getattr
        self.params: list = []
        self.tensors: list = []
        self.modules: list = []
        self.built = False
        self.keep: list = []  # every object stays alive, so that ids stay unique

    def name_of(self, obj: object) -> str:
        if obj is None:
            return "None"
        if id(obj) in self.label:
            return self.label[id(obj)]
        return repr(obj)

    def value(self, spec: tuple) -> object:
        kind = spec[0]
        if kind == "param":
            value = nn.Parameter(torch.full(spec[1], float(len(self.params) + 1)), requires_grad=spec[2])
            self.params.append(value)
            self.label[id(value)] = f"P{len(self.params)}"
        elif kind == "param again":
            if spec[1] >= len(self.params):
                raise Skip()
            return self.params[spec[1]]
        elif kind == "tensor":
            value = torch.full(spec[1], -float(len(self.tensors) + 1))
            self.tensors.append(value)
            self.label[id(value)] = f"T{len(self.tensors)}"
        elif kind == "module":
            value = self.leaf()
            self.modules.append(value)
            self.label[id(value)] = f"M{len(self.modules)}"
        elif kind == "module again":
            if spec[1] >= len(self.modules):
                raise Skip()
            return self.modules[spec[1]]
        else:
            value = spec[1]
        self.keep.append(value)
        self.identity.setdefault(id(value), f"object {len(self.identity) + 1}")
        return value

    def result(self, value: object) -> object:
        """A value returned by getattr as the observation compares it: a plain value by type and value, anything
        else by identity."""
        if type(value) in PLAIN:
            return ["plain", exact(value)]
        if id(value) in self.identity:
            return ["object", self.identity[id(value)]]
        return ["unknown", kind_of(value)]


def mini_apply(world: World, step: tuple) -> list:
    """One step on the MiniModule; what the observation compares of its outcome."""
    op = step[0]
    if op == "set":
        value = world.value(step[2])
        got = outcome(lambda: setattr(world.mini, step[1], value))
    elif op == "buffer":
        value = world.value(step[2])
        kwargs = {} if step[3] is None else {"persistent": step[3]}
        got = outcome(lambda: world.mini.register_buffer(step[1], value, **kwargs))
    elif op == "get":
        got = outcome(lambda: getattr(world.mini, step[1]))
        if got[0] == "ok":
            return ["returned", world.result(got[1])]
        error = got[1]
        return ["raised", type(error).__name__, str(error) if type(error) is AttributeError else None]
    elif op == "del":
        if not world.built:
            raise Skip()
        got = outcome(lambda: delattr(world.mini, step[1]))
    elif op == "init":
        got = outcome(world.init)
        world.built = True
    else:
        raise ValueError(op)
    return ["no exception"] if got[0] == "ok" else ["raised", type(got[1]).__name__]


def mini_state(world: World) -> list:
    """The slots the MiniModule holds, and its state as the observation shows it."""
    variables = vars(world.mini)
    present = [key for key in variables if key in SLOTS]
    slots = [present, [kind_of(variables[key]) for key in present]]
    found = {}
    plain_attributes = [(key, value) for key, value in variables.items() if key not in SLOTS]
    found["plain attributes"] = "{" + ", ".join(f"{k!r}: {world.name_of(v)}" for k, v in plain_attributes) + "}"
    if "_parameters" in variables:
        found["training"] = repr(variables.get("training"))
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = variables.get(registry)
            if not isinstance(entries, dict):
                found[registry] = f"not a dict: {type(entries).__name__}"
                continue
            found[registry] = "{" + ", ".join(f"{k!r}: {world.name_of(v)}" for k, v in entries.items()) + "}"
        marks = variables.get("_non_persistent_buffers_set")
        found["_non_persistent_buffers_set"] = repr(sorted(marks)) if isinstance(marks, set) else repr(marks)
    return [slots, found]


def mini_replay(probe: type, leaf: type, mini_module: type, steps: list) -> object:
    """Every step of a sequence on a fresh MiniModule: its outcome and the state after it."""
    world = World(probe, leaf)
    world.init = lambda: mini_module.__init__(world.mini)
    seen: list = []
    try:
        if steps[0][1] == "built":
            world.mini = probe()
            world.built = True
        else:
            world.mini = probe.__new__(probe)
    except Exception as error:  # noqa: BLE001
        return [["Probe()", raised(error)]]
    world.keep.append(world.mini)
    if world.built:  # the slots of a built start only
        seen.append({"rule 1: the slots of a new Probe": mini_state(world)[0]})
    for step in steps[1:]:
        try:
            seen.append({mini_step(step): [mini_apply(world, step), *mini_state(world)]})
        except Skip:
            seen.append("skip")
            return seen
        except Exception as error:  # noqa: BLE001
            seen.append(["step raised", type(error).__name__])
    return seen


MINI_RULES = {"init": 1, "set": 2, "get": 3, "del": 4, "buffer": 5}  # the rule of part 1 each kind of step tests
MINI_WORDS = {"init": "__init__ again", "set": "setting", "get": "getting", "del": "deleting", "buffer": "registering"}


def mini_step(step: tuple) -> str:
    """A step of a sequence of part 1 as a label: the rule it tests and what it does ("rule 2: setting 'w'")."""
    name = "" if step[0] == "init" else f" {step[1]!r}"
    return f"rule {MINI_RULES[step[0]]}: {MINI_WORDS[step[0]]}{name}"


def random_value(rng: random.Random, made: dict) -> tuple:
    kinds = ["param"] * 5 + ["tensor"] * 3 + ["none"] * 3 + ["int", "str", "list"] + ["module"] * 4
    kinds += ["param again"] * 2 * (made["param"] > 0) + ["module again"] * 2 * (made["module"] > 0)
    kind = rng.choice(kinds)
    if kind == "param":
        made["param"] += 1
        return ("param", (rng.randint(1, 3),), rng.random() < 0.8)
    if kind == "module":
        made["module"] += 1
        return ("module",)
    if kind == "param again":
        return (kind, rng.randrange(made["param"]))
    if kind == "module again":
        return (kind, rng.randrange(made["module"]))
    if kind == "tensor":
        return ("tensor", (rng.randint(1, 3),))
    return ("plain", {"none": None, "int": 7, "str": "text", "list": [1.0]}[kind])


def random_sequence(rng: random.Random) -> list:
    """A sequence of steps, drawn from the case's seed."""
    built = rng.random() < 0.8
    steps: list = [("start", "built" if built else "half")]
    made = {"param": 0, "module": 0}
    used: list = []

    def pick(pool):
        name = rng.choice(used) if used and rng.random() < 0.5 else rng.choice(pool)
        if isinstance(name, str):
            used.append(name)
        return name

    for _ in range(rng.randint(1, 10)):
        roll = rng.random()
        if not built and roll < 0.15 or built and roll > 0.98:
            steps.append(("init",))
            built = True
        elif roll < 0.6:
            steps.append(("set", pick(MINI_NAMES), random_value(rng, made)))
        elif roll < 0.78:
            name = pick(MINI_NAMES + [3, None] if rng.random() < 0.1 else MINI_NAMES)
            kind = rng.choice(["tensor"] * 4 + ["none", "int", "param"])
            if kind == "param":
                made["param"] += 1
            value = {
                "tensor": ("tensor", (2,)),
                "none": ("plain", None),
                "int": ("plain", 5),
                "param": ("param", (1,), True),
            }[kind]
            steps.append(("buffer", name, value, rng.choice([None, True, False])))
        elif roll < 0.9 or not built:
            name = pick(MINI_NAMES + ["missing"])
            steps.append(("get", name if isinstance(name, str) and name != "forward" else "missing"))
        else:
            steps.append(("del", pick(MINI_NAMES)))
    return steps


class Steps:
    """The steps of a fixed or generated case, as named records (Bench's and HookBench's)."""

    def __init__(self) -> None:
        self.seen: list = []

    def record(self, what: str, seen: object, rule: int | None = None) -> None:
        """One step of the case, as a named record: ["step n: what", what was seen], each part of it named by the
        rule that decides the step ("rule 3: what it did"): a registration rule 3's, a removal rule 4's, a mode
        change rule 1's or 2's; a call's pre-hooks are rule 5's, what follows them unnamed (rules 6 and 7 shape it
        together)."""
        if rule is not None and type(seen) is dict:
            seen = {f"rule {rule}: {part}": value for part, value in seen.items()}
        self.seen.append([f"step {len(self.seen) + 1}: {what}", seen])


class Bench(Steps):
    """One fixed case of part 1: a fresh Probe (built or half-built) and the objects the case hands it, each named."""

    def __init__(self, mini_module: type, half: bool = False) -> None:
        self.probe, self.leaf_type = mini_classes(mini_module)
        self.m = self.probe.__new__(self.probe) if half else self.probe()
        self.names = {id(self.m): "m"}
        self.keep: list = [self.m]
        super().__init__()

    def named(self, label: str, value: object) -> object:
        self.names[id(value)] = label
        self.keep.append(value)
        return value

    def param(self, label: str) -> nn.Parameter:
        return self.named(label, nn.Parameter(torch.full((1,), float(len(self.keep)))))

    def tensor(self, label: str) -> torch.Tensor:
        return self.named(label, torch.full((2,), -float(len(self.keep))))

    def leaf(self, label: str) -> object:
        return self.named(label, self.leaf_type())

    def put(self, registry: str, name: str, value: object, persistent: bool = True) -> None:
        """An entry written straight into a registry (not through the submission's methods)."""
        vars(self.m)[registry][name] = value
        if not persistent:
            vars(self.m)["_non_persistent_buffers_set"].add(name)

    def view(self, value: object) -> object:
        if id(value) in self.names:
            return self.names[id(value)]
        if type(value) in PLAIN:
            return exact(value)
        if type(value) in (dict, OrderedDict):
            return [kind_of(value), [[plain(key), self.view(item)] for key, item in value.items()]]
        if type(value) in (set, frozenset):
            return [kind_of(value), plain(sorted(value, key=repr))]
        return kind_of(value)

    def state(self) -> list:
        """vars(m) key by key, in order, with what each holds."""
        return [[plain(key), self.view(value)] for key, value in vars(self.m).items()]

    def do(self, action: Callable[[], object], what: str) -> None:
        """An action (`what` it does, in words) and the state after it: what it returned (by name) or the class of
        what it raised; recorded under "step n: what"."""
        got = outcome(action)
        result = ["returned", self.view(got[1])] if got[0] == "ok" else ["raised", type(got[1]).__name__]
        self.record(what, {"what it did": result, "vars(m) afterwards": self.state()})

    def set(self, name: str, value: object) -> None:
        self.do(lambda: setattr(self.m, name, value), f"m.{name} = {self.view(value)}")

    def get(self, name: str) -> None:
        got = outcome(lambda: getattr(self.m, name))
        if got[0] == "ok":
            self.record(f"m.{name}", {"what it gave": ["returned", self.view(got[1])]})
        else:
            error = got[1]
            message = str(error) if type(error) is AttributeError else None
            self.record(f"m.{name}", {"what it gave": ["raised", type(error).__name__, message]})

    def done(self) -> list:
        return self.seen


def init_cases(mini_module: type) -> list:
    def slots():
        bench = Bench(mini_module)
        return bench.state()

    def no_sharing():
        probe, _ = mini_classes(mini_module)
        one, two = probe(), probe()
        shared = [key for key in SLOTS if key != "training" and vars(one).get(key) is vars(two).get(key)]
        in_class = [key for key in SLOTS if key != "training" and vars(one).get(key) is getattr(probe, key, None)]
        return [shared, in_class]

    def set_before():
        class Early(mini_module):
            def __init__(self):
                object.__setattr__(self, "note", "early")
                mini_module.__init__(self)

        made = Early()
        return [[plain(key), kind_of(value)] for key, value in vars(made).items()]

    def again():
        bench = Bench(mini_module)
        bench.put("_parameters", "w", bench.param("P1"))
        bench.put("_buffers", "mean", bench.tensor("T1"), persistent=False)
        bench.put("_modules", "sub", bench.leaf("M1"))
        object.__setattr__(bench.m, "note", 5)
        vars(bench.m)["training"] = False
        old = {key: vars(bench.m)[key] for key in SLOTS}
        bench.do(lambda: type(bench.m).__init__(bench.m), "type(m).__init__(m)")
        return [bench.done(), [key for key in SLOTS[1:] if vars(bench.m).get(key) is old[key]]]

    return [
        fixed(1, "the seven slots of a new Probe, in order, with their types and training True", slots),
        fixed(1, "two instances share no container (nor take one from the class)", no_sharing),
        fixed(1, "attributes set before __init__ stay ahead of the slots", set_before),
        fixed(1, "__init__ again on a filled Probe: new empty slots, the plain attribute stays", again),
    ]


def setattr_cases(mini_module: type) -> list:
    def first():
        module = mini_module()
        module.w = nn.Parameter(torch.zeros(1))
        return kind_of(vars(module)["_parameters"])

    def new_and_replaced():
        bench = Bench(mini_module)
        one, two, three = bench.param("P1"), bench.param("P2"), bench.param("P3")
        bench.set("a", one)
        bench.set("b", two)
        bench.set("a", three)  # a new Parameter on a registered name keeps its place
        return bench.done()

    def parameter_replaces():
        bench = Bench(mini_module)
        object.__setattr__(bench.m, "x", 5)
        bench.put("_buffers", "mean", bench.tensor("T1"), persistent=False)
        bench.put("_modules", "sub", bench.leaf("M1"))
        for name in ("x", "mean", "sub"):
            bench.set(name, bench.param(f"P for {name}"))
        return bench.done()

    def bad_names():
        bench = Bench(mini_module)
        object.__setattr__(bench.m, "a.b", 1)
        bench.put("_buffers", "", bench.tensor("T1"), persistent=False)
        bench.set("a.b", bench.param("P1"))  # KeyError, with the plain attribute already removed
        bench.set("", bench.param("P2"))  # KeyError, with the buffer already removed
        return bench.done()

    def class_names():
        bench = Bench(mini_module)
        for name in ("forward", "size", "level", "kind", "register_buffer"):
            bench.set(name, bench.param(f"P for {name}"))
        return bench.done()

    def half_parameter():
        bench = Bench(mini_module, half=True)
        bench.set("w", bench.param("P1"))
        bench.set("w", None)  # rule 6 on a half-built object
        return bench.done()

    def parameter_name():
        bench = Bench(mini_module)
        bench.put("_parameters", "w", bench.param("P1"))
        bench.put("_parameters", "v", bench.param("P2"))
        for value in (bench.tensor("T1"), bench.leaf("M1"), 3, "text", None):
            bench.set("w", value)
        return bench.done()

    def module_routing():
        bench = Bench(mini_module)
        object.__setattr__(bench.m, "x", 5)
        bench.put("_buffers", "mean", bench.tensor("T1"), persistent=False)
        bench.put("_modules", "first", None)
        for name in ("x", "mean", "a.b", "", "forward", "new", "first"):
            bench.set(name, bench.leaf(f"M for {name!r}"))
        return bench.done()

    def half_module():
        bench = Bench(mini_module, half=True)
        bench.set("sub", bench.leaf("M1"))
        return bench.done()

    def module_name():
        bench = Bench(mini_module)
        bench.put("_modules", "sub", bench.leaf("M1"))
        for value in (bench.tensor("T1"), 3, [1.0], None):
            bench.set("sub", value)
        return bench.done()

    def buffer_name():
        bench = Bench(mini_module)
        bench.put("_buffers", "mean", bench.tensor("T1"), persistent=False)
        bench.put("_buffers", "var", bench.tensor("T2"))
        for name, value in (("mean", bench.tensor("T3")), ("var", None), ("var", 3), ("mean", [1.0]), ("var", "x")):
            bench.set(name, value)
        bench.set("var", bench.tensor("T4"))
        return bench.done()

    def plain_values():
        bench = Bench(mini_module)
        for name, value in (("scale", bench.tensor("T1")), ("count", 3), ("text", "x"), ("nothing", None)):
            bench.set(name, value)
        bench.set("scale", bench.tensor("T2"))
        return bench.done()

    def half_plain():
        bench = Bench(mini_module, half=True)
        for name, value in (("x", bench.tensor("T1")), ("y", 3), ("z", None), ("x", 4)):
            bench.set(name, value)
        return bench.done()

    def python_rules():
        bench = Bench(mini_module)
        bench.set("level", 4)  # the setter stores it as _level
        bench.set("size", 5)  # no setter: AttributeError
        bench.set("kind", "instance")  # shadows the class attribute
        return bench.done()

    return [
        fixed(2, "a Parameter on a new MiniModule(): _parameters stays a dict", first),
        fixed(
            2, "routing rule 1: Parameters under new names go last, a registered name keeps its place", new_and_replaced
        ),
        fixed(
            2,
            "routing rule 1: a Parameter over a plain attribute, a non-persistent buffer, a submodule",
            parameter_replaces,
        ),
        fixed(2, 'routing rule 1: a Parameter named "a.b" or "" raises KeyError after the removal', bad_names),
        fixed(
            2, "routing rule 1: a Parameter named like a method, a property or a class attribute: KeyError", class_names
        ),
        fixed(2, "routing rule 1: a Parameter on a half-built object raises AttributeError", half_parameter),
        fixed(
            2,
            "routing rule 2: a tensor, a MiniModule, an int, a str on a parameter name raise TypeError; None",
            parameter_name,
        ),
        fixed(
            2, "routing rule 3: MiniModules over a plain attribute, a buffer, None, and unchecked names", module_routing
        ),
        fixed(2, "routing rule 3: a MiniModule on a half-built object raises AttributeError", half_module),
        fixed(2, "routing rule 4: a tensor, an int, a list on a submodule name raise TypeError; None", module_name),
        fixed(
            2,
            "routing rule 5: tensors and None on buffer names keep their persistence; others raise TypeError",
            buffer_name,
        ),
        fixed(2, "routing rule 6: a plain tensor, int, str, None under new names are plain attributes", plain_values),
        fixed(2, "routing rule 6: every value but a Parameter or a MiniModule on a half-built object", half_plain),
        fixed(2, "routing rule 6: a property's setter, a property without one, a class attribute", python_rules),
    ]


def getattr_cases(mini_module: type) -> list:
    def registries():
        bench = Bench(mini_module)
        bench.put("_parameters", "w", bench.param("P1"))
        bench.put("_buffers", "mean", bench.tensor("T1"))
        bench.put("_modules", "sub", bench.leaf("M1"))
        for name in ("w", "mean", "sub"):
            bench.get(name)
        return bench.done()

    def none_entries():
        bench = Bench(mini_module)
        bench.put("_parameters", "b", None)
        bench.put("_buffers", "c", None)
        bench.put("_modules", "d", None)
        for name in ("b", "c", "d"):
            bench.get(name)
        return bench.done()

    def first_registry():
        bench = Bench(mini_module)
        bench.put("_parameters", "x", None)
        bench.put("_buffers", "x", bench.tensor("T1"))
        bench.put("_buffers", "y", bench.tensor("T2"))
        bench.put("_modules", "y", bench.leaf("M1"))
        bench.put("_modules", "x", bench.leaf("M2"))
        for name in ("x", "y"):
            bench.get(name)
        return bench.done()

    def missing():
        bench = Bench(mini_module)
        bench.put("_parameters", "weight", bench.param("P1"))
        for name in ("wieght", "_private", "a.b"):
            bench.get(name)
        return bench.done()

    def half():
        bench = Bench(mini_module, half=True)
        for name in ("w", "_parameters", "training"):
            bench.get(name)
        return bench.done()

    return [
        fixed(3, "a parameter, a buffer and a submodule are found in their registries", registries),
        fixed(3, "a None entry of each registry is returned as None", none_entries),
        fixed(3, "a name in two registries: _parameters, then _buffers, then _modules", first_registry),
        fixed(3, "a missing name raises AttributeError with the exact message", missing),
        fixed(3, "on a half-built object: AttributeError with the exact message, no recursion", half),
    ]


def delattr_cases(mini_module: type) -> list:
    def each_kind():
        bench = Bench(mini_module)
        bench.put("_parameters", "w", bench.param("P1"))
        bench.put("_buffers", "mean", bench.tensor("T1"), persistent=False)
        bench.put("_buffers", "var", bench.tensor("T2"))
        bench.put("_modules", "sub", bench.leaf("M1"))
        object.__setattr__(bench.m, "note", 5)
        for name in ("mean", "w", "sub", "var", "note"):
            bench.do(lambda name=name: delattr(bench.m, name), f"delattr(m, {name!r})")
        return bench.done()

    def none_entries():
        bench = Bench(mini_module)
        bench.put("_parameters", "b", None)
        bench.put("_buffers", "c", None, persistent=False)
        bench.put("_modules", "d", None)
        for name in ("b", "c", "d"):
            bench.do(lambda name=name: delattr(bench.m, name), f"delattr(m, {name!r})")
        return bench.done()

    def first_registry():
        bench = Bench(mini_module)
        bench.put("_parameters", "x", bench.param("P1"))
        bench.put("_buffers", "x", bench.tensor("T1"))
        bench.put("_buffers", "y", bench.tensor("T2"), persistent=False)
        bench.put("_modules", "y", bench.leaf("M1"))
        for name in ("x", "y", "y"):
            bench.do(lambda name=name: delattr(bench.m, name), f"delattr(m, {name!r})")
        return bench.done()

    def missing():
        bench = Bench(mini_module)
        for name in ("nothing", "forward"):
            bench.do(lambda name=name: delattr(bench.m, name), f"delattr(m, {name!r})")
        return bench.done()

    def replay():
        probe, leaf = mini_classes(mini_module)
        return mini_replay(probe, leaf, mini_module, FIXED_MINI_STEPS)

    return [
        fixed(4, "a non-persistent buffer, a parameter, a submodule, a buffer, a plain attribute", each_kind),
        fixed(4, "None entries of each registry are deleted", none_entries),
        fixed(4, "a name in two registries: only the first is deleted", first_registry),
        fixed(4, "a name that is nowhere (or a method) raises AttributeError", missing),
        fixed(4, "register_buffer(persistent=False), then del: the fixed sequence", replay),
    ]


def buffer_cases(mini_module: type) -> list:
    def registered():
        bench = Bench(mini_module)
        bench.do(lambda: bench.m.register_buffer("mean", bench.tensor("T1")), 'm.register_buffer("mean", tensor("T1"))')
        bench.do(lambda: bench.m.register_buffer("none", None), 'm.register_buffer("none", None)')
        bench.do(lambda: bench.m.register_buffer("param", bench.param("P1")), 'm.register_buffer("param", param("P1"))')
        bench.do(
            lambda: bench.m.register_buffer("mean", bench.tensor("T2")), 'm.register_buffer("mean", tensor("T2"))'
        )  # keeps its place
        return bench.done()

    def persistence():
        bench = Bench(mini_module)
        bench.do(
            lambda: bench.m.register_buffer("mean", bench.tensor("T1"), persistent=False),
            'm.register_buffer("mean", tensor("T1"), persistent=False)',
        )
        bench.do(
            lambda: bench.m.register_buffer("var", bench.tensor("T2"), False),
            'm.register_buffer("var", tensor("T2"), False)',
        )
        bench.do(
            lambda: bench.m.register_buffer("mean", bench.tensor("T3")), 'm.register_buffer("mean", tensor("T3"))'
        )  # the default: persistent again
        bench.do(
            lambda: bench.m.register_buffer("var", None, persistent=True),
            'm.register_buffer("var", None, persistent=True)',
        )
        bench.do(
            lambda: bench.m.register_buffer("var", bench.tensor("T4"), persistent=False),
            'm.register_buffer("var", tensor("T4"), persistent=False)',
        )
        return bench.done()

    def half():
        bench = Bench(mini_module, half=True)
        bench.do(lambda: bench.m.register_buffer("mean", bench.tensor("T1")), 'm.register_buffer("mean", tensor("T1"))')
        bench.do(lambda: bench.m.register_buffer(3, [1.0]), "m.register_buffer(3, [1.0])")
        return bench.done()

    def not_a_str():
        bench = Bench(mini_module)
        for name in (3, None, b"mean"):
            bench.do(lambda name=name: bench.m.register_buffer(name, [1.0]), f"m.register_buffer({name!r}, [1.0])")
        return bench.done()

    def dots():
        bench = Bench(mini_module)
        for name in ("a.b", "", "."):
            bench.do(lambda name=name: bench.m.register_buffer(name, [1.0]), f"m.register_buffer({name!r}, [1.0])")
        return bench.done()

    def taken():
        bench = Bench(mini_module)
        bench.put("_parameters", "w", bench.param("P1"))
        bench.put("_parameters", "b", None)
        bench.put("_modules", "sub", bench.leaf("M1"))
        bench.put("_modules", "side", None)
        object.__setattr__(bench.m, "note", 5)
        for name in ("w", "b", "sub", "side", "note", "forward", "level", "size", "kind"):
            bench.do(
                lambda name=name: bench.m.register_buffer(name, bench.tensor(f"T for {name}")),
                f"m.register_buffer({name!r}, tensor(...))",
            )
        bench.do(
            lambda: bench.m.register_buffer("w", [1.0]), 'm.register_buffer("w", [1.0])'
        )  # KeyError before the tensor check
        return bench.done()

    def not_a_tensor():
        bench = Bench(mini_module)
        for value in ([1.0], 3, bench.leaf("M1")):
            bench.do(lambda value=value: bench.m.register_buffer("mean", value), 'm.register_buffer("mean", value)')
        return bench.done()

    return [
        fixed(5, "a tensor, None and a Parameter are registered; a registered buffer keeps its place", registered),
        fixed(5, "persistent=False marks the name; persistent=True or the default unmarks it", persistence),
        fixed(5, "on a half-built object: AttributeError, before the other checks", half),
        fixed(5, "a name that is not a str raises TypeError, before the tensor check", not_a_str),
        fixed(5, 'a name with a "." or "" raises KeyError, before the tensor check', dots),
        fixed(
            5, "a name taken by a parameter, a submodule (None entries too), an attribute, a method...: KeyError", taken
        ),
        fixed(5, "a list, an int, a MiniModule as the tensor raise TypeError", not_a_tensor),
    ]


# Part 1's input space: on a built or half-built MiniModule, every kind of thing a name may already be (each
# registry, persistent or not, None entries, a plain attribute, what the class supplies, dotted and empty names, a
# dotted name held as a plain attribute) and every operation on it (each kind of value assigned, each kind of buffer
# registered, read, delete, __init__ again): every pair on a built module, each value once on a half-built one. Each
# case is a sequence of steps (mini_replay).
MINI_HELD = {  # the name, and the steps that make it what it is
    "nothing": ("x", []),
    "a parameter": ("w", [("set", "w", ("param", (1,), True))]),
    "a None parameter": ("w", [("set", "w", ("param", (1,), True)), ("set", "w", ("plain", None))]),
    "a buffer": ("mean", [("buffer", "mean", ("tensor", (2,)), None)]),
    "a non-persistent buffer": ("mean", [("buffer", "mean", ("tensor", (2,)), False)]),
    "a None buffer": ("mean", [("buffer", "mean", ("plain", None), None)]),
    "a submodule": ("sub", [("set", "sub", ("module",))]),
    "a None submodule": ("sub", [("set", "sub", ("module",)), ("set", "sub", ("plain", None))]),
    "a plain attribute": ("x", [("set", "x", ("plain", 7))]),
    "a property with a setter": ("level", []),
    "a property without a setter": ("size", []),
    "a class attribute": ("kind", []),
    "a method": ("forward", []),
    "a dotted name": ("a.b", []),
    "a dotted plain attribute": ("a.b", [("set", "a.b", ("plain", 7))]),
    "the empty name": ("", []),
}
MINI_OPERATIONS = {  # the step, given the name
    "set a Parameter": lambda name: ("set", name, ("param", (1,), True)),
    "set a frozen Parameter": lambda name: ("set", name, ("param", (1,), False)),
    "set a tensor": lambda name: ("set", name, ("tensor", (2,))),
    "set a MiniModule": lambda name: ("set", name, ("module",)),
    "set None": lambda name: ("set", name, ("plain", None)),
    "set an int": lambda name: ("set", name, ("plain", 5)),
    "register a buffer": lambda name: ("buffer", name, ("tensor", (2,)), None),
    "register a non-persistent buffer": lambda name: ("buffer", name, ("tensor", (2,)), False),
    "register None as a buffer": lambda name: ("buffer", name, ("plain", None), True),
    "register an int as a buffer": lambda name: ("buffer", name, ("plain", 5), None),
    "get it": lambda name: ("get", name),
    "delete it": lambda name: ("del", name),
    "__init__ again": lambda name: ("init",),
}
MINI_SPACE = {"state": ["built", "half-built"], "name is": list(MINI_HELD), "operation": list(MINI_OPERATIONS)}
HALF_BUILT_NAMES = ("nothing", "a plain attribute", "a property with a setter", "a property without a setter")
HALF_BUILT_NAMES += ("a class attribute", "a method", "a dotted name", "a dotted plain attribute", "the empty name")


def mini_space() -> list:
    """Part 1's generated cases, smallest first: (point, '', (steps,))."""
    built = every({**MINI_SPACE, "state": ["built"]})
    half = every({**MINI_SPACE, "state": ["half-built"], "name is": list(HALF_BUILT_NAMES)}, most=1)
    cases = []
    for point in built + [point for point in half if point["operation"] != "delete it"]:
        name, setup = MINI_HELD[point["name is"]]
        steps = [("start", "built" if point["state"] == "built" else "half"), *setup]
        cases.append((point, "", ([*steps, MINI_OPERATIONS[point["operation"]](name)],)))
    return cases


def observe_mini_hidden(ns: dict) -> dict:
    mini_module = ns.get("MiniModule")
    cases = [
        *init_cases(mini_module),
        *setattr_cases(mini_module),
        *getattr_cases(mini_module),
        *delattr_cases(mini_module),
        *buffer_cases(mini_module),
    ]
    rng = random.Random(MINI_SEED)
    sequences = [[random_sequence(rng)] for _ in range(MINI_SEQUENCES)]
    probe, leaf = mini_classes(mini_module)
    own = own_machinery_case(ns, "test_mini_module_hidden"), own_code_case(ns, "test_mini_module_hidden")
    generated = spanned(mini_space(), lambda steps: mini_replay(probe, leaf, mini_module, steps))
    return labelled(
        *cases, *own, *generated, *seeded(sequences, lambda steps: mini_replay(probe, leaf, mini_module, steps))
    )


# ---------------------------------------------------------------------------------------------------------
# Trees for parts 2 to 4: nodes made without part 1, their slots and registries written directly
# ---------------------------------------------------------------------------------------------------------


def through(module: object, x: torch.Tensor, eval_scale: float) -> torch.Tensor:
    """The forward of the test trees' nodes: x through the children, plus each parameter's sum, then scaled by 2 in
    training mode and by eval_scale in eval mode."""
    for child in module._modules.values():
        if child is not None:
            x = child(x)
    for parameter in module._parameters.values():
        if parameter is not None:
            x = x + parameter.sum()
    return x * (2.0 if module.training else eval_scale)


def node_class(base: type) -> type:
    """The node of the trees of parts 2 to 4; its attributes are written as on a plain object."""

    class Node(base):
        def forward(self, x, shift=0.0):
            return through(self, x + shift, 0.5)

    Node.__setattr__ = object.__setattr__
    return Node


def new_node(node: type) -> object:
    made = node.__new__(node)
    for slot, value in zip(SLOTS, (True, {}, {}, set(), OrderedDict(), OrderedDict(), {}), strict=True):
        object.__setattr__(made, slot, value)
    return made


def values_for(shape: tuple, number: float) -> torch.Tensor:
    count = 1
    for size in shape:
        count *= size
    return torch.arange(count, dtype=torch.float32).reshape(shape) * 0.25 + number


class Trees:
    """The MiniModule tree of a sequence, built step by step; with twin, the nn.Module tree too (its
    structure only serves to make the checkpoints of part 3)."""

    def __init__(self, node: type, twin: bool = False) -> None:
        self.node_type, self.twin = node, twin
        self.nodes = [(new_node(node), nn.Module() if twin else None)]
        self.params: list = []
        self.buffers: list = []
        self.label = {id(self.nodes[0][0]): "n0"}
        self.keep: list = []

    def name_of(self, obj: object) -> str:
        if obj is None:
            return "None"
        return self.label.get(id(obj), f"an unknown {type(obj).__name__}")

    def add_pair(self, store: list, prefix: str, pair: tuple) -> str:
        store.append(pair)
        self.label[id(pair[0])] = f"{prefix}{len(store) if prefix != 'n' else len(store) - 1}"
        self.keep.append(pair)
        return self.label[id(pair[0])]

    def node(self, index: int) -> tuple:
        if index >= len(self.nodes):
            raise Skip()
        return self.nodes[index]

    def registry_of(self, index: int, name: str) -> str | None:
        mini = self.node(index)[0]
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in vars(mini)[registry]:
                return registry
        return None

    def build(self, step: tuple) -> None:
        """Apply one tree-building step."""
        op, index, name = step[0], step[1], step[2]
        mini, twin = self.node(index)
        where = self.registry_of(index, name)
        wanted = {
            "child": "_modules",
            "share": "_modules",
            "none child": "_modules",
            "param": "_parameters",
            "tie": "_parameters",
            "view param": "_parameters",
            "none param": "_parameters",
            "buffer": "_buffers",
            "share buffer": "_buffers",
            "none buffer": "_buffers",
            "delete": where,
        }[op]
        if op == "delete":
            if where is None:
                raise Skip()
            del vars(mini)[where][name]
            vars(mini)["_non_persistent_buffers_set"].discard(name)
            if twin is not None:
                delattr(twin, name)
            return
        if where not in (None, wanted):
            raise Skip()
        if op == "child":
            pair = (new_node(self.node_type), nn.Module() if self.twin else None)
            self.add_pair(self.nodes, "n", pair)
        elif op == "share":
            if not index < step[3] < len(self.nodes):
                raise Skip()
            pair = self.nodes[step[3]]
        elif op == "param":
            shape, number = step[3], len(self.params) + 1
            pair = (nn.Parameter(values_for(shape, number)), nn.Parameter(values_for(shape, number)))
            self.add_pair(self.params, "p", pair)
        elif op == "view param":
            if step[3] >= len(self.params):
                raise Skip()
            pair = tuple(nn.Parameter(param.data) for param in self.params[step[3]])
            self.add_pair(self.params, "p", pair)
        elif op in ("tie", "share buffer"):
            store = self.params if op == "tie" else self.buffers
            if step[3] >= len(store):
                raise Skip()
            pair = store[step[3]]
        elif op == "buffer":
            shape, number = step[3], -(len(self.buffers) + 1)
            pair = (values_for(shape, number), values_for(shape, number))
            self.add_pair(self.buffers, "b", pair)
        else:
            pair = (None, None)
        if wanted == "_modules":
            vars(mini)["_modules"][name] = pair[0]
            if twin is not None:
                twin.add_module(name, pair[1])
        elif wanted == "_parameters":
            vars(mini)["_parameters"][name] = pair[0]
            if twin is not None:
                twin.register_parameter(name, pair[1])
        else:
            persistent = step[-1]
            vars(mini)["_buffers"][name] = pair[0]
            if persistent:
                vars(mini)["_non_persistent_buffers_set"].discard(name)
            else:
                vars(mini)["_non_persistent_buffers_set"].add(name)
            if twin is not None:
                twin.register_buffer(name, pair[1], persistent=persistent)

    def snapshot(self) -> list:
        """The registries of the MiniModule tree, as ids."""
        return [
            (registry, tuple((key, id(value)) for key, value in vars(mini)[registry].items()))
            for mini, _ in self.nodes
            for registry in ("_parameters", "_buffers", "_modules")
        ] + [tuple(sorted(vars(mini)["_non_persistent_buffers_set"])) for mini, _ in self.nodes]


TREE_NAMES = ["a", "b", "w", "mean", "enc", "dec", "0", "1"]


def tree_steps(graph: tuple) -> list | None:
    """The tree-building steps (Trees.build) of a module graph (observing.graphs): each module's slots in order, under
    the keys c0, c1, ..., then a parameter w of its own; None where a module is shared under a module made after it
    (Trees shares only later nodes, which keeps a tree acyclic by construction)."""
    steps: list = []
    made = 1
    for node, slots in enumerate(graph):
        for slot, child in enumerate(slots):
            if child is None:
                steps.append(("none child", node, f"c{slot}"))
            elif child == made:
                steps.append(("child", node, f"c{slot}"))
                made += 1
            elif child > node:
                steps.append(("share", node, f"c{slot}", child))
            else:
                return None
        steps.append(("param", node, "w", (1,)))
    return steps


def tree_cases() -> list:
    """The generated cases of every module graph of up to 4 modules and 3 slots that Trees can build: (point,
    drawing, (steps,))."""
    found = [(graph, tree_steps(graph)) for graph in graphs(4, 3)]
    return [
        ({**graph_dimensions(graph), "tensors": "a parameter each"}, drawn(graph), (steps,))
        for graph, steps in found
        if steps is not None
    ]


# What the tensors of the generated trees of parts 2 and 3 may be, beside a parameter w in each module: steps added
# to the trees of observing.SHOWCASE.
TENSORS = {
    "a parameter each": [],
    "a tied parameter": [("tie", 2, "t", 0)],
    "a Parameter on another's memory": [("view param", 2, "t", 0)],
    "two empty parameters": [("param", 1, "e", (0,)), ("param", 2, "e", (0,))],
    "a None parameter": [("none param", 1, "n")],
    "a persistent buffer": [("buffer", 1, "mean", (2,), True)],
    "a non-persistent buffer": [("buffer", 1, "mean", (2,), False)],
    "a buffer in two places": [("buffer", 1, "mean", (2,), True), ("share buffer", 2, "m", 0, False)],
    "a None buffer": [("none buffer", 3, "gone", True)],
}


def tensor_cases() -> list:
    """The generated cases of each kind of tensor on SHOWCASE: (point, drawing, (steps,))."""
    steps = tree_steps(SHOWCASE)
    return [
        ({**graph_dimensions(SHOWCASE), "tensors": kind}, drawn(SHOWCASE), ([*steps, *extra],))
        for kind, extra in TENSORS.items()
    ]


def built_then(trees: Trees, steps: list, play: Callable) -> object:
    """A generated tree: every step but the last built, the last one played (observed)."""
    for step in steps[:-1]:
        trees.build(step)
    return play(trees, steps[-1])


def random_build_step(rng: random.Random, trees: Trees, weights: dict) -> tuple:
    """A tree-building step that is valid on the current trees, drawn from the case's seed."""
    for _ in range(50):
        op = rng.choices(list(weights), list(weights.values()))[0]
        index = rng.randrange(len(trees.nodes))
        name = rng.choice(TREE_NAMES)
        where = trees.registry_of(index, name)
        if op == "delete":
            if where is not None:
                return (op, index, name)
            continue
        wanted = (
            "_modules"
            if op in ("child", "share", "none child")
            else ("_parameters" if op in ("param", "tie", "none param") else "_buffers")
        )
        if where not in (None, wanted):
            continue
        persistent = rng.random() < 0.7
        if op == "child":
            return (op, index, name)
        if op == "share":
            later = [j for j in range(index + 1, len(trees.nodes))]
            if later:
                return (op, index, name, rng.choice(later))
            continue
        if op in ("none child", "none param"):
            return (op, index, name)
        if op == "param":
            return (op, index, name, (rng.randint(1, 3),))
        if op == "tie" and trees.params:
            return (op, index, name, rng.randrange(len(trees.params)))
        if op == "buffer":
            return (op, index, name, (rng.randint(1, 3),), persistent)
        if op == "share buffer" and trees.buffers:
            return (op, index, name, rng.randrange(len(trees.buffers)), persistent)
        if op == "none buffer":
            return (op, index, name, persistent)
    return ("child", 0, "extra")


def run_sequences(seed: int, count: int, make_trees: Callable[[], Trees], next_step: Callable, play: Callable) -> list:
    """count sequences drawn from the case's seed: each step drawn, then played and observed."""
    rng = random.Random(seed)
    seen = []
    for _ in range(count):
        trees = make_trees()
        steps = []
        for _ in range(rng.randint(*next_step.lengths)):
            step = next_step(rng, trees)
            try:
                steps.append(play(trees, step))
            except Skip:
                steps.append("skip")
                break
            except Exception as error:  # noqa: BLE001
                steps.append(["step raised", type(error).__name__])
        seen.append(steps)
    return seen


def fixed_sequence(trees: Trees, steps: list, play: Callable) -> list:
    """The fixed first sequence of a hidden test, step by step."""
    seen = []
    for step in steps:
        try:
            seen.append(play(trees, step))
        except Exception as error:  # noqa: BLE001
            seen.append(["step raised", type(error).__name__])
    return seen


def leaf_class(mini_module: type) -> type:
    class MiniLeaf(mini_module):
        __setattr__ = object.__setattr__

        def forward(self, x):
            return through(self, x, 3.0)

    return MiniLeaf


def make_twins(mini_module: type, recipe: list, seed: int = 0) -> tuple:
    """The notebook's make_twins: the tree of recipe from the submission's MiniModule and from nn.Module."""
    generator = torch.Generator().manual_seed(seed)
    roots = (new_node(leaf_class(mini_module)), nn.Module())

    def find(root, path, kind):
        *parents, last = path.split(".")
        for part in parents:
            root = vars(root)["_modules"][part]
        registry = {"leaf": "_modules", "module": "_modules", "param": "_parameters", "buffer": "_buffers"}[kind]
        return vars(root)[registry][last]

    leaf = type(roots[0])
    for step in recipe:
        path, kind = step[0], step[1]
        what = step[2] if len(step) > 2 else None
        persistent = step[3] if len(step) > 3 else True
        parent_path, _, name = path.rpartition(".")
        if isinstance(what, tuple):
            values = torch.randn(what, generator=generator)
        for side, root in enumerate(roots):
            parent = find(root, parent_path, "module") if parent_path else root
            if kind == "leaf":
                entry = new_node(leaf) if side == 0 else nn.Module()
            elif isinstance(what, str):
                entry = find(root, what, kind)
            elif what is None:
                entry = None
            elif kind == "param":
                entry = nn.Parameter(values.clone())
            else:
                entry = values.clone()
            if side == 1:
                if kind in ("leaf", "module"):
                    parent.add_module(name, entry)
                elif kind == "param":
                    parent.register_parameter(name, entry)
                else:
                    parent.register_buffer(name, entry, persistent=persistent)
            elif kind in ("leaf", "module"):
                vars(parent)["_modules"][name] = entry
            elif kind == "param":
                vars(parent)["_parameters"][name] = entry
            else:
                vars(parent)["_buffers"][name] = entry
                if persistent:
                    vars(parent)["_non_persistent_buffers_set"].discard(name)
                else:
                    vars(parent)["_non_persistent_buffers_set"].add(name)
    return roots


def labels_of(root: object) -> dict:
    """{id: label} for every module, parameter and buffer of a MiniModule tree, by the path that first reaches it."""
    found: dict = {}

    def walk(module, path):
        found[id(module)] = f"module {path!r}"
        for registry in ("_parameters", "_buffers"):
            for key, value in vars(module)[registry].items():
                if value is not None:
                    found.setdefault(id(value), f"{registry} {path}.{key}")
        for key, child in vars(module)["_modules"].items():
            if child is not None and id(child) not in found:
                walk(child, f"{path}.{key}")

    walk(root, "")
    return found


# ---------------------------------------------------------------------------------------------------------
# Part 2: Traversal
# ---------------------------------------------------------------------------------------------------------


TRAVERSAL_SEED, TRAVERSAL_SEQUENCES = 20130602, 50
TRAVERSAL_WEIGHTS = {
    "child": 25,
    "share": 18,
    "none child": 5,
    "param": 20,
    "tie": 14,
    "none param": 5,
    "buffer": 8,
    "share buffer": 4,
    "none buffer": 2,
    "delete": 6,
}


def listed(trees: Trees, method: str) -> str:
    """A traversal of the MiniModule tree as the contract describes it."""
    try:
        result = list(getattr(trees.nodes[0][0], method)())
    except Exception as error:  # noqa: BLE001
        return f"raised {type(error).__name__}"
    items = []
    for item in result:
        if type(item) is not tuple or len(item) != 2 or type(item[0]) is not str:
            return f"gave a {kind_of(item)}, not a (str, object) tuple"
        items.append(f"({item[0]!r}, {trees.name_of(item[1])})")
    return "[" + ", ".join(items) + "]"


def traversal_play(trees: Trees, step: tuple) -> dict:
    """One building step, then each traversal (which rules 1 to 5 shape together: unnamed, they break the rules shown
    broken) and what rule 6 asks of them."""
    trees.build(step)
    before = trees.snapshot()
    seen: dict = {}
    kept = []
    for method in ("named_modules", "named_parameters", "named_buffers"):
        seen[f"{method}()"] = listed(trees, method)
        kept.append(trees.snapshot() == before)
    seen["rule 6: the tree is as before after each call"] = kept
    seen["rule 6: a second named_modules() gives the same"] = listed(trees, "named_modules") == seen["named_modules()"]
    return seen


def tree_of(mini_module: type, recipe: list) -> tuple:
    """A MiniModule tree from a recipe of make_twins (nn.Module side dropped) and the labels of its objects."""
    root = make_twins(mini_module, recipe)[0]
    return root, labels_of(root)


def pairs_loose(result: object, labels: dict) -> list:
    """A traversal's pairs by name and object, whatever kind of pair holds them (the pair's type is rule 1's)."""
    seen = []
    for item in list(result):
        try:
            name, value = item
        except Exception:  # noqa: BLE001 - not a pair
            seen.append(["not a pair", kind_of(item)])
            continue
        seen.append([plain(name), labels.get(id(value), "not a registered object")])
    return seen


def one_call(mini_module: type, recipe: list, method: str) -> Callable[[], list]:
    """One call of one method on a fresh tree (a case never calls a second method on its tree)."""

    def run():
        root, labels = tree_of(mini_module, recipe)
        return pairs_loose(getattr(root, method)(), labels)

    return run


TRAVERSAL_TREES = {
    "deep": [
        ("enc", "leaf"),
        ("enc.inner", "leaf"),
        ("enc.inner.core", "leaf"),
        ("side", "module", None),
        ("dec", "leaf"),
        ("dec.out", "leaf"),
    ],
    "shared": [("x", "leaf"), ("a", "leaf"), ("a.c", "leaf"), ("b", "module", "a")],
    "tied": [
        ("w", "param", (2,)),
        ("b", "param", None),
        ("enc", "leaf"),
        ("enc.v", "param", (1,)),
        ("enc.w", "param", "w"),
        ("enc.u", "param", (3,)),
        ("dec", "module", "enc"),
        ("head", "leaf"),
        ("head.t", "param", "enc.u"),
        ("head.s", "param", (1,)),
    ],
    "buffers": [
        ("mean", "buffer", (2,)),
        ("count", "buffer", (1,), False),
        ("none", "buffer", None),
        ("enc", "leaf"),
        ("enc.var", "buffer", (1,), False),
        ("enc.mean", "buffer", "mean"),
        ("enc.run", "buffer", (2,)),
        ("dec", "module", "enc"),
        ("head", "leaf"),
        ("head.stat", "buffer", "enc.run", False),
    ],
}


def traversal_cases(mini_module: type) -> list:
    def first():
        return plain([name for name, _ in make_twins(mini_module, [("w", "param", (1,))])[0].named_parameters()])

    def types_of(method: str, recipe: list) -> Callable[[], object]:
        def run():
            root, _ = tree_of(mini_module, recipe)
            items = list(getattr(root, method)())
            bad = [item for item in items if type(item) is not tuple or len(item) != 2 or type(item[0]) is not str]
            return [True, None] if not bad else [False, kind_of(bad[0])]

        return run

    def unchanged(recipe: list) -> Callable[[], object]:
        def run():
            root, _ = tree_of(mini_module, recipe)
            before = snapshot_of(root)
            seen = []
            for method in ("named_modules", "named_parameters", "named_buffers", "named_modules", "named_buffers"):
                list(getattr(root, method)())
                seen.append([method, snapshot_of(root) == before])
            return seen

        return run

    def again(method: str) -> Callable[[], object]:
        def run():
            root, labels = tree_of(mini_module, TRAVERSAL_TREES["tied"] + TRAVERSAL_TREES["buffers"][:3])
            first_time = pairs_loose(getattr(root, method)(), labels)
            return [pairs_loose(getattr(root, method)(), labels) == first_time for _ in range(2)]

        return run

    def distinct_on_one_memory():
        root = make_twins(mini_module, [("e", "param", (0,)), ("f", "param", (0,)), ("a", "leaf"), ("b", "leaf")])[0]
        first = vars(vars(root)["_modules"]["a"])["_parameters"]["w"] = nn.Parameter(torch.arange(4.0))
        vars(vars(root)["_modules"]["b"])["_parameters"]["w"] = nn.Parameter(first.data)  # another Parameter, a view
        vars(vars(root)["_modules"]["b"])["_parameters"]["v"] = nn.Parameter(first.data[:2])
        return pairs_loose(root.named_parameters(), labels_of(root))

    def dotted_keys():
        root = make_twins(mini_module, [])[0]
        child = make_twins(mini_module, [])[0]
        vars(root)["_modules"][".a"] = child
        vars(child)["_modules"][".b"] = make_twins(mini_module, [])[0]
        return pairs_loose(root.named_modules(), labels_of(root))

    def empty_key():
        """The name named_modules() gives each module of a tree whose root has a child under the key ''."""
        root, child, b, empty = (make_twins(mini_module, [])[0] for _ in range(4))
        vars(root)["_modules"][""] = child
        vars(child)["_modules"]["b"] = b
        vars(child)["_modules"][""] = empty
        which = {
            id(root): "the root",
            id(child): "the root's child ''",
            id(b): "its child 'b'",
            id(empty): "its child ''",
        }
        named: dict = {}
        for name, label in pairs_loose(root.named_modules(), which):  # any kind of pair: its type is rule 1's
            named.setdefault(label, []).append(name)
        return {"the names each module is given": named}

    return [
        fixed(
            1,
            "named_modules() of a deep tree gives (str, module) tuples",
            types_of("named_modules", TRAVERSAL_TREES["deep"]),
        ),
        fixed(
            1, "named_parameters() gives (str, Parameter) tuples", types_of("named_parameters", TRAVERSAL_TREES["tied"])
        ),
        fixed(1, "named_buffers() gives (str, tensor) tuples", types_of("named_buffers", TRAVERSAL_TREES["buffers"])),
        fixed(2, "a root alone: only ('', root)", one_call(mini_module, [], "named_modules")),
        fixed(2, "keys starting with a dot ('.a' under the root, '.b' under it): used as they are", dotted_keys),
        fixed(
            2,
            "a key '' under the root, with children 'b' and '' of its own: named '', then 'b' and '' (a parent named ''"
            " gives just the key)",
            empty_key,
        ),
        fixed(
            2,
            "a deep tree: pre-order, depth first, dotted names, None skipped",
            one_call(mini_module, TRAVERSAL_TREES["deep"], "named_modules"),
        ),
        fixed(
            3,
            "a module in two places is yielded once, under its first name, not walked twice",
            one_call(mini_module, TRAVERSAL_TREES["shared"], "named_modules"),
        ),
        fixed(
            3,
            "a module registered under the root and under a child, once",
            one_call(mini_module, [("a", "leaf"), ("b", "leaf"), ("b.x", "module", "a")], "named_modules"),
        ),
        fixed(4, "a one-parameter tree (the visible lines of this cell)", first),
        fixed(4, "distinct Parameters on one memory, and two empty ones: each is yielded", distinct_on_one_memory),
        fixed(
            4,
            "tied parameters, a shared submodule and a None entry: each Parameter once, first name",
            one_call(mini_module, TRAVERSAL_TREES["tied"], "named_parameters"),
        ),
        fixed(
            4,
            "the same Parameter under two names of one module, once",
            one_call(
                mini_module, [("w", "param", (1,)), ("v", "param", "w"), ("u", "param", (2,))], "named_parameters"
            ),
        ),
        fixed(
            5,
            "persistent and non-persistent buffers, shared tensors once, None skipped",
            one_call(mini_module, TRAVERSAL_TREES["buffers"], "named_buffers"),
        ),
        fixed(
            5,
            "only non-persistent buffers are still yielded",
            one_call(
                mini_module,
                [("a", "leaf"), ("a.n", "buffer", (1,), False), ("m", "buffer", (2,), False)],
                "named_buffers",
            ),
        ),
        fixed(
            6,
            "all three methods, twice, change no registry of the tree",
            unchanged(TRAVERSAL_TREES["tied"] + TRAVERSAL_TREES["buffers"][:3]),
        ),
        fixed(6, "named_modules() called again on one tree gives the same pairs", again("named_modules")),
        fixed(6, "named_parameters() called again on one tree gives the same pairs", again("named_parameters")),
    ]


def snapshot_of(root: object) -> list:
    """The registries of every module of a MiniModule tree (and the non-persistent sets), as ids."""
    seen, found = set(), []
    todo = [root]
    while todo:
        module = todo.pop(0)
        if id(module) in seen:
            continue
        seen.add(id(module))
        for registry in ("_parameters", "_buffers", "_modules"):
            found.append(tuple((key, id(value)) for key, value in vars(module)[registry].items()))
        found.append(tuple(sorted(vars(module)["_non_persistent_buffers_set"])))
        todo += [child for child in vars(module)["_modules"].values() if child is not None]
    return found


def observe_traversal_hidden(ns: dict) -> dict:
    mini_module = ns.get("MiniModule")
    cases = traversal_cases(mini_module)
    node = node_class(mini_module)

    def next_step(rng, trees):
        return random_build_step(rng, trees, TRAVERSAL_WEIGHTS)

    next_step.lengths = (1, 12)
    threads = quiet_threads()
    try:
        sequences = run_sequences(TRAVERSAL_SEED, TRAVERSAL_SEQUENCES, lambda: Trees(node), next_step, traversal_play)
    finally:
        torch.set_num_threads(threads)
    own = own_machinery_case(ns, "test_traversal_hidden"), own_code_case(ns, "test_traversal_hidden")
    generated = spanned(tree_cases() + tensor_cases(), lambda steps: built_then(Trees(node), steps, traversal_play))
    return labelled(
        *cases, *own, *generated, *seeded([[sequence] for sequence in sequences], lambda sequence: sequence)
    )


# ---------------------------------------------------------------------------------------------------------
# Part 3: StateDict
# ---------------------------------------------------------------------------------------------------------


def load_seen(result: tuple) -> object:
    """What load_state_dict did: a result item by item, or the exception (its message when a RuntimeError)."""
    status, value = result
    if status == "raised":
        return {"raises": type(value).__name__, "its message": str(value) if type(value) is RuntimeError else None}
    if not isinstance(value, tuple):
        return {"returns": kind_of(value)}
    fields = getattr(type(value), "_fields", None)
    items = {field: [kind_of(getattr(value, field)), plain(getattr(value, field))] for field in fields or ()}
    return {"returns a named tuple with the fields": plain(fields), "each field": items}


STATE_DICT_SEED, STATE_DICT_SEQUENCES = 20130603, 56
RARE_STRICT = [True, True, False, False, "default", "default", "list"]
FIXED_LOAD_STEPS = [
    ("param", 0, "w", (2,)),
    ("child", 0, "enc"),
    ("param", 1, "a", (3,)),
    ("buffer", 1, "mean", (2,), True),
    ("buffer", 1, "b", (1,), False),
    ("tie", 1, "w", 0),
    ("share", 0, "dec", 1),
    ("none child", 0, "side"),
    ("load", False, 8),
    ("load", True, 8),
    ("load", "default", 30),
    ("load", False, 129),
    ("load", True, 9),
]
STATE_DICT_WEIGHTS = {
    "child": 22,
    "share": 12,
    "none child": 5,
    "param": 20,
    "tie": 8,
    "none param": 5,
    "buffer": 16,
    "share buffer": 3,
    "none buffer": 4,
    "delete": 5,
}


def resolve(root: object, key: str) -> object:
    """The tensor registered at a state_dict key of the MiniModule tree, or None."""
    *path, last = key.split(".")
    module = root
    for part in path:
        module = vars(module)["_modules"].get(part)
        if module is None:
            return None
    found = vars(module)["_parameters"].get(last)
    return found if found is not None else vars(module)["_buffers"].get(last)


def saved_seen(trees: Trees) -> object:
    """state_dict() of the MiniModule tree as the observation compares it."""
    root = trees.nodes[0][0]
    try:
        saved = root.state_dict()
    except Exception as error:  # noqa: BLE001
        return raised(error)
    if not isinstance(saved, dict):
        return ["not a dict", kind_of(saved)]
    values: dict = {}
    twin = trees.nodes[0][1]
    keys = list(twin.state_dict()) if twin is not None else list(saved)
    for key, value in saved.items():
        registered = resolve(root, key)
        if not isinstance(value, torch.Tensor):
            values[plain(key) if type(key) is str else repr(key)] = ["not a tensor", kind_of(value)]
            continue
        same_memory = value.shape == registered.shape and value.data_ptr() == registered.data_ptr()
        values[key] = {
            "not the registered object": value is not registered,
            "requires_grad": value.requires_grad,
            "the registered tensor's memory": same_memory,
            "dtype": str(value.dtype),
            "values": data(value, qualified=True),
        }
    # each value is rule 3's where the keys are nn.Module's (which keys, in which order, is rules 1 and 2's)
    same = list(saved) == list(keys)
    return {"state_dict()'s keys": {"nn.Module's": {"rule 3: each value": values}} if same else plain(list(saved))}


def all_tensors(trees: Trees, side: int) -> list:
    return [
        value
        for pair in trees.nodes
        for registry in ("_parameters", "_buffers")
        for value in vars(pair[side])[registry].values()
    ]


def unexpected_keys(rng: random.Random, trees: Trees) -> list:
    """Keys that no module saves, drawn from the case's seed (from the structure of the nn.Module tree)."""
    twin_root = trees.nodes[0][1]
    keys = ["zz", "ghost.w", "w.x"]
    for prefix, module in twin_root.named_modules(remove_duplicate=False):
        start = prefix + "." if prefix else ""
        keys.append(start + "zz")
        for key, value in module._parameters.items():
            keys.append(start + key + ".x")
            if value is None:
                keys.append(start + key)
        for key, value in module._buffers.items():
            if value is None or key in module._non_persistent_buffers_set:
                keys.append(start + key)
        for key, child in module._modules.items():
            keys.append(start + key + ".zz" if child is not None else start + key + ".w")
    return rng.sample(keys, min(len(keys), rng.choice([0, 0, 1, 1, 2, 3])))


def checkpoint_for(trees: Trees, number: int) -> object:
    """The checkpoint of a load step: the keys and shapes of the nn.Module tree's state_dict(), new values and changes
    chosen by a generator seeded with number."""
    rng = random.Random(number)
    entries = []
    for key, value in trees.nodes[0][1].state_dict().items():
        roll = rng.random()
        if roll < 0.12:
            continue
        if roll < 0.18:
            new = torch.zeros(value.shape[0] + rng.choice([-1, 1]) if value.shape[0] > 1 else 2)
        elif roll < 0.22:
            new = rng.choice([3, "text", [1.0]])
        elif roll < 0.3:
            new = values_for(value.shape, rng.randint(10, 99)).double()
        else:
            new = values_for(value.shape, rng.randint(10, 99))
        entries.append((key, new))
    entries += [(key, torch.ones(1)) for key in unexpected_keys(rng, trees)]
    if rng.random() < 0.4:
        rng.shuffle(entries)
    kind = rng.choice(["OrderedDict", "dict", "dict", "mapping proxy"])
    if kind == "OrderedDict":
        return OrderedDict(entries)
    if kind == "dict":
        return dict(entries)
    return types.MappingProxyType(dict(entries))


def load_play(trees: Trees, step: tuple) -> dict:
    strict, number = step[1], step[2]
    checkpoint = [("w", torch.ones(1))] if strict == "list" else checkpoint_for(trees, number)
    return loaded(trees, checkpoint, strict)


def loaded(trees: Trees, checkpoint: object, strict: object) -> list:
    """One load_state_dict on the MiniModule tree (strict True, False, or "default"/"list": not given): whether the
    checkpoint is kept, what the call returned or raised, and every tensor afterwards (the same objects, values, and
    the values a view taken before the load sees: a copy in place reaches it, `tensor.data = ...` does not)."""
    kwargs = {} if strict in ("default", "list") else {"strict": strict}
    before = [(key, id(value)) for key, value in dict(checkpoint).items()]
    objects = all_tensors(trees, 0)
    views = [None if value is None else value.detach() for value in objects]
    got = outcome(lambda: trees.nodes[0][0].load_state_dict(checkpoint, **kwargs))
    now = all_tensors(trees, 0)
    kept = [
        (value, view)
        for value, view, twin in zip(now, views, all_tensors(trees, 1))  # noqa: B905 - the observation pairs them so
        if value is not None and twin is not None
    ]
    # A checkpoint that is not a mapping is refused (rule 4): what the tensors are afterwards is rule 4's then.
    copies = "rule 5: " if isinstance(checkpoint, Mapping) else "rule 4: a refused checkpoint copies nothing: "
    return {
        "rule 4: the checkpoint is as before": [(key, id(value)) for key, value in dict(checkpoint).items()] == before,
        "what load_state_dict gives (rules 4 to 8)": load_seen(got),
        "rule 5: every tensor is still its object (copied in place)": [
            value is old
            for value, old in zip(now, objects)  # noqa: B905 - the observation pairs them so
        ],
        copies + "every tensor afterwards (dtype, requires_grad, values), copied only where key and shape fit": [
            [str(value.dtype), value.requires_grad, data(value, qualified=True)] for value, _ in kept
        ],
        copies + "what a view taken before the load sees (copied into the tensor's own memory)": [
            data(view) if view is not None else None for _, view in kept
        ],
    }


def state_dict_play(trees: Trees, step: tuple) -> object:
    if step[0] == "load":
        return load_play(trees, step)
    trees.build(step)
    return saved_seen(trees)


def registered_tensors(root: object) -> list:
    """Every parameter and buffer of a MiniModule tree, by its first path, in walk order."""
    found, seen = [], set()
    for path, module in walk_tree(root):
        for registry in ("_parameters", "_buffers"):
            for key, value in vars(module)[registry].items():
                if value is not None and id(value) not in seen:
                    seen.add(id(value))
                    found.append((f"{path}.{key}" if path else key, value))
    return found


def walk_tree(root: object) -> list:
    """(path, module) for every module of a MiniModule tree once, pre-order, read from the registries."""
    found, seen = [], set()

    def visit(module, path):
        if id(module) in seen:
            return
        seen.add(id(module))
        found.append((path, module))
        for key, child in vars(module)["_modules"].items():
            if child is not None:
                visit(child, f"{path}.{key}" if path else key)

    visit(root, "")
    return found


def loose_load(got: tuple) -> object:
    """What a load did, the returned pair read loosely (its exact type is rule 8's)."""
    status, value = got
    if status == "raised":
        return {"raises": type(value).__name__, "its message": str(value) if type(value) is RuntimeError else None}
    try:
        missing, unexpected = value
        return {"missing keys": plain(list(missing)), "unexpected keys": plain(list(unexpected))}
    except Exception:  # noqa: BLE001 - not a pair
        return {"returns": kind_of(value)}


def loading(
    mini_module: type,
    recipe: list,
    checkpoint: Callable[[], object],
    strict: object = "default",
    exact_result: bool = False,
    views: bool = False,
) -> Callable[[], dict]:
    """A load into a fresh tree: what it returned or raised, then each registered tensor (same object? dtype,
    requires_grad, values; with `views` (rule 5's cases), the values a view taken before the load sees: a copy in
    place reaches it)."""

    def run():
        root = make_twins(mini_module, recipe)[0]
        before = registered_tensors(root)
        seen_by = {key: value.detach() for key, value in before}
        kwargs = {} if strict == "default" else {"strict": strict}
        given = checkpoint()
        got = outcome(lambda: root.load_state_dict(given, **kwargs))
        result = load_seen(got) if exact_result else loose_load(got)
        after = dict(registered_tensors(root))
        tensors = {
            key: {
                "the same object": after.get(key) is value,
                "dtype": str(value.dtype),
                "requires_grad": value.requires_grad,
                "values": data(value),
                **({"what a view taken before the load sees": data(seen_by[key])} if views else {}),
            }
            for key, value in before
        }
        return {"what the load did": result, "each registered tensor": tensors}

    return run


SD_TREE = [
    ("w", "param", (2,)),
    ("b", "param", None),
    ("mean", "buffer", (2,)),
    ("count", "buffer", (1,), False),
    ("gone", "buffer", None),
    ("side", "module", None),
    ("enc", "leaf"),
    ("enc.v", "param", (3,)),
    ("enc.inner", "leaf"),
    ("enc.inner.u", "param", (1,)),
    ("enc.stat", "buffer", (1,)),
    ("head", "leaf"),
    ("head.z", "param", (2,)),
]
SD_SHARED = [
    ("enc", "leaf"),
    ("enc.w", "param", (2,)),
    ("enc.mean", "buffer", (1,)),
    ("dec", "module", "enc"),
    ("head", "leaf"),
    ("head.t", "param", "enc.w"),
    ("head.s", "buffer", "enc.mean"),
    ("t", "param", "enc.w"),
]
LOAD_TREE = [("w", "param", (2,)), ("mean", "buffer", (2,)), ("enc", "leaf"), ("enc.v", "param", (3,))]


def full(scale: float = 1.0, dtype: torch.dtype = torch.float32) -> dict:
    """A complete checkpoint of LOAD_TREE."""
    return {
        "w": torch.tensor([1.0, 2.0], dtype=dtype) * scale,
        "mean": torch.tensor([3.0, 4.0], dtype=dtype) * scale,
        "enc.v": torch.tensor([5.0, 6.0, 7.0], dtype=dtype) * scale,
    }


def state_dict_cases(mini_module: type) -> list:
    def first():
        return isinstance(make_twins(mini_module, [("w", "param", (1,))])[0].state_dict(), dict)

    def keys(recipe: list) -> Callable[[], object]:
        def run():
            root = make_twins(mini_module, recipe)[0]
            saved = root.state_dict()
            again = root.state_dict()
            return {
                "a dict": isinstance(saved, dict),
                "a new one each call": saved is not again,
                "its keys": plain(list(saved)),
            }

        return run

    def values(recipe: list) -> Callable[[], object]:
        def run():
            root = make_twins(mini_module, recipe)[0]
            saved = root.state_dict()
            seen = {}
            for key, value in saved.items():
                registered = resolve(root, key)
                seen[key] = {
                    "the registered object itself": value is registered,
                    "class": kind_of(value),
                    "requires_grad": value.requires_grad,
                    "the registered tensor's requires_grad": registered.requires_grad,
                    "the registered tensor's memory": value.data_ptr() == registered.data_ptr(),
                }
            for value in saved.values():
                value.add_(10.0)  # in place: the module's tensors change too
            seen["the registered tensors after adding 10 to the saved ones in place"] = {
                key: data(value) for key, value in registered_tensors(root)
            }
            return seen

        return run

    def not_a_mapping(value: Callable[[], object]) -> Callable[[], object]:
        return loading(mini_module, LOAD_TREE, value)

    def untouched():
        root = make_twins(mini_module, LOAD_TREE)[0]
        checkpoint = OrderedDict([("enc.v", torch.zeros(3)), ("w", torch.zeros(2)), ("ghost", torch.ones(1))])
        before = [(key, id(value), data(value)) for key, value in checkpoint.items()]
        got = outcome(lambda: root.load_state_dict(checkpoint, strict=False))
        return {
            "the checkpoint is as before": [(key, id(value), data(value)) for key, value in checkpoint.items()]
            == before,
            "the load raised": "raises" in loose_load(got),
        }

    def proxy():
        return loading(mini_module, LOAD_TREE, lambda: types.MappingProxyType(full(2.0)))()

    def shared_twice():
        def checkpoint():
            return {
                "enc.w": torch.ones(2),
                "enc.mean": torch.ones(1),
                "dec.w": torch.full((2,), 2.0),
                "dec.mean": torch.full((1,), 2.0),
                "head.t": torch.full((2,), 3.0),
                "head.s": torch.full((1,), 3.0),
                "t": torch.full((2,), 4.0),
            }

        return loading(mini_module, SD_SHARED, checkpoint)()

    def errors_a_and_b():
        def checkpoint():
            return {"w": [1.0, 2.0], "mean": torch.ones(3), "enc.v": torch.full((3,), 9.0)}

        return loading(mini_module, LOAD_TREE, checkpoint, strict=False)()

    def unexpected_order():
        def checkpoint():
            entries = full()
            return OrderedDict(
                [
                    ("enc.zz", torch.ones(1)),
                    ("zz", torch.ones(1)),
                    *entries.items(),
                    ("enc.v.x", torch.ones(1)),
                    ("a.b.c", torch.ones(1)),
                ]
            )

        return loading(mini_module, LOAD_TREE, checkpoint, strict=False)()

    def unexpected_kinds():
        recipe = [*LOAD_TREE, ("side", "module", None), ("b", "param", None), ("count", "buffer", (1,), False)]

        def checkpoint():
            return {
                **full(),
                "side.w": torch.ones(1),
                "w.x": torch.ones(1),
                "b": torch.ones(1),
                "count": torch.ones(1),
                "enc": torch.ones(1),
            }

        return loading(mini_module, recipe, checkpoint, strict=False)()

    return [
        fixed(1, "state_dict() of a one-parameter tree is a dict (the visible lines of this cell)", first),
        fixed(1, "parameters, persistent buffers, then children; None and non-persistent left out", keys(SD_TREE)),
        fixed(
            1,
            "a root with only non-persistent and None buffers saves nothing",
            keys([("n", "buffer", (1,), False), ("m", "buffer", None)]),
        ),
        fixed(2, "a shared submodule and tied tensors are saved under every name", keys(SD_SHARED)),
        fixed(
            2,
            "a submodule registered three times, one level down",
            keys([("a", "leaf"), ("a.w", "param", (1,)), ("b", "leaf"), ("b.x", "module", "a"), ("c", "module", "a")]),
        ),
        fixed(
            3,
            "each value is a new tensor without grad that shares memory with the module's",
            values([step for step in SD_TREE if len(step) < 4]),
        ),
        fixed(4, "a list of (key, tensor) pairs raises TypeError", not_a_mapping(lambda: list(full().items()))),
        fixed(
            4, "a str and None raise TypeError", lambda: [not_a_mapping(lambda: "w")(), not_a_mapping(lambda: None)()]
        ),
        fixed(4, "the checkpoint is not modified by a load", untouched),
        fixed(4, "a read-only mapping proxy is a mapping and loads", proxy),
        fixed(
            5,
            "a complete checkpoint is copied in place: same objects, dtype and requires_grad",
            loading(mini_module, LOAD_TREE, lambda: full(3.0), views=True),
        ),
        fixed(
            5,
            "float64 values are copied into the float32 tensors",
            loading(mini_module, LOAD_TREE, lambda: full(2.0, torch.float64), views=True),
        ),
        fixed(
            5,
            "missing keys in walk order; the present ones copied (strict=False)",
            loading(
                mini_module, SD_TREE, lambda: {"enc.stat": torch.ones(1), "w": torch.ones(2)}, strict=False, views=True
            ),
        ),
        fixed(5, "a shared submodule and tied tensors are loaded under every name, the last one wins", shared_twice),
        fixed(
            5,
            "a value of shape [1] for a tensor of shape [2] (it would broadcast) is error B and is not copied",
            loading(mini_module, LOAD_TREE, lambda: {**full(), "w": torch.full((1,), 7.0)}, strict=False, views=True),
        ),
        fixed(
            5,
            "a value that is not a tensor (error A) and a wrong shape (error B) raise, strict=False too",
            errors_a_and_b,
        ),
        fixed(
            5,
            "a numpy array of the right shape is not a tensor: error A",
            loading(mini_module, LOAD_TREE, lambda: {**full(), "w": torch.ones(2).numpy()}, strict=False),
        ),
        fixed(6, "unexpected keys module by module, not in the checkpoint's order", unexpected_order),
        fixed(
            6,
            "keys under a None submodule are expected; under a parameter, a None parameter or module names are not",
            unexpected_kinds,
        ),
        fixed(
            7,
            "strict: a missing and an unexpected key raise with nn.Module's message",
            loading(mini_module, LOAD_TREE, lambda: {"w": torch.ones(2), "mean": torch.ones(2), "zz": torch.ones(1)}),
        ),
        fixed(
            7,
            "strict=True given: only a missing key",
            loading(mini_module, LOAD_TREE, lambda: {"w": torch.ones(2), "mean": torch.ones(2)}, strict=True),
        ),
        fixed(
            7,
            "strict: missing key first, then errors A and B in the order recorded; matching entries already copied",
            loading(mini_module, LOAD_TREE, lambda: {"w": torch.ones(3), "enc.v": "x"}),
        ),
        fixed(8, "a clean load returns LoadResult([], [])", loading(mini_module, LOAD_TREE, full, exact_result=True)),
        fixed(
            8,
            "strict=False returns the missing and the unexpected keys in a LoadResult",
            loading(
                mini_module,
                LOAD_TREE,
                lambda: {"w": torch.ones(2), "enc.v": torch.ones(3), "zz": torch.ones(1)},
                strict=False,
                exact_result=True,
            ),
        ),
    ]


# Part 3's input space, besides the trees of part 2 saved: a checkpoint of the tree LOAD_STEPS builds, with each change
# the rules name (a key missing, unexpected, under a None child, of a None parameter or of a non-persistent buffer, a
# shape or a value that does not fit, float64 values), loaded with each strict, in each kind of container.
LOAD_STEPS = [*tree_steps(SHOWCASE), ("none param", 1, "n"), ("buffer", 1, "scratch", (2,), False)]
LOAD_CHANGES: dict[str, Callable[[dict], None]] = {
    "none": lambda checkpoint: None,
    "a key missing": lambda checkpoint: checkpoint.pop("c0.w"),
    "an unexpected key": lambda checkpoint: checkpoint.update(zz=torch.ones(1)),
    "a key under a None child": lambda checkpoint: checkpoint.update({"c0.c1.w": torch.ones(1)}),
    "the key of a None parameter": lambda checkpoint: checkpoint.update({"c0.n": torch.ones(1)}),
    "the key of a non-persistent buffer": lambda checkpoint: checkpoint.update({"c0.scratch": torch.ones(2)}),
    "a wrong shape": lambda checkpoint: checkpoint.update(w=torch.ones(3)),
    "a value not a tensor": lambda checkpoint: checkpoint.update({"c1.w": "text"}),
    "a numpy array": lambda checkpoint: checkpoint.update({"c1.w": checkpoint["c1.w"].numpy()}),
    "float64 values": lambda checkpoint: checkpoint.update((key, value.double()) for key, value in checkpoint.items()),
}
LOAD_CONTAINERS = {
    "a dict": dict,
    "an OrderedDict": OrderedDict,
    "a mapping proxy": types.MappingProxyType,
    "a list of pairs": lambda checkpoint: list(checkpoint.items()),
}
STATE_DICT_SPACE = {
    **GRAPH_SPACE,
    "tensors": list(TENSORS),
    "change": list(LOAD_CHANGES),
    "strict": ["True", "False", "not given"],
    "checkpoint": list(LOAD_CONTAINERS),
}


def load_cases() -> list:
    """Part 3's generated loads, smallest first: every pair of a change and a strict, each container once."""
    dimensions = {name: STATE_DICT_SPACE[name] for name in ("change", "strict", "checkpoint")}
    points = every(dimensions, together=[("change", "strict"), ("checkpoint",)])
    return [(point, "", (point,)) for point in points]


def load_case(node: type, point: dict) -> list:
    """A generated load: the tree of LOAD_STEPS, a checkpoint of new values for its keys, changed, then loaded."""
    trees = Trees(node, twin=True)
    for step in LOAD_STEPS:
        trees.build(step)
    checkpoint = {key: values_for(value.shape, 10.0) for key, value in trees.nodes[0][1].state_dict().items()}
    LOAD_CHANGES[point["change"]](checkpoint)
    strict = {"True": True, "False": False, "not given": "default"}[point["strict"]]
    return loaded(trees, LOAD_CONTAINERS[point["checkpoint"]](checkpoint), strict)


def observe_state_dict_hidden(ns: dict) -> dict:
    mini_module = ns.get("MiniModule")
    cases = state_dict_cases(mini_module)
    node = node_class(mini_module)

    def next_step(rng, trees):
        if rng.random() < 0.3:
            rare = rng.random() < 0.1
            strict = rng.choice(RARE_STRICT if rare else [True, False, "default"])
            return ("load", strict, rng.randrange(10**6))
        return random_build_step(rng, trees, STATE_DICT_WEIGHTS)

    next_step.lengths = (1, 12)
    threads = quiet_threads()
    try:
        first = in_turn([[]], lambda: fixed_sequence(Trees(node, twin=True), FIXED_LOAD_STEPS, state_dict_play))
        sequences = run_sequences(
            STATE_DICT_SEED, STATE_DICT_SEQUENCES - 1, lambda: Trees(node, twin=True), next_step, state_dict_play
        )
    finally:
        torch.set_num_threads(threads)
    return labelled(
        *cases,
        own_machinery_case(ns, "test_state_dict_hidden"),
        own_code_case(ns, "test_state_dict_hidden"),
        ("the fixed sequence of saves and loads", first[0]),
        *spanned(
            tree_cases() + tensor_cases(), lambda steps: built_then(Trees(node, twin=True), steps, state_dict_play)
        ),
        *spanned(load_cases(), lambda point: load_case(node, point)),
        *seeded([[sequence] for sequence in sequences], lambda sequence: sequence),
    )


# ---------------------------------------------------------------------------------------------------------
# Part 4: HookHandle and ModesAndHooks
# ---------------------------------------------------------------------------------------------------------


MODES_SEED, MODES_SEQUENCES = 20130604, 50
MODES_WEIGHTS = {"child": 30, "share": 15, "none child": 4, "param": 25, "tie": 6, "none param": 3, "delete": 4}
FIXED_HOOK_STEPS = [
    ("pre", 0, ("new", "pre log", 0.5)),
    ("pre", 0, ("new", "pre tuple", 1.5)),
    ("remove", 0),
    ("pre", 0, ("new", "pre bare", 2.0)),
    ("remove", 1),
    ("call", 1.0, False),
    ("remove", 0),
]


class HookTrees(Trees):
    def __init__(self, node: type) -> None:
        super().__init__(node)
        self.hooks: list = []
        self.hook_family: list = []
        self.handles: list = []
        self.log: list = []


def make_hook(trees: HookTrees, kind: str, constant: float, label: str) -> Callable:
    """A hook that logs what it sees; some kinds also replace the input or the output."""
    log = trees.log
    if kind.startswith("pre"):

        def hook(module, args):
            log.append(f"{label}({trees.name_of(module)}, x={[round(v, 4) for v in args[0].tolist()]})")
            if kind == "pre tuple":
                return (args[0] + constant,)
            if kind == "pre bare":
                return args[0] * constant
            return None

    else:

        def hook(module, args, output):
            log.append(
                f"{label}({trees.name_of(module)}, x={[round(v, 4) for v in args[0].tolist()]}, "
                f"out={[round(v, 4) for v in output.tolist()]})"
            )
            return output - constant if kind == "forward replace" else None

    return hook


def hooks_state(trees: HookTrees) -> list:
    """The hook tables and training flags of every node, as the observation compares them."""
    seen = []
    for mini, _ in trees.nodes:
        for table in ("_forward_pre_hooks", "_forward_hooks"):
            entries = vars(mini)[table]
            if not isinstance(entries, dict):
                seen.append(["not a dict", kind_of(entries)])
            else:
                seen.append([all(type(key) is int for key in entries), [trees.name_of(h) for h in entries.values()]])
    seen.append([exact(vars(mini)["training"]) for mini, _ in trees.nodes])
    return seen


def register(trees: HookTrees, step: tuple) -> object:
    op, index, spec = step
    mini = trees.node(index)[0]
    if spec[0] == "new":
        label = f"h{len(trees.hooks) + 1}"
        trees.hooks.append(make_hook(trees, spec[1], spec[2], label))
        trees.hook_family.append(op)
    else:
        if spec[1] >= len(trees.hooks) or trees.hook_family[spec[1]] != op:
            raise Skip()
        label = f"h{spec[1] + 1}"
    hook = trees.hooks[int(label[1:]) - 1]
    trees.label[id(hook)] = label
    method = "register_forward_pre_hook" if op == "pre" else "register_forward_hook"
    table = vars(mini)["_forward_pre_hooks" if op == "pre" else "_forward_hooks"]
    before = set(table) if isinstance(table, dict) else set()
    got = outcome(lambda: getattr(mini, method)(hook))
    if isinstance(table, dict):
        KEYS_HAD.update(set(table) - before)  # a later HookBench case finds them had
    if got[0] == "raised":
        return raised(got[1])
    if isinstance(got[1], RemovableHandle):
        return "torch's RemovableHandle"
    trees.handles.append(got[1])
    return "registered"


def modes_play(trees: HookTrees, step: tuple) -> dict:
    """One step, under the rule that decides it: a registration (rule 3), a removal (4), a mode change (1 or 2); a
    call: first the pre-hooks that ran (rule 5), then, built on them, the forward hooks and the output (rules 6 and
    7 together, unnamed: they break the rules shown broken); a building step, unnamed."""
    op = step[0]
    if op in ("pre", "forward"):
        return {f"rule 3: registering a {op} hook": [register(trees, step), hooks_state(trees)]}
    if op == "remove":
        if step[1] >= len(trees.handles):
            raise Skip()
        got = outcome(trees.handles[step[1]].remove)
        return {"rule 4: removing a handle": [raised(got[1]) if got[0] == "raised" else "removed", hooks_state(trees)]}
    if op == "call":
        values = torch.tensor([1.0, -0.5]) * step[1]
        kwargs = {"shift": 0.25} if step[2] else {}
        with torch.no_grad():
            trees.log.clear()
            got = outcome(lambda: trees.nodes[0][0](values.clone(), **kwargs))
        if got[0] == "raised":
            return {"a call (rules 5 to 7)": [raised(got[1])]}
        pre = [entry for entry in trees.log if ", out=" not in entry]  # what each pre-hook saw: rule 5's, first
        later = [entry for entry in trees.log if ", out=" in entry], data(got[1], qualified=True), hooks_state(trees)
        return {
            "a call": [
                {"rule 5: the pre-hooks that ran, in order, and the input each saw": pre},
                {"the forward hooks that ran, and the output (rules 6 and 7, after rule 5)": list(later)},
            ]
        }
    if op in ("train", "eval", "bad train"):
        mini = trees.node(step[1])[0]
        if op == "eval":
            got = outcome(mini.eval)
        elif step[2] == "default":
            got = outcome(mini.train)
        else:
            got = outcome(lambda: mini.train(step[2]))
        rule = 2 if op == "eval" else 1
        return {f"rule {rule}: {op}()": [raised(got[1]) if got[0] == "raised" else got[1] is mini, hooks_state(trees)]}
    trees.build(step)
    return {"a building step": [hooks_state(trees)]}


def random_hook_step(rng: random.Random, trees: HookTrees) -> tuple:
    """A step of part 4, drawn from the case's seed."""
    roll = rng.random()
    if roll < 0.3:
        return random_build_step(rng, trees, MODES_WEIGHTS)
    index = rng.randrange(len(trees.nodes))
    if roll < 0.52:
        op = rng.choice(["pre", "forward"])
        same = [number for number, family in enumerate(trees.hook_family) if family == op]
        if same and rng.random() < 0.3:
            return (op, index, ("again", rng.choice(same)))
        kinds = ["pre log", "pre tuple", "pre bare"] if op == "pre" else ["forward log", "forward replace"]
        return (op, index, ("new", rng.choice(kinds), rng.choice([0.5, 1.5, 2.0, 3.0])))
    if roll < 0.64 and trees.handles:
        return ("remove", rng.randrange(len(trees.handles)))
    if roll < 0.84:
        return ("call", rng.choice([1.0, 2.0, -1.5]), rng.random() < 0.3)
    if roll < 0.92:
        return ("train", index, rng.choice([True, False, "default"]))
    if roll < 0.97:
        return ("eval", index)
    return ("bad train", index, rng.choice(["yes", 1, 0, None, 1.0]))


Pair = namedtuple("Pair", "first second")  # what a pre-hook may return: a tuple, taken as it is


KEYS_HAD: set = set()  # every key a hook registration of one observation of part 4 added, on any node or table


# What the pre-hooks of these kinds return: falsy results that are not None, each of which replaces args.
FALSY_RESULTS = {"pre empty": (), "pre zero": 0, "pre false": False}


class HookBench(Steps):
    """One fixed case of part 4: a fresh tree of nodes (made without part 1), hooks that log what they see, and the
    handles the case got."""

    def __init__(self, mini_module: type, links: list = ()) -> None:
        node = node_class(mini_module)
        self.keys = KEYS_HAD  # rule 3 wants a key no handle had before, on any node or table, in any case
        self.nodes = {"root": new_node(node)}
        for parent, key, child in links:
            if child is None:
                vars(self.nodes[parent])["_modules"][key] = None
                continue
            if child not in self.nodes:
                self.nodes[child] = new_node(node)
            vars(self.nodes[parent])["_modules"][key] = self.nodes[child]
        self.names = {id(module): name for name, module in self.nodes.items()}
        self.log: list = []
        self.handles: list = []
        super().__init__()

    def hook(self, label: str, kind: str, constant: float = 1.0) -> Callable:
        log, names = self.log, self.names

        def show(values):
            return [round(v, 4) for v in values.tolist()] if isinstance(values, torch.Tensor) else kind_of(values)

        if kind.startswith("pre"):

            def hook(module, args):
                given = "" if type(args) is tuple else f" as {kind_of(args)}"
                log.append(f"{label}({names.get(id(module))}, args={[show(a) for a in args]}{given})")
                if kind == "pre tuple":
                    return (args[0] + constant,)
                if kind == "pre pair":
                    return (args[0], constant)
                if kind == "pre named tuple":
                    return Pair(args[0], constant)
                if kind == "pre bare":
                    return args[0] * constant
                if kind == "pre list":
                    return [args[0] * constant]
                if kind == "pre raises":
                    raise KeyError(label)
                return FALSY_RESULTS.get(kind)

        else:

            def hook(module, args, output):
                given = "" if type(args) is tuple else f" as {kind_of(args)}"
                log.append(
                    f"{label}({names.get(id(module))}, args={[show(a) for a in args]}{given}, out={show(output)})"
                )
                if kind == "forward replace":
                    return output - constant
                if kind == "forward raises":
                    raise LookupError(label)
                return None

        self.names[id(hook)] = label
        return hook

    def register(self, where: str, family: str, hook: Callable) -> None:
        method = "register_forward_pre_hook" if family == "pre" else "register_forward_hook"
        table = vars(self.nodes[where])["_forward_pre_hooks" if family == "pre" else "_forward_hooks"]
        before = set(table) if isinstance(table, dict) else set()
        got = outcome(lambda: getattr(self.nodes[where], method)(hook))
        self.handles.append(got[1] if got[0] == "ok" else None)
        what = "registered" if got[0] == "ok" else raised(got[1])
        new = sorted(set(table) - before, key=repr) if isinstance(table, dict) else []
        fresh = len(new) == 1 and type(new[0]) is int and new[0] not in self.keys
        self.keys.update(new)
        label = f"{where}.{method}({self.names.get(id(hook), '?')})"
        done = {"what it did": what, "one new int key, no handle's before": fresh, "the hook tables": self.tables()}
        self.record(label, done, rule=3)

    def remove(self, number: int) -> None:
        got = outcome(self.handles[number].remove)
        what = raised(got[1]) if got[0] == "raised" else "removed"
        done = {"what it did": what, "the hook tables afterwards": self.tables()}
        self.record(f"handle {number + 1}.remove()", done, rule=4)

    def call(self, where: str = "root", **kwargs: object) -> None:
        self.log.clear()
        with torch.no_grad():
            got = outcome(lambda: self.nodes[where](torch.tensor([1.0, -0.5]), **kwargs))
        result = raised(got[1]) if got[0] == "raised" else data(got[1], qualified=True)
        # The called module's own pre-hooks run first, before its forward: what they saw is rule 5's. What follows
        # (its forward, the hooks of the modules it calls, its forward hooks) rules 5 to 7 shape together.
        own = next((n for n, entry in enumerate(self.log) if ", out=" in entry or f"({where}, " not in entry), None)
        pre, later = self.log[:own], self.log[len(self.log) if own is None else own :]
        seen = [
            {"rule 5: the called module's pre-hooks, in order, and what each saw": pre},
            {"after them (rules 6 and 7)": {"the hooks that ran, in order": later, "what it returned": result}},
        ]
        self.record(f"{where}(...)", seen)

    def tables(self) -> dict:
        """Every node's two hook tables: whether the keys are ints, and the hooks by label in order."""
        seen = {}
        for name, module in self.nodes.items():
            for table in ("_forward_pre_hooks", "_forward_hooks"):
                entries = vars(module)[table]
                if not isinstance(entries, dict):
                    seen[f"{name}.{table}"] = ["not a dict", kind_of(entries)]
                else:
                    labels = [self.names.get(id(h), "?") for h in entries.values()]
                    seen[f"{name}.{table}"] = {"int keys": all(type(key) is int for key in entries), "hooks": labels}
        return seen

    def flags(self) -> dict:
        return {name: exact(vars(module)["training"]) for name, module in self.nodes.items()}

    def mode(self, where: str, action: Callable[[object], object], what: str) -> None:
        module = self.nodes[where]
        got = outcome(lambda: action(module))
        result = raised(got[1]) if got[0] == "raised" else ["returns self", got[1] is module]
        done = {"what it did": result, "every training flag afterwards": self.flags()}
        self.record(f"{where}.{what}", done, rule=2 if what == "eval()" else 1)


MODE_TREE = [("root", "a", "a"), ("a", "c", "c"), ("root", "side", None), ("root", "b", "a"), ("root", "d", "d")]


def modes_cases(mini_module: type, hook_handle: object) -> list:
    def first():
        root = make_twins(mini_module, [])[0]
        return root.train() is root

    def train_tree():
        bench = HookBench(mini_module, MODE_TREE)
        bench.mode("root", lambda m: m.train(False), "train(False)")
        bench.mode("a", lambda m: m.train(True), "train(True)")
        bench.mode("root", lambda m: m.train(), "train()")
        return bench.seen

    def refused():
        bench = HookBench(mini_module, MODE_TREE)
        vars(bench.nodes["a"])["training"] = False
        for mode in (1, 0, "yes", None, 1.0, "", [True]):
            bench.mode("root", lambda m, mode=mode: m.train(mode), f"train({mode!r})")
        return bench.seen

    def eval_tree():
        bench = HookBench(mini_module, MODE_TREE)
        bench.mode("root", lambda m: m.eval(), "eval()")
        return bench.seen

    def eval_subtree():
        bench = HookBench(mini_module, MODE_TREE)
        bench.mode("a", lambda m: m.eval(), "eval()")
        vars(bench.nodes["root"])["training"] = False
        bench.mode("d", lambda m: m.eval(), "eval()")
        return bench.seen

    def entries():
        bench = HookBench(mini_module, [("root", "a", "a")])
        one, two, three = bench.hook("h1", "pre log"), bench.hook("h2", "pre log"), bench.hook("f1", "forward log")
        bench.register("root", "pre", one)
        bench.register("root", "pre", two)
        bench.register("root", "forward", three)
        bench.register("a", "pre", one)
        kinds = [
            [
                isinstance(handle, hook_handle) if isinstance(hook_handle, type) else None,
                isinstance(handle, RemovableHandle),
            ]
            for handle in bench.handles
        ]
        return {
            "each step": bench.seen,
            "each handle: a HookHandle, not torch's RemovableHandle": kinds,
            "how many different handles": len({id(handle) for handle in bench.handles}),
        }

    def new_keys():
        bench = HookBench(mini_module, [("root", "a", "a")])
        steps = [("root", "pre", "h1"), ("a", "pre", "h2"), ("root", "forward", "f1"), ("a", "forward", "f2")]
        keys = []
        for where, family, label in steps:
            table = vars(bench.nodes[where])["_forward_pre_hooks" if family == "pre" else "_forward_hooks"]
            before = set(table)
            bench.register(where, family, bench.hook(label, "pre log" if family == "pre" else "forward log"))
            keys.append(sorted(set(table) - before))
        bench.remove(0)
        table = vars(bench.nodes["root"])["_forward_pre_hooks"]
        before = set(table)
        bench.register("root", "pre", bench.hook("h3", "pre log"))
        keys.append(sorted(set(table) - before))
        new = [found[0] if len(found) == 1 else None for found in keys]
        fresh = all(type(k) is int for k in new) and len(set(new)) == len(new)  # none had before, in any table
        return {
            "each step": bench.seen,
            "how many new keys each registration added": [len(found) for found in keys],
            "each new key an int no handle had before": fresh,
        }

    def every_table_kind():
        """Registrations on both tables of two nodes, in turn: a pre-hook, a forward hook, a forward hook on another
        node, eight times over; each key must be one that no handle had before, in this case or an earlier one."""
        bench = HookBench(mini_module, [("root", "a", "a")])
        for round_ in range(8):
            bench.register("root", "pre", bench.hook(f"p{round_}", "pre log"))
            bench.register("root", "forward", bench.hook(f"f{round_}", "forward log"))
            bench.register("a", "forward", bench.hook(f"g{round_}", "forward log"))
        return bench.seen

    def same_callable():
        bench = HookBench(mini_module, [("root", "a", "a")])
        hook = bench.hook("h", "pre log")
        bench.register("root", "pre", hook)
        bench.register("root", "pre", hook)
        bench.register("a", "pre", hook)
        bench.call()
        return bench.seen

    def the_fixed_sequence():
        """Rule 3's sequence of registrations and removals (its call is rules 5 to 7's: not played here)."""
        trees = HookTrees(node_class(mini_module))
        return fixed_sequence(trees, [step for step in FIXED_HOOK_STEPS if step[0] != "call"], modes_play)

    def own_entry():
        bench = HookBench(mini_module)
        for label in ("h1", "h2", "h3"):
            bench.register("root", "pre", bench.hook(label, "pre log"))
        bench.remove(1)
        bench.remove(1)
        bench.remove(0)
        bench.call()
        return bench.seen

    def later_of_two(family: str) -> Callable[[], list]:
        def run():
            bench = HookBench(mini_module)
            kind = "pre log" if family == "pre" else "forward replace"
            first, other = bench.hook("f", kind, 2.0), bench.hook("g", kind, 3.0)
            bench.register("root", family, first)
            bench.register("root", family, other)
            bench.register("root", family, first)
            bench.remove(2)  # the later entry of f goes; the first one stays ahead of g
            bench.call()
            bench.remove(2)
            bench.remove(0)
            bench.call()
            return bench.seen

        return run

    def two_modules():
        bench = HookBench(mini_module, [("root", "a", "a")])
        hook = bench.hook("f", "forward log")
        bench.register("root", "forward", hook)
        bench.register("a", "forward", hook)
        bench.remove(1)
        bench.call()
        return bench.seen

    def pre_chain():
        bench = HookBench(mini_module)
        hooks = [
            ("p1", "pre log", 0.0),
            ("p2", "pre bare", 2.0),
            ("p3", "pre log", 0.0),
            ("p4", "pre tuple", 1.5),
            ("p5", "pre log", 0.0),
            ("p6", "pre bare", -1.0),
            ("p7", "pre log", 0.0),
        ]
        for label, kind, constant in hooks:
            bench.register("root", "pre", bench.hook(label, kind, constant))
        bench.call()
        return bench.seen

    def pre_pair():
        bench = HookBench(mini_module)
        bench.register("root", "pre", bench.hook("p1", "pre pair", 0.75))
        bench.register("root", "pre", bench.hook("p2", "pre log"))
        bench.call()
        return bench.seen

    def pre_falsy(kind):
        def run():
            bench = HookBench(mini_module)
            bench.register("root", "pre", bench.hook("p1", kind))
            bench.register("root", "pre", bench.hook("p2", "pre log"))
            bench.call()
            return bench.seen

        return run

    def pre_named_tuple():
        bench = HookBench(mini_module)
        bench.register("root", "pre", bench.hook("p1", "pre named tuple", 0.75))
        bench.register("root", "pre", bench.hook("p2", "pre log"))
        bench.call()
        return bench.seen

    def same_key_twice():
        links = [("root", "enc", "enc"), ("enc", "inner", "enc.inner"), ("root", "head", "head")]
        bench = HookBench(mini_module, [*links, ("head", "inner", "head.inner")])
        bench.mode("root", lambda m: m.train(False), "train(False)")
        return bench.seen

    def pre_list():
        bench = HookBench(mini_module)
        bench.register("root", "pre", bench.hook("p1", "pre log"))
        bench.register("root", "pre", bench.hook("p2", "pre list", 2.0))
        bench.call()  # forward gets the list itself as x, and fails on it
        return bench.seen

    def keywords():
        bench = HookBench(mini_module)
        bench.register("root", "pre", bench.hook("p1", "pre log"))
        bench.register("root", "forward", bench.hook("f1", "forward log"))
        bench.call(shift=0.25)
        bench.call()
        return bench.seen

    def no_hooks():
        bench = HookBench(mini_module, [("root", "a", "a")])
        bench.call()
        bench.call(shift=-1.0)
        return bench.seen

    def propagate():
        seen = []
        for family, kind in (("pre", "pre raises"), ("forward", "forward raises")):
            bench = HookBench(mini_module)
            bench.register("root", family, bench.hook("x", kind))
            bench.call()
            seen.append(bench.seen)
        bench = HookBench(mini_module)
        bench.call(shift="text")  # forward itself raises TypeError
        seen.append(bench.seen)
        return seen

    def forward_chain():
        bench = HookBench(mini_module)
        bench.register("root", "pre", bench.hook("p1", "pre bare", 2.0))
        hooks = [
            ("f1", "forward log", 0.0),
            ("f2", "forward replace", 1.5),
            ("f3", "forward log", 0.0),
            ("f4", "forward replace", 0.5),
            ("f5", "forward log", 0.0),
        ]
        for label, kind, constant in hooks:
            bench.register("root", "forward", bench.hook(label, kind, constant))
        bench.call()
        return bench.seen

    def submodules():
        bench = HookBench(mini_module, [("root", "a", "a"), ("a", "c", "c"), ("root", "b", "a")])
        bench.register("a", "forward", bench.hook("fa", "forward replace", 1.0))
        bench.register("c", "forward", bench.hook("fc", "forward log"))
        bench.register("root", "forward", bench.hook("fr", "forward log"))
        bench.call()
        return bench.seen

    return [
        fixed(1, "train() on a new tree returns the module itself (the visible lines of this cell)", first),
        fixed(1, "train(False), train(True) on a subtree, train(): shared and deep modules, None skipped", train_tree),
        fixed(1, "train(False) reaches two different modules under one key ('inner') at one depth", same_key_twice),
        fixed(1, "1, 0, 'yes', None, 1.0, '', [True] raise ValueError and change no flag", refused),
        fixed(2, "eval() sets False on every module below and returns self", eval_tree),
        fixed(2, "eval() on a subtree leaves the modules above it and beside it", eval_subtree),
        fixed(3, "entries go last under int keys; each registration returns a new HookHandle", entries),
        fixed(3, "keys are new across tables and modules, and after a removal", new_keys),
        fixed(
            3,
            "a pre-hook, a forward hook, a forward hook on a child, eight times: keys no handle had, on any table",
            every_table_kind,
        ),
        fixed(3, "the same callable registered twice on one module and once on a child: three entries", same_callable),
        fixed(3, "the fixed sequence of registrations and removals", the_fixed_sequence),
        fixed(4, "remove() deletes its own entry; a second call does nothing", own_entry),
        fixed(4, "the same pre-hook twice: the later handle removes the later entry", later_of_two("pre")),
        fixed(4, "the same forward hook twice: the later handle removes the later entry", later_of_two("forward")),
        fixed(4, "the same hook on two modules: a handle removes its module's entry only", two_modules),
        fixed(5, "pre-hooks in order: None keeps args, a tensor is wrapped, a tuple replaces them", pre_chain),
        fixed(5, "a pre-hook's 2-tuple becomes forward's two positional arguments", pre_pair),
        fixed(5, "a pre-hook's named tuple is a tuple: taken as it is, two positional arguments", pre_named_tuple),
        *(
            fixed(5, f"a pre-hook that returns {shown_as}: not None, so it replaces args", pre_falsy(kind))
            for kind, shown_as in [("pre empty", "()"), ("pre zero", "0"), ("pre false", "False")]
        ),
        fixed(5, "a pre-hook's list is one argument, wrapped like any non-tuple", pre_list),
        fixed(6, "keyword arguments reach forward untouched, and no hook sees them", keywords),
        fixed(6, "without hooks, module(x) is forward(x), keyword arguments included", no_hooks),
        fixed(6, "an exception in a pre-hook, a forward hook or forward propagates unchanged", propagate),
        fixed(
            7, "forward hooks in order see the args after the pre-hooks; a result replaces the output", forward_chain
        ),
        fixed(7, "submodules run their own hooks, once per call (a shared one twice)", submodules),
    ]


# Part 4's input space: every order of registering two hooks on a module and removing each through its handle (up
# to twice), for two forward hooks, two pre-hooks, one of each, or one forward hook registered twice; every pair of
# what a pre-hook and a forward hook return (each kind the rules name) and whether the call has keyword arguments;
# train() with each kind of mode (and eval()) on the root, a child and a module registered twice.
HOOK_PAIRS = {  # the families of the hooks a and b (a replaces what it sees, b logs it), and whether b is a again
    "two forward hooks": ("forward", "forward", False),
    "two pre-hooks": ("pre", "pre", False),
    "a pre-hook and a forward hook": ("pre", "forward", False),
    "one forward hook twice": ("forward", "forward", True),
}
REPLACING = {"pre": "pre tuple", "forward": "forward replace"}
PRE_RESULTS = {"None": "pre log", "a tuple": "pre tuple", "a pair": "pre pair", "a bare value": "pre bare"}
PRE_RESULTS |= {"a list": "pre list", "a named tuple": "pre named tuple", "raises": "pre raises"}
FORWARD_RESULTS = {"None": "forward log", "a replacement": "forward replace", "raises": "forward raises"}
MODES = {"True": True, "False": False, "not given": "default", "eval()": "eval"}
MODES |= {"1": 1, "0": 0, "1.0": 1.0, "'yes'": "yes", "''": "", "None": None}
MODE_PLACES = {"the root": "root", "a child": "d", "a module registered twice": "a"}
MODES_SPACE = {
    "hooks": list(HOOK_PAIRS),
    "order": orders(2, 2),
    "pre-hook returns": list(PRE_RESULTS),
    "forward hook returns": list(FORWARD_RESULTS),
    "keyword arguments": ["none", "shift"],
    "mode": list(MODES),
    "on": list(MODE_PLACES),
}


def hook_cases() -> list:
    """Part 4's generated cases, smallest first: (point, '', (point,)) of each of its three families."""
    families = [
        every({name: MODES_SPACE[name] for name in ("hooks", "order")}),
        every({name: MODES_SPACE[name] for name in ("pre-hook returns", "forward hook returns", "keyword arguments")}),
        every({name: MODES_SPACE[name] for name in ("mode", "on")}),
    ]
    return [(point, "", (point,)) for family in families for point in family]


def hook_case(mini_module: type, point: dict) -> list:
    """A generated case of part 4 on a fresh HookBench: its steps, each with what it did and the state after it."""
    bench = HookBench(mini_module, MODE_TREE)
    if "order" in point:
        first, second, again = HOOK_PAIRS[point["hooks"]]
        hooks = {"a": bench.hook("a", REPLACING[first], 0.5)}
        hooks["b"] = hooks["a"] if again else bench.hook("b", f"{second} log")
        families, handles = {"a": first, "b": second}, {}
        for event in point["order"].split():
            name = event[1]
            if event[0] == "+":
                handles[name] = len(bench.handles)
                bench.register("a", families[name], hooks[name])
            else:
                bench.remove(handles[name])
        bench.call()
    elif "mode" in point:
        mode = MODES[point["mode"]]
        if mode == "eval":
            bench.mode(MODE_PLACES[point["on"]], lambda module: module.eval(), "eval()")
        elif mode == "default":
            bench.mode(MODE_PLACES[point["on"]], lambda module: module.train(), "train()")
        else:
            bench.mode(MODE_PLACES[point["on"]], lambda module: module.train(mode), f"train({mode!r})")
    else:
        bench.register("a", "pre", bench.hook("p", PRE_RESULTS[point["pre-hook returns"]], 2.0))
        bench.register("a", "forward", bench.hook("f", FORWARD_RESULTS[point["forward hook returns"]], 1.5))
        bench.call(**({"shift": 0.25} if point["keyword arguments"] == "shift" else {}))
    return bench.seen


def observe_modes_hidden(ns: dict) -> dict:
    mini_module = ns.get("MiniModule")
    threads = quiet_threads()
    KEYS_HAD.clear()
    try:
        cases = modes_cases(mini_module, ns.get("HookHandle"))
        node = node_class(mini_module)
        random_hook_step.lengths = (1, 14)
        sequences = run_sequences(
            MODES_SEED, MODES_SEQUENCES - 1, lambda: HookTrees(node), random_hook_step, modes_play
        )
    finally:
        torch.set_num_threads(threads)
    own = own_machinery_case(ns, "test_modes_and_hooks_hidden"), own_code_case(ns, "test_modes_and_hooks_hidden")
    generated = spanned(hook_cases(), lambda point: hook_case(mini_module, point))
    return labelled(
        *cases, *own, *generated, *seeded([[sequence] for sequence in sequences], lambda sequence: sequence)
    )


# ---------------------------------------------------------------------------------------------------------
# Every part: "MiniModule must not derive from nn.Module or use its methods" (the sketch's "What you may use")
# ---------------------------------------------------------------------------------------------------------

PART_ROOTS = {  # what each part's cell defines, walked by borrowed_machinery
    "test_mini_module_hidden": ("MiniModule",),
    "test_traversal_hidden": ("Traversal",),
    "test_state_dict_hidden": ("StateDict",),
    "test_modes_and_hooks_hidden": ("ModesAndHooks", "HookHandle"),
}
OWN_MACHINERY_CLAUSE = {  # the number of the part's "nothing of nn.Module's machinery" rule
    "test_mini_module_hidden": 6,
    "test_traversal_hidden": 7,
    "test_state_dict_hidden": 9,
    "test_modes_and_hooks_hidden": 8,
}


def own_machinery_case(ns: dict, grade_id: str) -> tuple[str, object]:
    """The fixed case of a part's "nothing of nn.Module's machinery" rule: what the part's classes reach, by
    reference, of nn.Module (its MRO, methods, source functions, instances) or of RemovableHandle; the other parts'
    classes and the methods attach copied from them are left to their own parts."""
    mine = {name: ns.get(name) for name in PART_ROOTS[grade_id]}
    others = [ns.get(name) for other, names in PART_ROOTS.items() if other != grade_id for name in names]
    attached = [
        value
        for other in others
        if isinstance(other, type) and other is not ns.get("MiniModule")
        for value in vars(other).values()
    ]
    leave = tuple(value for value in [*others, *attached] if value is not None)
    return fixed(
        OWN_MACHINERY_CLAUSE[grade_id],
        "the part's classes reach nothing of nn.Module's machinery",
        lambda: borrowed_machinery(mine, ns, also=(RemovableHandle,), leave=leave),
    )


def module_code() -> dict:
    """{code object: name} of every function of torch/nn/modules/module.py: nn.Module's methods (static, class and
    property ones included) and the module's own functions (register_module_forward_hook...)."""
    found = {}
    source = sys.modules[nn.Module.__module__]
    for owner, holder in (("nn.Module.", vars(nn.Module)), ("torch.nn.modules.module.", vars(source))):
        for name, value in holder.items():
            functions = [value.fget, value.fset] if isinstance(value, property) else [getattr(value, "__func__", value)]
            for function in functions:
                code = getattr(function, "__code__", None)
                if isinstance(code, types.CodeType) and code.co_filename == nn.Module.__init__.__code__.co_filename:
                    found[code] = owner + name
    return found


def own_code_scenario(ns: dict, grade_id: str) -> Callable[[], object]:
    """A short use of the part's methods (trees built before, outside the watch), for code_that_runs."""
    mini_module = ns.get("MiniModule")
    if grade_id == "test_mini_module_hidden":

        def use() -> list:
            module, child = mini_module(), mini_module()
            module.w = nn.Parameter(torch.zeros(2))
            module.sub = child
            module.register_buffer("mean", torch.zeros(2), persistent=False)
            module.w = None
            read = [module.mean, getattr(module, "missing", None)]
            del module.sub, module.mean
            return read

        return use
    root = make_twins(mini_module, [*SD_TREE, ("dec", "module", "enc")])[0]
    if grade_id == "test_traversal_hidden":
        return lambda: (root.named_modules(), root.named_parameters(), root.named_buffers())
    if grade_id == "test_state_dict_hidden":
        return lambda: (root.load_state_dict(root.state_dict()), root.load_state_dict({}, strict=False))

    def call() -> None:
        root.eval()
        root.train()
        handles = [root.register_forward_pre_hook(lambda *args: None), root.register_forward_hook(lambda *a: None)]
        root(torch.ones(2))
        for handle in handles:
            handle.remove()

    return call


def handle_code() -> dict:
    """{code object: name} of the methods of torch.utils.hooks.RemovableHandle (part 4's rule 8 forbids it too)."""
    return {
        function.__code__: f"RemovableHandle.{name}"
        for name, function in vars(RemovableHandle).items()
        if isinstance(function, types.FunctionType)
    }


def own_code_case(ns: dict, grade_id: str) -> tuple[str, object]:
    """The run-time half of a part's "nothing of nn.Module's machinery" rule: none of nn.Module's code runs while the
    part's methods do, however it was reached (a name built at run time, getattr with a string, importlib), nor a
    copy of it made at run time, nor anything in another process or thread (grader.observing.code_that_runs)."""
    hooks = grade_id == "test_modes_and_hooks_hidden"
    watched = module_code() | (handle_code() if hooks else {})

    def observe() -> object:
        action = own_code_scenario(ns, grade_id)
        return code_that_runs(action, watched)

    forbidden = "nn.Module's or RemovableHandle's" if hooks else "nn.Module's"
    what = f"the part's methods run, in one thread, none of {forbidden} code nor code made at run time"
    return fixed(OWN_MACHINERY_CLAUSE[grade_id], what, observe)


# hidden test cell -> {dimension of its generated cases: the values they take, plainest first} (grader.coverage).
SPACES = {
    "test_mini_module_hidden": MINI_SPACE,
    "test_traversal_hidden": {**GRAPH_SPACE, "tensors": list(TENSORS)},
    "test_state_dict_hidden": STATE_DICT_SPACE,
    "test_modes_and_hooks_hidden": MODES_SPACE,
}

OBSERVERS = {
    "test_mini_module_hidden": whole(observe_mini_hidden),
    "test_traversal_hidden": whole(observe_traversal_hidden),
    "test_state_dict_hidden": whole(observe_state_dict_hidden),
    "test_modes_and_hooks_hidden": whole(observe_modes_hidden),
}

CLAUSES = {
    "test_mini_module_hidden": {
        1: "__init__ writes the seven slots, new and in order",
        2: "__setattr__ routes by the six rules, in order",
        3: "__getattr__ reads the registries, or raises the exact AttributeError",
        4: "__delattr__ deletes from the first registry that has the name",
        5: "register_buffer checks in order, then registers and sets persistence",
        6: "MiniModule reaches nothing of nn.Module's machinery",
    },
    "test_traversal_hidden": {
        1: "each method gives (str, registered object) tuples",
        2: "named_modules walks depth first, pre-order, with dotted names",
        3: "named_modules gives each module once, under its first name",
        4: "named_parameters gives each Parameter once, under its first name",
        5: "named_buffers does the same for every buffer, persistent or not",
        6: "no method changes the tree; a second call gives the same",
        7: "Traversal reaches nothing of nn.Module's machinery",
    },
    "test_state_dict_hidden": {
        1: "state_dict saves parameters, persistent buffers, then children",
        2: "state_dict does not de-duplicate",
        3: "each value is tensor.detach()",
        4: "load_state_dict refuses a non-mapping and never modifies the checkpoint",
        5: "matching entries are copied in place; missing keys, errors A and B",
        6: "unexpected keys, module by module",
        7: "the messages and the RuntimeError; strict",
        8: "a LoadResult of two new lists of str",
        9: "StateDict reaches nothing of nn.Module's machinery",
    },
    "test_modes_and_hooks_hidden": {
        1: "train(mode) checks mode is a bool, sets every flag below, returns self",
        2: "eval() is train(False)",
        3: "registering adds a new entry under a never-used int key, returns a HookHandle",
        4: "HookHandle.remove() deletes its own entry only, once",
        5: "pre-hooks run in order and may replace args",
        6: "forward gets the args and the keyword arguments; exceptions propagate",
        7: "forward hooks run in order and may replace the output",
        8: "ModesAndHooks and HookHandle reach nothing of nn.Module's machinery or RemovableHandle",
    },
}

# A part whose classes reach nn.Module's machinery earns nothing, its visible test cell included (grader.trusted).
MUST_NOT = {
    "test_mini_module_hidden": ([6], ["test_mini_module_visible"]),
    "test_traversal_hidden": ([7], ["test_traversal_visible"]),
    "test_state_dict_hidden": ([9], ["test_state_dict_visible"]),
    "test_modes_and_hooks_hidden": ([8], ["test_modes_and_hooks_visible"]),
}
