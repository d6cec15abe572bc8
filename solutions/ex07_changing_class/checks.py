"""Trusted checks for ex07_changing_class: what export_plain_state_dict returns and leaves of each model, and what
materialize does to each model, on the models of each test cell (the hidden cells' seeded cases rebuilt here), case
by case."""

from __future__ import annotations

from random import Random

import torch
import torch.nn.utils.parametrize as parametrize
from torch import nn

from grader.observing import data, in_turn, plain, raised, single_thread


def boolean(value: object) -> object:
    """A flag as the tests judge it: "True" or "False" for a real bool (JSON alone would equate True with 1)."""
    return repr(value) if type(value) is bool else {"not a bool": type(value).__name__}


# ---------------------------------------------------------------------------------------------------------
# Part 1: export_plain_state_dict
# ---------------------------------------------------------------------------------------------------------


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)


class Doubled(nn.Module):
    def forward(self, x):
        return 2 * x


class Scaled(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return self.factor * x


class Unchanged(nn.Module):
    def forward(self, x):
        return x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)
        self.scale = nn.Parameter(torch.randn(3, 3))


def listing(result: object) -> object:
    """What the tests read from a result: a plain dict, its keys in order, each value's exact type, requires_grad
    and data."""
    if type(result) is not dict:
        return {"not a dict": type(result).__name__}
    seen = []
    for key, value in result.items():
        if type(value) is torch.Tensor:
            seen.append([plain(key), True, bool(value.requires_grad), data(value)])
        else:
            seen.append([plain(key), False, None, None])
    return seen


def parametrized_values(model: nn.Module) -> list:
    """What every parametrized name of every module computes, each parametrization applied in turn by hand."""
    values = []
    with torch.no_grad():
        for _, module in model.named_modules():
            if parametrize.is_parametrized(module):
                for name in module.parametrizations:
                    value = module.parametrizations[name].original
                    for parametrization in module.parametrizations[name]:
                        value = parametrization(value)
                    values.append((module, name, value.detach().clone()))
    return values


def unchanged_after(export: object, model: nn.Module) -> list:
    """Call export(model): [classes kept, state_dict keys kept, its values kept, what each name computes kept,
    outcome]. A name that no longer computes counts as changed."""
    classes = [type(m).__name__ for _, m in model.named_modules(remove_duplicate=False)]
    state = [(key, value.clone()) for key, value in model.state_dict().items()]
    computed = parametrized_values(model)
    try:
        outcome = ["returns", listing(export(model))]
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        outcome = raised(error)
    state_after = list(model.state_dict().items())
    kept = []
    for module, name, before in computed:
        try:
            kept.append(torch.equal(getattr(module, name), before))
        except AttributeError:
            kept.append(False)
    return [
        [type(m).__name__ for _, m in model.named_modules(remove_duplicate=False)] == classes,
        [key for key, _ in state_after] == [key for key, _ in state],
        all(torch.equal(a, b) for (_, a), (_, b) in zip(state, state_after, strict=False)),
        all(kept),
        outcome,
    ]


def observe_export_visible(ns: dict) -> list:
    export = ns.get("export_plain_state_dict")

    def visible():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
        parametrize.register_parametrization(model[0], "weight", Symmetric())
        parametrize.register_parametrization(model[2], "bias", Doubled())
        x = torch.randn(4, 3)
        out_before = model(x)
        result = export(model)
        seen = [listing(result), type(model[0]).__name__, torch.equal(model(x), out_before)]
        plain_model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
        report = plain_model.load_state_dict(result)
        return [*seen, plain(report.missing_keys), plain(report.unexpected_keys), data(plain_model(x))]

    return in_turn([[]], visible)


EXPORT_SEED, EXPORT_CASES = 20261207, 60


def export_parametrize(rng: Random, module: nn.Module) -> None:
    names = [name for name, value in module._parameters.items() if value is not None]
    for name in names:
        if rng.random() < 0.5:
            continue
        square = module._parameters[name].dim() == 2 if name in module._parameters else False
        for _ in range(rng.choice([1, 1, 2])):
            kind = rng.choice(["symmetric", "scaled", "unchanged"] if square else ["scaled", "unchanged"])
            if kind == "symmetric":
                parametrization = Symmetric()
            elif kind == "scaled":
                parametrization = Scaled(rng.choice([2.0, -1.0, 0.5]))
            else:
                parametrization = Unchanged()
            parametrize.register_parametrization(module, name, parametrization)


def export_build(rng: Random, depth: int, pool: list) -> nn.Module:
    if pool and rng.random() < 0.2:
        return rng.choice(pool)
    leaves = ["linear", "linear", "batchnorm", "block", "relu"]
    kind = rng.choice(leaves + ["sequential"] * 3 if depth > 0 else leaves)
    if kind == "sequential":
        return nn.Sequential(*[export_build(rng, depth - 1, pool) for _ in range(rng.randint(1, 3))])
    module = {
        "linear": lambda: nn.Linear(3, 3),
        "batchnorm": lambda: nn.BatchNorm1d(3),
        "block": Block,
        "relu": nn.ReLU,
    }[kind]()
    pool.append(module)
    export_parametrize(rng, module)
    return module


def export_case(rng: Random) -> tuple[int, nn.Module]:
    model = export_build(rng, rng.choice([0, 1, 2, 2, 3]), [])
    return len(model.state_dict()), model


@single_thread
def observe_export_hidden(ns: dict) -> list:
    export = ns.get("export_plain_state_dict")

    def first():
        return type(export(nn.Linear(2, 2))) is dict

    rng = Random(EXPORT_SEED)
    torch.manual_seed(EXPORT_SEED)
    cases = sorted((export_case(rng) for _ in range(EXPORT_CASES)), key=lambda case: case[0])
    return [*in_turn([[]], first), *in_turn(cases, lambda _, model: unchanged_after(export, model))]


# ---------------------------------------------------------------------------------------------------------
# Part 2: materialize
# ---------------------------------------------------------------------------------------------------------


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x


def after_materialize(materialize: object, model: nn.Module, counter: Counting, *args: object) -> list:
    """Call materialize(model, *args): [returned is model, calls, classes, flags, parameter shapes, buffers]."""
    returned = materialize(model, *args)
    return [
        returned is model,
        counter.calls,
        [type(m).__name__ for m in model.modules()],
        [boolean(m.training) for m in model.modules()],
        [[name, list(p.shape)] for name, p in model.named_parameters()],
        [[name, data(b)] for name, b in model.named_buffers()],
    ]


def observe_materialize_visible(ns: dict) -> list:
    materialize = ns.get("materialize")

    def lazy():
        model = nn.Sequential(nn.LazyLinear(4), nn.LazyBatchNorm1d(), nn.Dropout(0.5))
        model[2].eval()
        return after_materialize(materialize, model, Counting(), torch.randn(8, 3))

    def ready():
        counter = Counting()
        return after_materialize(materialize, nn.Sequential(nn.Linear(3, 3), counter), counter, torch.randn(2, 3))

    return [*in_turn([[]], lazy), *in_turn([[]], ready)]


MATERIALIZE_SEED, MATERIALIZE_CASES = 20261208, 40


def materialize_build(rng: Random, width: int, depth: int, pool: list) -> tuple[nn.Module, int]:
    leaves = ["linear", "lazylinear", "lazylinear", "loaded", "batchnorm", "lazybatchnorm", "dropout", "relu"]
    kind = rng.choice(leaves + ["sequential"] * 3 if depth > 0 else leaves)
    if kind == "sequential":
        children = []
        for _ in range(rng.randint(1, 3)):
            child, width = materialize_build(rng, width, depth - 1, pool)
            children.append(child)
        module = nn.Sequential(*children)
    elif kind in ("linear", "lazylinear", "loaded"):
        out = rng.choice([2, 3, 4])
        if kind == "linear":
            module = nn.Linear(width, out)
        else:
            module = nn.LazyLinear(out)
            if kind == "loaded":
                module.load_state_dict(nn.Linear(width, out).state_dict())
        width = out
    elif kind == "batchnorm":
        module = nn.BatchNorm1d(width)
    elif kind == "lazybatchnorm":
        module = nn.LazyBatchNorm1d()
    elif kind == "dropout":
        module = nn.Dropout(0.5)
    else:
        module = nn.ReLU()
    pool.append(module)
    return module, width


def materialize_case(case_seed: int) -> tuple[int, nn.Module, Counting, int]:
    rng = Random(case_seed)
    pool = []
    width = rng.choice([2, 3, 5])
    body, _ = materialize_build(rng, width, rng.choice([0, 1, 2, 2, 3]), pool)
    counter = Counting()
    model = nn.Sequential(body, counter)
    if rng.random() < 0.3:
        model.eval()
    for module in pool:
        if rng.random() < 0.25:
            module.training = rng.random() < 0.5
    return len(pool), model, counter, width


@single_thread
def observe_materialize_hidden(ns: dict) -> list:
    materialize = ns.get("materialize")

    def first():
        model = nn.Sequential(nn.LazyLinear(2))
        return materialize(model, torch.ones(1, 3)) is model

    rng = Random(MATERIALIZE_SEED)
    gen = torch.Generator().manual_seed(MATERIALIZE_SEED)
    torch.manual_seed(MATERIALIZE_SEED)
    seeds = [rng.randrange(2**31) for _ in range(MATERIALIZE_CASES)]
    cases = sorted((materialize_case(seed) for seed in seeds), key=lambda case: case[0])

    def case(_, model, counter, width):
        x = torch.randn(4, width, generator=gen)  # drawn in the test's order whatever the call does
        return after_materialize(materialize, model, counter, x)

    return [*in_turn([[]], first), *in_turn(cases, case)]


OBSERVERS = {
    "test_export_visible": observe_export_visible,
    "test_export_hidden": observe_export_hidden,
    "test_materialize_visible": observe_materialize_visible,
    "test_materialize_hidden": observe_materialize_hidden,
}
