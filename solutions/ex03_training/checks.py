"""Trusted checks for ex03_training: what module_modes and train_with_frozen_norm_stats return and change on the
models of each test cell (fixed and seeded cases), recorded case by case."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from random import Random

import numpy
import torch
from torch import nn
from torch.nn.modules.batchnorm import _NormBase

from grader.observing import (
    GRAPH_SPACE,
    SHOWCASE,
    built,
    drawn,
    every,
    fixed,
    graph_cases,
    graph_dimensions,
    holder,
    kind_of,
    labelled,
    numbers,
    plain,
    seed_torch,
    seeded,
    spanned,
)


def boolean(value: object) -> object:
    """A flag as the tests judge it: "True" or "False" for a real bool (JSON alone would equate True with 1)."""
    return repr(value) if type(value) is bool else {"not a bool": type(value).__name__}


# ---------------------------------------------------------------------------------------------------------
# Part 1: module_modes
# ---------------------------------------------------------------------------------------------------------


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(2, 2)
        self.decoder = self.encoder


class ModesFork(nn.Module):
    def __init__(self, left, right):
        super().__init__()
        self.left = left
        self.right = right


class ModesHolder(nn.Module):
    def __init__(self, listed, named):
        super().__init__()
        self.listed = nn.ModuleList(listed)
        self.register_module("absent", None)
        self.named = nn.ModuleDict(named)
        self.helpers = [nn.Dropout(0.5)]


MODES_SEED, MODES_CASES = 20130301, 100
BAD_FLAGS = [
    lambda: 1,
    lambda: 0,
    lambda: "yes",
    lambda: "",
    lambda: "False",
    lambda: None,
    lambda: 1.0,
    lambda: torch.tensor(True),
]


def modes_build(rng: Random, depth: int, pool: list) -> nn.Module:
    if pool and rng.random() < 0.25:
        return rng.choice(pool)
    leaves = ["linear", "dropout", "batchnorm", "instancenorm", "layernorm", "relu"]
    kind = rng.choice(leaves + ["sequential", "fork", "holder"] * 3 if depth > 0 else leaves)
    if kind == "sequential":
        module = nn.Sequential(*[modes_build(rng, depth - 1, pool) for _ in range(rng.randint(1, 3))])
    elif kind == "fork":
        left = modes_build(rng, depth - 1, pool)
        module = ModesFork(left, modes_build(rng, depth - 1, pool))
    elif kind == "holder":
        listed = [modes_build(rng, depth - 1, pool) for _ in range(rng.randint(0, 2))]
        keys = rng.sample(["enc", "dec", "head", "b", "a"], rng.randint(0, 2))
        module = ModesHolder(listed, {key: modes_build(rng, depth - 1, pool) for key in keys})
    elif kind == "linear":
        module = nn.Linear(2, 2)
    elif kind == "dropout":
        module = nn.Dropout(0.5)
    elif kind == "batchnorm":
        module = nn.BatchNorm1d(2)
    elif kind == "instancenorm":
        module = nn.InstanceNorm1d(2)
    elif kind == "layernorm":
        module = nn.LayerNorm(2)
    else:
        module = nn.ReLU()
    pool.append(module)
    return module


def modes_case(rng: Random) -> tuple[int, nn.Module, list]:
    pool = []
    model = modes_build(rng, rng.choice([0, 1, 1, 2, 2, 3, 3, 4]), pool)
    if rng.random() < 0.3:
        model.eval()
    for module in pool:
        if rng.random() < 0.25:
            module.training = rng.random() < 0.5
    if rng.random() < 0.2:
        for module in rng.sample(pool, rng.randint(1, min(2, len(pool)))):
            module.training = rng.choice(BAD_FLAGS)()
    if rng.random() < 0.04:
        rng.choice(pool).training = nn.Parameter(torch.tensor(1.0))
    return len(list(model.modules())), model, pool


def flag_object(module: nn.Module) -> object:
    state = vars(module)
    return state["training"] if "training" in state else state["_parameters"].get("training")


def entries(result: object) -> object:
    """The entries of a result of module_modes whatever dict class it is (rule 1 judges the class): its keys in
    order, each value as a flag."""
    if not isinstance(result, dict):
        return {"not a dict": type(result).__name__}
    return {
        "the keys in order": [plain(name) for name in dict.keys(result)],
        "each flag": {key_text(name): boolean(flag) for name, flag in dict.items(result)},
    }


def key_text(key: object) -> str:
    """A key of a result as a key of the observation: itself if a str, else its repr."""
    return key if type(key) is str else repr(key)


def modes_seen(module_modes: object, model: nn.Module, pool: list) -> dict:
    """One seeded case: each rule's part under its label. What a returned dict holds is split by rule: the keys
    named_modules() gives, in the dict's order, and their flags (rule 2), any other key (rule 3: a second name).
    What an exception says is rule 5's, inside rule 4's outcome (it exists only where rule 4 raises), where the first
    bad flag is a str or None: a flag equal to a bool (1, a tensor) or a Parameter is rule 4's subtlety, and the
    fixed cases check rule 5 on those."""
    names = [name for name, _ in model.named_modules()]
    bad = [(name, flag_object(module)) for name, module in model.named_modules() if type(module.training) is not bool]
    watched = [module for _, module in model.named_modules()]
    watched += [helper for module in pool if isinstance(module, ModesHolder) for helper in module.helpers]
    flags = [(module, flag_object(module)) for module in watched]
    try:
        result = module_modes(model)
    except Exception as error:  # noqa: BLE001
        outcome = {"raises": kind_of(error)}
        if bad and type(bad[0][1]) in (str, type(None)):
            outcome["rule 5: its message names the first module whose flag is not a bool"] = repr(bad[0][0]) in str(
                error
            )
    else:
        keys = list(dict.keys(result)) if isinstance(result, dict) else []
        outcome = {
            "returns": {
                "rule 1: the class of the result": kind_of(result),
                "rule 2: the keys named_modules() gives, in the result's order": [key for key in keys if key in names],
                "rule 2: their flags": {key: boolean(dict.get(result, key)) for key in keys if key in names},
                "rule 3: any other key (a second name, a None child)": [plain(key) for key in keys if key not in names],
            }
        }
    return {
        "rule 4: what the call does": outcome,
        "rule 6: every module keeps its very flag object": all(flag_object(module) is flag for module, flag in flags),
    }


def outcome(call: object) -> object:
    """What a call of module_modes did, as rule 4 judges it: returned, or raised an exception of which class."""
    try:
        call()
    except Exception as error:  # noqa: BLE001
        return ["raises", kind_of(error)]
    return ["returns"]


def naming(call: object, name: str) -> object:
    """Whether the message of the exception a call raises (of any class) contains repr(name), as rule 5 asks."""
    try:
        call()
    except Exception as error:  # noqa: BLE001
        return ["raises", repr(name) in str(error)]
    return ["returns"]


def keeping(model: nn.Module, call: object) -> bool:
    """Whether every module keeps the very flag object it had (rule 6), whether the call returns or raises."""
    flags = [(module, flag_object(module)) for module in model.modules()]
    try:
        call()
    except Exception:  # noqa: BLE001, S110 - raising is allowed here, changing a flag is not
        pass
    return all(flag_object(module) is flag for module, flag in flags)


def three_levels() -> nn.Module:
    """A model three levels deep, built fresh for every case: 0, 1, 1.0, 1.1, 1.1.0, 1.1.1, 2."""
    return nn.Sequential(
        nn.Linear(2, 2),
        nn.Sequential(nn.Dropout(0.5), nn.Sequential(nn.BatchNorm1d(2), nn.ReLU())),
        nn.Linear(2, 2),
    )


def with_flag(model: nn.Module, path: str, flag: object) -> nn.Module:
    (model if path == "" else model.get_submodule(path)).training = flag
    return model


def modes_fixed(module_modes: object) -> list:
    def result_type(build):
        return lambda: kind_of(module_modes(build()))

    def two_calls():
        model = three_levels()
        first, second = module_modes(model), module_modes(model)
        return {
            "the first is exactly a dict": type(first) is dict,
            "the second is exactly a dict": type(second) is dict,
            "the second is a new dict": first is not second,
        }

    def listed(build):
        return lambda: entries(module_modes(build()))

    def mixed():
        model = three_levels().eval()
        model[1].train()
        model[1][1][0].training = False
        return model

    def keys_unsorted():
        model = ModesHolder([nn.Linear(2, 2)], {})
        model.named = nn.ModuleDict({"enc": nn.Sequential(nn.ReLU()), "dec": nn.Dropout(0.5).eval()})
        return model

    def eleven():
        model = nn.Sequential(*[nn.Dropout(0.5) for _ in range(11)])
        model[9].eval()
        return model

    def deep():
        model = nn.Sequential(nn.Sequential(nn.Sequential(nn.Sequential(nn.Dropout(0.5))))).eval()
        model[0].train()
        model[0][0].eval()
        model[0][0][0].train()
        model[0][0][0][0].eval()
        return model

    def tied():
        model = Tied()
        model.encoder.eval()
        return model

    def shared_under_two_parents():
        shared = nn.Dropout(0.5).eval()
        return nn.Sequential(nn.Sequential(nn.Linear(2, 2), shared), nn.Sequential(shared, nn.ReLU()))

    def shared_container():
        block = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5).eval())
        return ModesFork(block, nn.Sequential(block))

    def none_child():
        model = ModesHolder([nn.ReLU()], {"a": nn.Dropout(0.5).eval()})
        inner = nn.Sequential(nn.Linear(2, 2))
        inner.register_module("gone", None)
        model.listed.append(inner)
        return model

    def raising(flag, path="1.1.0"):
        return lambda: outcome(lambda: module_modes(with_flag(three_levels(), path, flag)))

    def named(build, name):
        return lambda: naming(lambda: module_modes(build()), name)

    def quoted():
        model = nn.ModuleDict({"it's": nn.Sequential(nn.Linear(2, 2))})  # repr writes "it's" in double quotes
        model["it's"].training = "yes"
        return model

    def unsorted_bad():
        model = nn.ModuleDict({"b": nn.ReLU(), "a": nn.ReLU()})  # named_modules() order is not sorted order
        model["b"].training = "yes"
        model["a"].training = None
        return model

    def two_bad():
        model = three_levels()
        model[1][1][0].training = "yes"
        model[2].training = None
        return model

    def bad_after_good_then_shallow():
        model = nn.Sequential(nn.Sequential(nn.ReLU(), nn.Sequential(nn.Dropout(0.5))), nn.Linear(2, 2))
        model[1].training = 0.0
        model[0][1][0].training = "False"
        return model

    def bad_shared():
        shared = nn.Dropout(0.5)
        shared.training = ""
        return nn.Sequential(nn.Sequential(nn.ReLU(), shared), shared)

    def bad_in_dict():
        model = keys_unsorted()
        model.named["dec"].training = None
        return model

    def kept(build):
        def run():
            model = build()
            return keeping(model, lambda: module_modes(model))

        return run

    return [
        fixed(
            1,
            "a one-Linear Sequential: the result is exactly a dict",
            result_type(lambda: nn.Sequential(nn.Linear(2, 2))),
        ),
        fixed(1, "a model three levels deep: the result is exactly a dict", result_type(three_levels)),
        fixed(1, "a model holding a ModuleList and a ModuleDict: exactly a dict", result_type(keys_unsorted)),
        fixed(1, "two calls on one model: two new dicts, not the model's own", two_calls),
        fixed(2, "a single Dropout without children: one entry, '' for the root", listed(lambda: nn.Dropout(0.1))),
        fixed(2, "a model three levels deep, all training", listed(three_levels)),
        fixed(2, "a model three levels deep in eval mode", listed(lambda: three_levels().eval())),
        fixed(2, "modes mixed at three levels (root eval, '1' training, '1.1.0' eval)", listed(mixed)),
        fixed(2, "a ModuleDict whose keys are not in alphabetical order ('enc' before 'dec')", listed(keys_unsorted)),
        fixed(2, "a Sequential of eleven children: '10' comes after '9'", listed(eleven)),
        fixed(2, "a Dropout four levels deep, modes alternating by level", listed(deep)),
        fixed(3, "a Linear registered as encoder and decoder: once, under 'encoder'", listed(tied)),
        fixed(
            3, "a Dropout shared by two Sequentials: once, under its first name '0.1'", listed(shared_under_two_parents)
        ),
        fixed(3, "a Sequential shared by two parents: it and its children once", listed(shared_container)),
        fixed(3, "children registered as None are skipped", listed(none_child)),
        fixed(4, "the flag 1 on '1.1.0' raises TypeError", raising(1)),
        fixed(4, "the flag 0 on '1.1.0' raises TypeError", raising(0)),
        fixed(4, "the flag 1.0 on '1.1.0' raises TypeError", raising(1.0)),
        fixed(4, "the flag 'yes' on '1.1.0' raises TypeError", raising("yes")),
        fixed(4, "the flag 'False' on '1.1.0' raises TypeError", raising("False")),
        fixed(4, "the flag None on '1.1.0' raises TypeError", raising(None)),
        fixed(4, "the flag torch.tensor(True) on '1.1.0' raises TypeError", raising(torch.tensor(True))),
        fixed(
            4,
            "the flag numpy.bool_(True) (what x > 0.5 gives on numpy values) on '1.1.0' raises TypeError",
            raising(numpy.bool_(True)),
        ),
        fixed(
            4,
            "a Parameter assigned as the flag of '1.0' raises TypeError",
            raising(nn.Parameter(torch.ones(())), "1.0"),
        ),
        fixed(4, "the flag 0 on the root raises TypeError", raising(0, "")),
        fixed(
            5,
            "the flag 'yes' on '1.1.0': the message contains '1.1.0' in quotes",
            named(lambda: with_flag(three_levels(), "1.1.0", "yes"), "1.1.0"),
        ),
        fixed(
            5,
            "the flag None on the root: the message contains ''",
            named(lambda: with_flag(three_levels(), "", None), ""),
        ),
        fixed(5, "bad flags on '1.1.0' then on '2': the message names '1.1.0'", named(two_bad, "1.1.0")),
        fixed(5, "bad flags on ModuleDict keys 'b' then 'a': the message names 'b'", named(unsorted_bad, "b")),
        fixed(
            5,
            "bad flags on the shallow '1' and the deeper '0.1.0', which comes first",
            named(bad_after_good_then_shallow, "0.1.0"),
        ),
        fixed(5, "a bad flag on a module registered twice: its first name '0.1'", named(bad_shared, "0.1")),
        fixed(5, "the flag None on a ModuleDict entry: 'named.dec'", named(bad_in_dict, "named.dec")),
        fixed(5, "the flag 'yes' on a ModuleDict entry named it's: repr writes \"it's\"", named(quoted, "it's")),
        fixed(6, "modes mixed at three levels: every flag kept", kept(mixed)),
        fixed(6, "a model in eval mode: every flag kept", kept(lambda: three_levels().eval())),
        fixed(
            6, "raising for 'yes' on '1.1.0': every flag kept", kept(lambda: with_flag(three_levels(), "1.1.0", "yes"))
        ),
        fixed(6, "raising for None on the root: every flag kept", kept(lambda: with_flag(three_levels(), "", None))),
        fixed(
            6,
            "raising for a tensor flag on '2': the same tensor kept",
            kept(lambda: with_flag(three_levels(), "2", torch.tensor(True))),
        ),
        fixed(
            6,
            "raising for a Parameter flag on '1.0': still registered",
            kept(lambda: with_flag(three_levels(), "1.0", nn.Parameter(torch.ones(())))),
        ),
    ]


# Part 1's input space: every module graph of up to 4 modules and 4 child slots (None, shared modules), its modes
# mixed; then every flag the contract names, on observing.SHOWCASE, at each place: the root, a child, a module shared
# by two parents, the last module of named_modules(), and two modules at once (the first named is not the first made).
MODES_FLAGS = {
    "bools only": lambda: True,
    "1": lambda: 1,
    "0": lambda: 0,
    "1.0": lambda: 1.0,
    "'yes'": lambda: "yes",
    "''": lambda: "",
    "'False'": lambda: "False",
    "None": lambda: None,
    "a one-element tensor": lambda: torch.tensor(True),
    "a many-element tensor": lambda: torch.tensor([True, False]),
    "numpy.bool_(True)": lambda: numpy.bool_(True),
    "a Parameter": lambda: nn.Parameter(torch.ones(())),
}
MODES_PLACES = {
    "nowhere": (),
    "the root": (0,),
    "a child": (1,),
    "a shared module": (3,),
    "the last module": (2,),
    "two modules": (2, 3),
}
MODES_SPACE = {**GRAPH_SPACE, "flag": list(MODES_FLAGS), "flag at": list(MODES_PLACES)}


def modes_space() -> list:
    """Part 1's generated cases, smallest first: (point, drawing, (graph, flag, place))."""
    shapes = [
        ({**point, "flag": "bools only", "flag at": "nowhere"}, text, (graph, "bools only", "nowhere"))
        for point, text, (graph,) in graph_cases(4, 4)
    ]
    flags = every({"flag": list(MODES_FLAGS)[1:], "flag at": list(MODES_PLACES)[1:]})
    showcase = graph_dimensions(SHOWCASE)
    return shapes + [
        ({**showcase, **point}, drawn(SHOWCASE), (SHOWCASE, point["flag"], point["flag at"])) for point in flags
    ]


def modes_model(graph: tuple, flag: str, place: str) -> nn.Module:
    """A generated case's model: plain modules in the graph's shape, modes alternating by node (so a shared module's
    parents differ), the flag `flag` (a new object each) on the modules at `place`."""
    modules = built(graph, lambda node, children: holder(children).train(node % 2 == 0))
    for node in MODES_PLACES[place]:
        modules[node].training = MODES_FLAGS[flag]()
    return modules[0]


def observe_modes_hidden(ns: dict) -> dict:
    module_modes = ns.get("module_modes")

    rng = Random(MODES_SEED)
    cases = sorted((modes_case(rng) for _ in range(MODES_CASES)), key=lambda item: item[0])
    with torch.random.fork_rng(devices=[]):
        seed_torch(MODES_SEED)
        fixed_cases = modes_fixed(module_modes)
    generated = spanned(modes_space(), lambda *arguments: modes_seen(module_modes, modes_model(*arguments), []))
    return labelled(
        *fixed_cases, *generated, *seeded(cases, lambda _, model, pool: modes_seen(module_modes, model, pool))
    )


# ---------------------------------------------------------------------------------------------------------
# Part 2: train_with_frozen_norm_stats
# ---------------------------------------------------------------------------------------------------------


class Fork(nn.Module):
    def __init__(self, left, right):
        super().__init__()
        self.left = left
        self.right = right

    def forward(self, x):
        return self.left(x) + self.right(x)


class Residual(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return x + self.body(x)


class Holder(nn.Module):
    def __init__(self, listed, named):
        super().__init__()
        self.listed = nn.ModuleList(listed)
        self.register_module("absent", None)
        self.named = nn.ModuleDict(named)
        self.helpers = [nn.Dropout(0.5).eval()]

    def forward(self, x):
        for child in self.listed:
            x = child(x)
        for child in self.named.values():
            x = child(x)
        return x


class As2d(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.norm = norm

    def forward(self, x):
        return self.norm(x.unsqueeze(-1)).squeeze(-1)


class ScaledBatchNorm(nn.BatchNorm1d):
    def __init__(self, channels, track):
        super().__init__(channels, track_running_stats=track)
        self.gain = nn.Parameter(torch.full((1,), 0.5))

    def forward(self, x):
        return super().forward(x) * self.gain


class NormWithChildren(nn.BatchNorm1d):
    def __init__(self, channels, track, drop, proj):
        super().__init__(channels, track_running_stats=track)
        self.drop = drop
        self.proj = proj

    def forward(self, x):
        return self.proj(self.drop(super().forward(x)))


FROZEN_SEED, FROZEN_CASES = 20130302, 16


def stat_keeping(module: nn.Module) -> bool:
    """Which layers get stored statistics when a case is built (the inputs of the test cell)."""
    return isinstance(module, _NormBase) and module.track_running_stats


def frozen_build(rng: Random, c: int, length: int, depth: int, pool: list) -> nn.Module:
    shareable = [module for module in pool if not isinstance(module, (nn.BatchNorm2d, nn.InstanceNorm2d))]
    if shareable and rng.random() < 0.2:
        return rng.choice(shareable)
    leaves = [
        "linear", "linear", "dropout", "dropout", "batchnorm", "batchnorm", "syncbatchnorm", "instancenorm",
        "instancenorm", "norm2d", "scaled", "with_children", "layernorm", "groupnorm", "relu", "tanh",
    ]  # fmt: skip
    kind = rng.choice(leaves + ["sequential", "fork", "residual", "holder"] * 4 if depth > 0 else leaves)
    track = rng.random() < 0.6
    if kind == "sequential":
        module = nn.Sequential(*[frozen_build(rng, c, length, depth - 1, pool) for _ in range(rng.randint(1, 3))])
    elif kind == "fork":
        left = frozen_build(rng, c, length, depth - 1, pool)
        module = Fork(left, frozen_build(rng, c, length, depth - 1, pool))
    elif kind == "residual":
        module = Residual(frozen_build(rng, c, length, depth - 1, pool))
    elif kind == "holder":
        listed = [frozen_build(rng, c, length, depth - 1, pool) for _ in range(rng.randint(0, 2))]
        keys = rng.sample(["enc", "dec", "head", "b", "a"], rng.randint(0, 2))
        module = Holder(listed, {key: frozen_build(rng, c, length, depth - 1, pool) for key in keys})
    elif kind == "linear":
        module = nn.Linear(length, length, bias=rng.random() < 0.7)
    elif kind == "dropout":
        module = nn.Dropout(rng.choice([0.2, 0.5]))
    elif kind == "batchnorm":
        affine, momentum = rng.random() < 0.7, rng.choice([0.1, 0.5, None])
        module = nn.BatchNorm1d(c, affine=affine, track_running_stats=track, momentum=momentum)
    elif kind == "syncbatchnorm":
        module = nn.SyncBatchNorm(c, track_running_stats=track)
    elif kind == "instancenorm":
        module = nn.InstanceNorm1d(c, affine=rng.random() < 0.5, track_running_stats=track)
    elif kind == "norm2d":
        inner = rng.choice([nn.BatchNorm2d, nn.InstanceNorm2d])(c, track_running_stats=track)
        pool.append(inner)
        module = As2d(inner)
    elif kind == "scaled":
        module = ScaledBatchNorm(c, track)
    elif kind == "with_children":
        drop, proj = nn.Dropout(rng.choice([0.2, 0.5])), nn.Linear(length, length)
        pool += [drop, proj]
        module = NormWithChildren(c, track, drop, proj)
    elif kind == "layernorm":
        module = nn.LayerNorm(length)
    elif kind == "groupnorm":
        module = nn.GroupNorm(1, c)
    else:
        module = nn.ReLU() if kind == "relu" else nn.Tanh()
    pool.append(module)
    return module


def store_statistics(pool: list, rng: Random, gen: torch.Generator) -> None:
    with torch.no_grad():
        for module in pool:
            if stat_keeping(module):
                module.running_mean.normal_(generator=gen)
                module.running_var.uniform_(0.5, 2.0, generator=gen)
                module.num_batches_tracked.fill_(rng.randint(0, 50))


def frozen_case(rng: Random, gen: torch.Generator) -> tuple:
    c, length = rng.randint(1, 3), rng.randint(2, 4)
    pool = []
    model = frozen_build(rng, c, length, rng.choice([0, 1, 1, 2, 2, 3, 3]), pool)
    if rng.random() < 0.4:
        model.eval()
    for module in pool:
        roll = rng.random()
        if roll < 0.2:
            module.training = not module.training
        elif roll < 0.25:
            module.training = rng.choice([1, 0, "yes", None])
    store_statistics(pool, rng, gen)
    return len(list(model.modules())), model, pool, (c, length)


def hand_built(rng: Random, gen: torch.Generator) -> list:
    c, length = 2, 3
    own = NormWithChildren(c, True, nn.Dropout(0.5), nn.Linear(length, length))
    untracked = nn.InstanceNorm1d(c, track_running_stats=False)
    tracked = nn.InstanceNorm1d(c, affine=True, track_running_stats=True)
    shared = nn.BatchNorm1d(c)
    models = [
        nn.Sequential(own, untracked, tracked).eval(),
        Fork(nn.Sequential(shared), Residual(nn.Sequential(nn.Dropout(0.2), shared))).eval(),
    ]
    cases = []
    for model in models:
        pool = list(model.modules())
        store_statistics(pool, rng, gen)
        cases.append((len(pool), model, pool, (c, length)))
    return cases


def identity_or_value(value: object) -> object:
    return value if type(value) in (bool, int, float, str, type(None)) else ("object", id(value))


def snapshot(module: nn.Module) -> dict:
    """vars(module) but the flag, the parameters and the buffers, by value or identity (as the test takes it)."""
    state = {}
    for name, value in vars(module).items():
        if name in ("training", "_parameters", "_buffers"):
            continue
        if type(value) in (dict, set) or "OrderedDict" in type(value).__name__:
            items = value.items() if hasattr(value, "items") else ((item, None) for item in value)
            state[name] = ("container", id(value), tuple(sorted((repr(key), id(item)) for key, item in items)))
        else:
            state[name] = identity_or_value(value)
    return state


class CountsTrain(nn.Module):
    """A custom module that overrides train(): each call is recorded (rule 6: the function must not call it)."""

    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner
        self.calls = []

    def train(self, mode=True):
        self.calls.append(mode)
        return super().train(mode)

    def forward(self, x):
        return self.inner(x)


class NormCountsTrain(nn.BatchNorm1d):
    """A stat-keeping norm layer that overrides train() (eval() calls it too)."""

    def __init__(self, channels):
        super().__init__(channels)
        self.calls = []

    def train(self, mode=True):
        self.calls.append(mode)
        return super().train(mode)


@contextmanager
def base_train_calls() -> Callable:
    """While the block runs, every call of nn.Module.train and nn.Module.eval themselves (not only an override) is
    recorded as "<class>.train(mode)" / "<class>.eval()"; both are restored after it."""
    calls: list[str] = []
    train, evaluate = nn.Module.train, nn.Module.eval

    def watched_train(self: nn.Module, mode: bool = True) -> nn.Module:
        calls.append(f"{type(self).__name__}.train({mode!r})")
        return train(self, mode)

    def watched_eval(self: nn.Module) -> nn.Module:
        calls.append(f"{type(self).__name__}.eval()")
        return evaluate(self)

    nn.Module.train, nn.Module.eval = watched_train, watched_eval
    try:
        yield calls
    finally:
        nn.Module.train, nn.Module.eval = train, evaluate


def registered(model: nn.Module) -> dict:
    """The registered modules of a case by name, taken before the call (the submission may change what modules()
    yields)."""
    return {name or "(the model)": module for name, module in model.named_modules()}


def flags_of(modules: dict) -> dict:
    return {name: boolean(vars(module).get("training")) for name, module in modules.items()}


def kept_state(modules: dict) -> Callable[[], dict]:
    """What rule 5 keeps (everything but the flags), compared with a copy taken before: per module, its other
    attributes, its parameters (same objects, values and requires_grad) and its buffers (same values)."""
    before = [
        (
            name,
            module,
            snapshot(module),
            [
                (name, p, None if p is None else p.detach().clone(), p is not None and p.requires_grad)
                for name, p in vars(module)["_parameters"].items()
            ],
            [(name, None if b is None else b.clone()) for name, b in vars(module)["_buffers"].items()],
        )
        for name, module in modules.items()
    ]

    def after() -> dict:
        seen = {}
        for module_name, module, state, parameters, buffers in before:
            now_parameters = vars(module)["_parameters"]
            now_buffers = vars(module)["_buffers"]
            seen[module_name] = {
                "its other attributes": snapshot(module) == state,
                "its parameters": list(now_parameters) == [name for name, *_ in parameters]
                and all(
                    now_parameters[name] is p
                    and (p is None or (p.requires_grad == grad and torch.equal(p.detach(), value)))
                    for name, p, value, grad in parameters
                ),
                "its buffers": list(now_buffers) == [name for name, _ in buffers]
                and all(
                    (value is None and now_buffers[name] is None)
                    or (isinstance(now_buffers[name], torch.Tensor) and torch.equal(now_buffers[name], value))
                    for name, value in buffers
                ),
            }
        return seen

    return after


def with_statistics(model: nn.Module) -> nn.Module:
    """Stored statistics that are not the initial ones, in every stat-keeping norm layer of a case."""
    with torch.no_grad():
        for module in model.modules():
            if stat_keeping(module):
                module.running_mean.uniform_(-1.0, 1.0)
                module.running_var.uniform_(0.5, 2.0)
                module.num_batches_tracked.fill_(7)
    return model


def frozen_fixed(train_with_frozen_norm_stats: object) -> list:
    def returned(build):
        def run():
            model = build()
            return train_with_frozen_norm_stats(model) is model

        return run

    def flags(build, watch=registered):
        def run():
            model = build()
            modules = watch(model)
            train_with_frozen_norm_stats(model)
            return flags_of(modules)

        return run

    def flat():
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 8), nn.LayerNorm(8))
        return model.eval()

    def nested():
        return nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5), nn.Sequential(nn.BatchNorm1d(2)))).eval()

    def instance_norms():
        return nn.Sequential(
            nn.InstanceNorm1d(2, track_running_stats=True),
            nn.InstanceNorm1d(2),
            nn.InstanceNorm2d(2, affine=True, track_running_stats=True),
            nn.InstanceNorm3d(2),
        )

    def batch_norms():
        return nn.Sequential(
            nn.BatchNorm2d(2),
            nn.BatchNorm3d(2),
            nn.SyncBatchNorm(2),
            nn.LazyBatchNorm1d(),
            nn.LazyInstanceNorm1d(track_running_stats=True),
        )

    def untracked():
        return nn.Sequential(
            nn.BatchNorm1d(2, track_running_stats=False), nn.SyncBatchNorm(2, track_running_stats=False)
        )

    def subclasses():
        return nn.Sequential(ScaledBatchNorm(2, True), ScaledBatchNorm(2, False), As2d(nn.BatchNorm2d(2)))

    def never_keeping():
        return nn.Sequential(nn.LayerNorm(2), nn.GroupNorm(1, 2), nn.RMSNorm(2), nn.LocalResponseNorm(2)).eval()

    def by_hand():
        model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Dropout(0.5), nn.BatchNorm1d(2), nn.ReLU())
        model.training = 1
        model[0].training = "yes"
        model[1].training = None
        model[2].training = 0
        model[3].training = "False"
        model[4].training = torch.tensor(False)
        return model

    def look_alike():
        model = nn.Sequential(nn.Linear(2, 2), nn.Module(), nn.BatchNorm1d(2)).eval()
        model[1].register_buffer("running_mean", torch.zeros(2))
        model[1].track_running_stats = True  # a plain module that looks like a norm layer is not a _NormBase
        return model

    def shared_norm():
        shared = nn.BatchNorm1d(2)
        return Fork(nn.Sequential(shared), Residual(nn.Sequential(nn.Dropout(0.2), shared)))

    def none_child():
        model = nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1d(2)).eval()
        model.register_module("absent", None)
        return model

    def own_children(track, mode):
        def build():
            norm = NormWithChildren(2, track, nn.Dropout(0.5), nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.2)))
            return nn.Sequential(nn.Linear(3, 3), norm).train(mode)

        return build

    def norm_in_norm():
        outer = NormWithChildren(2, True, nn.Dropout(0.5), nn.Linear(3, 3))
        outer.drop = NormWithChildren(2, True, nn.Dropout(0.2), nn.Linear(3, 3))
        return nn.Sequential(outer).eval()

    def helpers(model):
        return {
            **{f"helpers[{n}]": module for n, module in enumerate(model.helpers)},
            **{f"extra[{key!r}]": module for key, module in model.extra.items()},
            **{f"pair[{n}]": module for n, module in enumerate(model.pair)},
        }

    def holder(mode):
        def build():
            model = Holder([nn.Dropout(0.5)], {"a": nn.BatchNorm1d(2)}).train(mode)
            model.helpers.append(nn.BatchNorm1d(2))
            model.extra = {"drop": nn.Dropout(0.5).eval(), "norm": nn.BatchNorm1d(2)}
            model.pair = (nn.Dropout(0.5), nn.Linear(2, 2).eval())
            return model

        return build

    def state(build):
        def run():
            model = build()
            after = kept_state(registered(model))
            train_with_frozen_norm_stats(model)
            return after()

        return run

    def frozen_weight():
        model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Linear(2, 2)).eval()
        model[0].weight.requires_grad_(False)
        model[1].bias.requires_grad_(False)
        return with_statistics(model)

    def momenta():
        model = nn.Sequential(nn.BatchNorm1d(2, momentum=0.1), nn.BatchNorm1d(2, momentum=None))
        model.append(nn.InstanceNorm1d(2, momentum=0.3, track_running_stats=True))
        return with_statistics(model.eval())

    def statistics():
        model = nn.Sequential(nn.BatchNorm1d(2), nn.Sequential(nn.InstanceNorm1d(2, track_running_stats=True)))
        return with_statistics(model)

    def hooked():
        model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Dropout(0.5))
        model[1].register_forward_hook(lambda module, args, out: None)
        model[0].register_forward_pre_hook(lambda module, args: None)
        model[2].register_full_backward_hook(lambda module, grad_in, grad_out: None)
        model.note = "fine-tune"
        model[1].eps = 1e-3
        return with_statistics(model)

    def unset_affine():
        return with_statistics(nn.Sequential(nn.BatchNorm1d(2, affine=False), nn.InstanceNorm1d(2)))

    def calls(build):
        def run():
            model = build()
            watched = {
                name or "(the model)": module
                for name, module in model.named_modules()
                if isinstance(module, (CountsTrain, NormCountsTrain))
            }
            for module in watched.values():
                module.calls.clear()  # the calls made while the case was built
            train_with_frozen_norm_stats(model)
            return {f"the calls of train() on {name}": list(module.calls) for name, module in watched.items()}

        return run

    def base_calls(build):
        def run():
            model = build()
            with base_train_calls() as calls:
                train_with_frozen_norm_stats(model)
            return {"the calls of nn.Module.train() and eval() themselves": calls}

        return run

    def parameter_flag(build, path):
        def run():
            model = build()
            target = model if path == "" else model.get_submodule(path)
            target.training = nn.Parameter(torch.ones(()))
            modules = registered(model)
            before = {name: flag_object(module) for name, module in modules.items()}
            try:
                train_with_frozen_norm_stats(model)
            except Exception as error:  # noqa: BLE001
                happened = ["raises", kind_of(error)]
            else:
                happened = ["returns"]
            return {
                "what the call does (a TypeError, raised before any flag changes)": happened,
                "each module keeps its flag": {
                    name: flag_object(module) is before[name] for name, module in modules.items()
                },
            }

        return run

    return [
        fixed(
            1, "a one-Linear Sequential: the model itself comes back", returned(lambda: nn.Sequential(nn.Linear(2, 2)))
        ),
        fixed(1, "a model with a BatchNorm1d in eval mode: the model itself", returned(flat)),
        fixed(1, "a BatchNorm1d as the root: the layer itself", returned(lambda: nn.BatchNorm1d(2))),
        fixed(1, "a Fork sharing a BatchNorm1d: the model itself", returned(shared_norm)),
        fixed(2, "the visible test's model in eval mode: only the BatchNorm1d stays in eval", flags(flat)),
        fixed(2, "a BatchNorm1d nested two levels deep", flags(nested)),
        fixed(2, "InstanceNorm with running statistics frozen, without them training", flags(instance_norms)),
        fixed(2, "BatchNorm2d/3d, SyncBatchNorm and the Lazy norm layers are frozen", flags(batch_norms)),
        fixed(2, "BatchNorm1d and SyncBatchNorm with track_running_stats=False train", flags(untracked)),
        fixed(
            2,
            "subclasses of BatchNorm1d, with and without statistics, and a BatchNorm2d in a wrapper",
            flags(subclasses),
        ),
        fixed(2, "LayerNorm, GroupNorm, RMSNorm and LocalResponseNorm train", flags(never_keeping)),
        fixed(2, "flags assigned by hand (1, 'yes', None, 0, 'False', a tensor) become real bools", flags(by_hand)),
        fixed(2, "a BatchNorm1d registered under two parents is frozen", flags(shared_norm)),
        fixed(
            2,
            "track_running_stats set to 1, 2 and 'false' (true for Python) and to 0 (values from a config): frozen,"
            " frozen, frozen, training",
            flags(
                lambda: nn.Sequential(tracking(1), tracking(2), tracking("false"), tracking(0), nn.Dropout(0.5)).eval()
            ),
        ),
        fixed(2, "a child registered as None is skipped", flags(none_child)),
        fixed(
            2, "a plain module with running_mean and track_running_stats, not a _NormBase, trains", flags(look_alike)
        ),
        fixed(
            3,
            "a norm layer's own Dropout and Sequential, training before: they still train",
            flags(own_children(True, True)),
        ),
        fixed(
            3, "a norm layer's own Dropout and Sequential, in eval before: they train", flags(own_children(True, False))
        ),
        fixed(3, "a norm layer without statistics and its own children: all train", flags(own_children(False, False))),
        fixed(
            3,
            "a norm layer registered inside another norm layer: both frozen, their children train",
            flags(norm_in_norm),
        ),
        fixed(
            4,
            "modules in a plain list, dict and tuple of a training model keep their flags",
            flags(holder(True), helpers),
        ),
        fixed(
            4,
            "modules in a plain list, dict and tuple of an eval model keep their flags",
            flags(holder(False), helpers),
        ),
        fixed(5, "a frozen weight and a frozen bias stay frozen, no parameter replaced", state(frozen_weight)),
        fixed(5, "momentum 0.1, None and 0.3 kept", state(momenta)),
        fixed(5, "stored running statistics and num_batches_tracked kept", state(statistics)),
        fixed(5, "hooks, eps and a custom attribute kept", state(hooked)),
        fixed(5, "norm layers without affine parameters or statistics keep their None entries", state(unset_affine)),
        fixed(
            6,
            "a root that overrides train(): the override is not called",
            calls(lambda: CountsTrain(nn.Dropout(0.5)).eval()),
        ),
        fixed(
            6,
            "a child that overrides train(): not called",
            calls(lambda: nn.Sequential(nn.Linear(2, 2), CountsTrain(nn.ReLU()))),
        ),
        fixed(
            6,
            "a BatchNorm1d subclass that overrides train(): not called",
            calls(lambda: nn.Sequential(NormCountsTrain(2))),
        ),
        fixed(
            6,
            "a leaf BatchNorm1d: nn.Module.train() and eval() themselves are not called either",
            base_calls(flat),
        ),
        fixed(6, "a nested model: nn.Module.train() and eval() are not called on any module", base_calls(nested)),
        fixed(
            7,
            "a Parameter as the flag of the BatchNorm1d at '1.1.0': TypeError, no flag changed",
            parameter_flag(nested, "1.1.0"),
        ),
        fixed(7, "a Parameter as the flag of the root: TypeError, no flag changed", parameter_flag(flat, "")),
        fixed(7, "a Parameter as the flag of a Dropout after a BatchNorm1d", parameter_flag(flat, "2")),
    ]


def inside_norm_layers(model: nn.Module) -> set[int]:
    """The ids of the modules registered inside a stat-keeping norm layer that rule 3 alone decides: not the layers
    themselves, nor a stat-keeping layer inside one (rule 2 decides it, wherever it sits)."""
    found: set[int] = set()
    for module in model.modules():
        if stat_keeping(module):
            found |= {id(inner) for child in module.children() for inner in child.modules() if not stat_keeping(inner)}
    return found


def flags_by_rule(flags: dict, modules: dict, inside: set[int]) -> dict:
    """The flags of the registered modules, each under the rule that decides it: rule 3's inside a stat-keeping
    norm layer (inside_norm_layers), rule 2's everywhere else."""
    return {
        "rule 2: each module's flag": {name: flag for name, flag in flags.items() if id(modules[name]) not in inside},
        "rule 3: the flags of the modules inside a stat-keeping norm layer": {
            name: flag for name, flag in flags.items() if id(modules[name]) in inside
        },
    }


def frozen_seen(call: object, model: nn.Module, pool: list, x: torch.Tensor, weights: torch.Tensor) -> dict:
    """One seeded case: each rule's part under its label, the flags split by the rule that sets them; a forward and
    a backward pass afterwards, which every rule shapes, unnamed (grader.rules: they break the rules shown broken)."""
    modules = registered(model)
    inside = inside_norm_layers(model)
    helpers = [helper for module in pool if isinstance(module, Holder) for helper in module.helpers]
    before = {module: snapshot(module) for module in modules.values()}
    params_before = [
        (module, name, p, p.detach().clone(), p.requires_grad)
        for module in modules.values()
        for name, p in vars(module)["_parameters"].items()
        if p is not None
    ]
    buffers_before = {
        (module, name): b.clone()
        for module in modules.values()
        for name, b in vars(module)["_buffers"].items()
        if b is not None
    }
    returned = call(model)
    flags = flags_of(modules)
    seen = {
        "rule 1: the model itself comes back": returned is model,
        **flags_by_rule(flags, modules, inside),
        "rule 4: the flags of the modules kept in plain attributes": [
            boolean(vars(helper).get("training")) for helper in helpers
        ],
        "rule 5: every module's other attributes": all(snapshot(module) == before[module] for module in before),
        "rule 5: the same parameters, with their values and requires_grad": all(
            vars(module)["_parameters"].get(name) is parameter
            and parameter.requires_grad == requires_grad
            and torch.equal(parameter.detach(), value)
            for module, name, parameter, value, requires_grad in params_before
        ),
    }
    kept = [vars(module)["_buffers"].get(name) for module, name in buffers_before]
    seen["rule 5: the same buffers, with their values"] = all(
        b is not None and torch.equal(b, value) for b, value in zip(kept, buffers_before.values(), strict=True)
    )
    with torch.random.fork_rng(devices=[]):
        seed_torch(FROZEN_SEED)
        out = model(x)
    if out.requires_grad:
        (out * weights).sum().backward()
    after = [vars(module)["_buffers"][name] for module, name in buffers_before]
    seen["the buffers after a forward pass"] = all(
        torch.equal(b, value) for b, value in zip(after, buffers_before.values(), strict=True)
    )
    seen["the output of a forward pass"] = numbers(out)
    seen["each parameter's gradient after a backward pass"] = [numbers(p.grad) for p in model.parameters()]
    return seen


def statistics_switched_off() -> nn.Module:
    """A BatchNorm1d whose track_running_stats was switched off after construction: its buffers are still there,
    but it keeps no statistics (the definition reads the attribute), so it trains."""
    layer = nn.BatchNorm1d(2)
    layer.track_running_stats = False
    return layer


def running_mean_dropped() -> nn.Module:
    """A BatchNorm1d that still tracks running statistics but whose running_mean was set to None: stat-keeping by
    the definition all the same."""
    layer = nn.BatchNorm1d(2)
    layer.running_mean = None
    return layer


def tracking(flag: object) -> nn.Module:
    """A BatchNorm1d whose track_running_stats is `flag` (an int read from a config, say): stat-keeping exactly when
    the contract's condition, evaluated as Python, is true."""
    layer = nn.BatchNorm1d(2)
    layer.track_running_stats = flag
    return layer


def look_alike() -> nn.Module:
    """A plain module with a running_mean buffer and track_running_stats: not a _NormBase, so not frozen."""
    module = nn.Module()
    module.register_buffer("running_mean", torch.zeros(2))
    module.track_running_stats = True
    return module


# Part 2's input space: the kind of layer (stat-keeping norm layers of several families, the same families without
# statistics, norm layers that never keep any, a look-alike, a Dropout), the flag it holds before (each kind of value
# rule 2 names, a Parameter for rule 7), and where it sits (the root, a child, under two parents, inside a norm
# layer of its own, or unregistered in a plain list); every pair of unusual values, everything else in eval mode.
FROZEN_LAYERS = {
    "Dropout": lambda: nn.Dropout(0.5),
    "BatchNorm1d": lambda: nn.BatchNorm1d(2),
    "BatchNorm1d without statistics": lambda: nn.BatchNorm1d(2, track_running_stats=False),
    "InstanceNorm1d with statistics": lambda: nn.InstanceNorm1d(2, track_running_stats=True),
    "InstanceNorm1d": lambda: nn.InstanceNorm1d(2),
    "BatchNorm2d": lambda: nn.BatchNorm2d(2),
    "a BatchNorm1d subclass": lambda: ScaledBatchNorm(2, True),
    "LayerNorm": lambda: nn.LayerNorm(2),
    "a look-alike": look_alike,
    "BatchNorm1d with statistics switched off later": statistics_switched_off,
    "BatchNorm1d with running_mean set to None": running_mean_dropped,
    "BatchNorm1d with track_running_stats 1": lambda: tracking(1),
    "BatchNorm1d with track_running_stats 0": lambda: tracking(0),
    "BatchNorm1d with track_running_stats 2": lambda: tracking(2),
    "BatchNorm1d with track_running_stats the string false": lambda: tracking("false"),
}
FROZEN_FLAGS = {
    "True": lambda: True,
    "False": lambda: False,
    "1": lambda: 1,
    "'yes'": lambda: "yes",
    "None": lambda: None,
    "a tensor": lambda: torch.tensor(False),
    "a Parameter": lambda: nn.Parameter(torch.ones(())),
    "a Parameter then None": lambda: NONE_PARAMETER,
}
# A Parameter registered as the flag, then set to None: "training" stays in _parameters, holding None (rule 7's
# TypeError all the same). frozen_space_case makes the two assignments.
NONE_PARAMETER = object()
FROZEN_PLACES = {
    "the root": lambda layer: layer,
    "a child": lambda layer: nn.Sequential(nn.Linear(2, 2), layer),
    "a shared module": lambda layer: Fork(nn.Sequential(layer), nn.Sequential(nn.Dropout(0.5), layer)),
    "inside a norm layer": lambda layer: nn.Sequential(NormWithChildren(2, True, layer, nn.Linear(2, 2))),
    "in a plain list": lambda layer: Holder([nn.Linear(2, 2)], {"norm": nn.BatchNorm1d(2)}),
}
FROZEN_SPACE = {"layer": list(FROZEN_LAYERS), "flag before": list(FROZEN_FLAGS), "layer at": list(FROZEN_PLACES)}


def frozen_space() -> list:
    """Part 2's generated cases, smallest first: (point, '', (point,))."""
    return [(point, "", (point,)) for point in every(FROZEN_SPACE, most=2)]


def frozen_space_case(train_with_frozen_norm_stats: object, point: dict) -> dict:
    """A generated case, each part named by the rule that asks for it: what the call returned or raised (rule 1;
    rule 4's where a Parameter flag is on a layer kept in a plain list), the flags of the registered modules (rule 2,
    rule 3's inside a norm layer), the flag of a layer kept in a plain list (rule 4) and what rule 5 keeps of every
    module; all of it rule 7's where a registered module's flag is a Parameter."""
    layer = FROZEN_LAYERS[point["layer"]]()
    model = FROZEN_PLACES[point["layer at"]](layer).eval()
    unregistered = point["layer at"] == "in a plain list"
    if unregistered:
        model.helpers = [layer.eval()]
    flag = FROZEN_FLAGS[point["flag before"]]()
    if flag is NONE_PARAMETER:
        layer.training = nn.Parameter(torch.ones(()))
        flag = None
    layer.training = flag
    modules = registered(model)
    inside = inside_norm_layers(model)
    after = kept_state({**modules, "the layer in a plain list": layer} if unregistered else modules)
    with base_train_calls() as calls:
        try:
            outcome = {"returns": {"rule 1: the model itself": train_with_frozen_norm_stats(model) is model}}
        except Exception as error:  # noqa: BLE001
            outcome = {"raises": kind_of(error)}
    flags = flags_of(modules)
    # rule 7's TypeError, but not on a module left alone (rule 4)
    parameter = point["flag before"] in ("a Parameter", "a Parameter then None")
    seen = {
        f"rule {4 if unregistered and parameter else 1}: what the call does": outcome,
        **flags_by_rule(flags, modules, inside),
        "rule 4: the flag of the layer kept in a plain list": boolean(vars(layer).get("training"))
        if unregistered
        else None,
        "rule 5: every module's other attributes, parameters and buffers": after(),
        "rule 6: the calls of nn.Module.train() and eval()": calls,
    }
    if parameter and not unregistered:
        return {f"rule 7: {label[len('rule k: ') :]}": value for label, value in seen.items()}
    return seen


def observe_frozen_hidden(ns: dict) -> dict:
    train_with_frozen_norm_stats = ns.get("train_with_frozen_norm_stats")

    def case(_, model, pool, shape):
        x = torch.randn(3, *shape, generator=gen)  # drawn in the test's order whatever the call does
        weights = torch.randn(3, *shape, generator=gen)
        return frozen_seen(train_with_frozen_norm_stats, model, pool, x, weights)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            seed_torch(FROZEN_SEED)  # the same initial parameters in every process
            gen = torch.Generator().manual_seed(FROZEN_SEED)
            rng = Random(FROZEN_SEED)
            cases = [*(frozen_case(rng, gen) for _ in range(FROZEN_CASES)), *hand_built(rng, gen)]
            cases.sort(key=lambda item: item[0])
            with torch.random.fork_rng(devices=[]):
                seed_torch(FROZEN_SEED + 1)
                fixed_cases = frozen_fixed(train_with_frozen_norm_stats)
                generated = spanned(
                    frozen_space(), lambda point: frozen_space_case(train_with_frozen_norm_stats, point)
                )
            return labelled(*fixed_cases, *generated, *seeded(cases, case))
    finally:
        torch.set_num_threads(threads)


# hidden test cell -> {dimension of its generated cases: the values they take, plainest first} (grader.coverage).
SPACES = {"test_module_modes_hidden": MODES_SPACE, "test_frozen_hidden": FROZEN_SPACE}

OBSERVERS = {
    "test_module_modes_hidden": observe_modes_hidden,
    "test_frozen_hidden": observe_frozen_hidden,
}

# hidden test grade_id -> {number of a rule of its part's contract in the notebook: a short name of that rule}.
CLAUSES = {
    "test_module_modes_hidden": {
        1: "a new plain dict",
        2: "one entry per module, named_modules() order, qualified name -> flag",
        3: "a shared module once under its first name, None children skipped",
        4: "TypeError for any flag that is not a bool",
        5: "the message names the first such module, as repr writes it",
        6: "only reads: every flag object kept, returning or raising",
    },
    "test_frozen_hidden": {
        1: "returns the model itself",
        2: "stat-keeping norm layers False, every other module True, as real bools",
        3: "a norm layer's own submodules follow rule 2",
        4: "unregistered modules left alone",
        5: "nothing else changes",
        6: "no train() or eval() called",
        7: "a flag registered as a parameter ('training' in m._parameters, even None): TypeError before any change",
    },
}
