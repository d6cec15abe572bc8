"""Trusted checks for ex03_training: what module_modes and train_with_frozen_norm_stats return and change on the
models of each test cell (the hidden cells' seeded cases rebuilt here), recorded case by case."""

from __future__ import annotations

from random import Random

import torch
from torch import nn
from torch.nn.modules.batchnorm import _NormBase

from grader.observing import in_turn, numbers, plain


def boolean(value: object) -> object:
    """A flag as the tests judge it: "True" or "False" for a real bool (JSON alone would equate True with 1)."""
    return repr(value) if type(value) is bool else {"not a bool": type(value).__name__}


def listing(modes: object) -> object:
    """What the tests read from a result of module_modes: a plain dict, its keys in order, each value a bool."""
    if type(modes) is not dict:
        return {"not a dict": type(modes).__name__}
    return [[plain(name), boolean(flag)] for name, flag in modes.items()]


def compared(result: object) -> object:
    """A result that a test compares with == to a dict: its items (dict == ignores the order and the subclass)."""
    return plain(dict(result)) if isinstance(result, dict) else plain(result)


# ---------------------------------------------------------------------------------------------------------
# Part 1: module_modes
# ---------------------------------------------------------------------------------------------------------


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(2, 2)
        self.decoder = self.encoder


def observe_modes_visible(ns: dict) -> list:
    module_modes = ns.get("module_modes")

    def nested():
        model = nn.Sequential(
            nn.Linear(4, 8),
            nn.Sequential(nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5)),
            nn.Linear(8, 2),
        )
        model.eval()
        model[1].train()
        model[1][2].training = False
        flags_before = [module.training for module in model.modules()]
        modes = module_modes(model)
        return [[module.training for module in model.modules()] == flags_before, listing(modes)]

    def single():
        return compared(module_modes(nn.Dropout(0.1)))

    def tied():
        model = Tied()
        model.encoder.eval()
        modes = module_modes(model)
        return [type(modes) is dict, compared(modes)]

    return [*in_turn([[]], nested), *in_turn([[]], single), *in_turn([[]], tied)]


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


def observe_modes_hidden(ns: dict) -> list:
    module_modes = ns.get("module_modes")

    def first():
        return type(module_modes(nn.Sequential(nn.Linear(2, 2)))) is dict

    def case(_, model, pool):
        # The name the message of the TypeError must contain (the test's condition), when some flag is not a bool.
        first_bad = next((name for name, module in model.named_modules() if type(module.training) is not bool), None)
        watched = [module for _, module in model.named_modules()]
        watched += [helper for module in pool if isinstance(module, ModesHolder) for helper in module.helpers]
        flags = [(module, flag_object(module)) for module in watched]
        try:
            outcome = ["returns", listing(module_modes(model))]
        except Exception as error:  # noqa: BLE001
            named = first_bad is not None and repr(first_bad) in str(error)
            outcome = ["raises", type(error) is TypeError, named]
        return [all(flag_object(module) is flag for module, flag in flags), outcome]

    rng = Random(MODES_SEED)
    cases = sorted((modes_case(rng) for _ in range(MODES_CASES)), key=lambda item: item[0])
    return [*in_turn([[]], first), *in_turn(cases, case)]


# ---------------------------------------------------------------------------------------------------------
# Part 2: train_with_frozen_norm_stats
# ---------------------------------------------------------------------------------------------------------


class NormWithDropout(nn.BatchNorm1d):
    def __init__(self, num_features):
        super().__init__(num_features)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(super().forward(x))


def observe_frozen_visible(ns: dict) -> list:
    train_with_frozen_norm_stats = ns.get("train_with_frozen_norm_stats")

    def flat():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 8), nn.LayerNorm(8))
        model(torch.randn(32, 4))
        model.eval()
        returned = train_with_frozen_norm_stats(model)
        stats_before = {name: buffer.clone() for name, buffer in model.named_buffers()}
        out = model(torch.randn(16, 4))
        kept = all(torch.equal(buffer, stats_before[name]) for name, buffer in model.named_buffers())
        flags = [[name, boolean(module.training)] for name, module in model.named_modules()]
        drops = bool((model[2](torch.ones(1000)) == 0).any())
        out.pow(2).sum().backward()
        grads = [[name, bool(p.requires_grad), p.grad is not None] for name, p in model.named_parameters()]
        return [returned is model, kept, flags, drops, grads]

    def custom():
        model = nn.Sequential(NormWithDropout(3)).eval()
        returned = train_with_frozen_norm_stats(model)
        return [returned is model, boolean(model[0].training), boolean(model[0].drop.training)]

    with torch.random.fork_rng(devices=[]):
        return [*in_turn([[]], flat), *in_turn([[]], custom)]


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


def observe_frozen_hidden(ns: dict) -> list:
    train_with_frozen_norm_stats = ns.get("train_with_frozen_norm_stats")

    def first():
        model = nn.Sequential(nn.Linear(2, 2))
        return train_with_frozen_norm_stats(model) is model

    def case(_, model, pool, shape):
        x = torch.randn(3, *shape, generator=gen)  # drawn in the test's order whatever the call does
        weights = torch.randn(3, *shape, generator=gen)
        modules = [module for _, module in model.named_modules()]
        helpers = [helper for module in pool if isinstance(module, Holder) for helper in module.helpers]
        before = {module: snapshot(module) for module in modules}
        params_before = [
            (module, name, p, p.detach().clone(), p.requires_grad)
            for module in modules
            for name, p in vars(module)["_parameters"].items()
            if p is not None
        ]
        buffers_before = {
            (module, name): b.clone()
            for module in modules
            for name, b in vars(module)["_buffers"].items()
            if b is not None
        }
        returned = train_with_frozen_norm_stats(model)
        seen = [
            returned is model,
            [boolean(vars(module).get("training")) for module in modules],
            [boolean(vars(helper).get("training")) for helper in helpers],
            all(snapshot(module) == before[module] for module in modules),
            all(
                vars(module)["_parameters"].get(name) is parameter
                and parameter.requires_grad == requires_grad
                and torch.equal(parameter.detach(), value)
                for module, name, parameter, value, requires_grad in params_before
            ),
        ]
        kept = [vars(module)["_buffers"].get(name) for module, name in buffers_before]
        seen.append(
            all(b is not None and torch.equal(b, value) for b, value in zip(kept, buffers_before.values(), strict=True))
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(FROZEN_SEED)
            out = model(x)
        if out.requires_grad:
            (out * weights).sum().backward()
        after = [vars(module)["_buffers"][name] for module, name in buffers_before]
        seen.append(all(torch.equal(b, value) for b, value in zip(after, buffers_before.values(), strict=True)))
        seen.append(numbers(out))
        seen.append([numbers(parameter.grad) for parameter in model.parameters()])
        return seen

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(FROZEN_SEED)  # the same initial parameters in every process
            gen = torch.Generator().manual_seed(FROZEN_SEED)
            rng = Random(FROZEN_SEED)
            cases = [*(frozen_case(rng, gen) for _ in range(FROZEN_CASES)), *hand_built(rng, gen)]
            cases.sort(key=lambda item: item[0])
            return [*in_turn([[]], first), *in_turn(cases, case)]
    finally:
        torch.set_num_threads(threads)


OBSERVERS = {
    "test_module_modes_visible": observe_modes_visible,
    "test_module_modes_hidden": observe_modes_hidden,
    "test_frozen_visible": observe_frozen_visible,
    "test_frozen_hidden": observe_frozen_hidden,
}
