"""Trusted checks for ex08_calls_and_swaps: what call_with returns, raises and leaves in the registries, and which
modules apply_once visits in which order, on the models of each test cell (the hidden cells' hand-built and seeded
cases rebuilt here), case by case."""

from __future__ import annotations

from random import Random

import torch
from torch import nn

from grader.observing import data, in_turn, raised, single_thread

# ---------------------------------------------------------------------------------------------------------
# Part 1: call_with
# ---------------------------------------------------------------------------------------------------------


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


class Fragile(nn.Module):
    def __init__(self, armed):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(3))
        self.armed = armed
        self.error = ValueError("refused by Fragile")

    def forward(self, x):
        if self.armed:
            raise self.error
        return x * self.gain


class VisibleFragile(nn.Linear):
    def forward(self, x):
        raise ValueError("refused")


def entries(model: nn.Module) -> list:
    return [
        (owner, registry, key, value)
        for owner in model.modules()
        for registry in ("_parameters", "_buffers")
        for key, value in vars(owner)[registry].items()
    ]


def restored(before: list) -> bool:
    return all(vars(owner)[registry].get(key) is value for owner, registry, key, value in before)


def grad_of(tensor: torch.Tensor) -> object:
    return None if tensor.grad is None else data(tensor.grad)


def observe_call_visible(ns: dict) -> list:
    call_with = ns.get("call_with")

    def linear():
        torch.manual_seed(0)
        lin = nn.Linear(2, 2)
        weight, x = lin.weight, torch.randn(3, 2)
        given = torch.zeros(2, 2, requires_grad=True)
        out = call_with(lin, {"weight": given}, x)
        seen = [data(out), data(lin.bias.expand(3, 2)), lin.weight is weight]
        out.sum().backward()
        return [*seen, grad_of(given), grad_of(lin.weight)]

    def unknown():
        lin = nn.Linear(2, 2)
        try:
            call_with(lin, {"wieght": torch.zeros(2, 2)}, torch.ones(1, 2))
        except KeyError as error:
            return ["raises KeyError", "'wieght'" in str(error)]
        except Exception as error:  # noqa: BLE001
            return raised(error)
        return ["returns"]

    def shared():
        torch.manual_seed(0)
        layer = nn.Linear(2, 2)
        net = nn.Sequential(layer, nn.ReLU(), layer)
        x, ones, weight = torch.randn(3, 2), torch.ones(2, 2), layer.weight
        expected = nn.functional.linear(torch.relu(nn.functional.linear(x, ones, layer.bias)), ones, layer.bias)
        return [torch.equal(call_with(net, {"0.weight": ones}, x), expected), layer.weight is weight]

    def fragile():
        module = VisibleFragile(2, 2)
        weight = module.weight
        try:
            call_with(module, {"weight": torch.zeros(2, 2)}, torch.ones(1, 2))
            outcome = ["returns"]
        except Exception as error:  # noqa: BLE001
            outcome = raised(error)
        return [outcome, module.weight is weight]

    return [*in_turn([[]], linear), *in_turn([[]], unknown), *in_turn([[]], shared), *in_turn([[]], fragile)]


CALL_SEED, CALL_CASES = 20261209, 60


def call_build(rng: Random, depth: int, pool: list) -> nn.Module:
    if pool and rng.random() < 0.2:
        return rng.choice(pool)
    leaves = ["linear", "linear", "batchnorm", "tied", "relu", "fragile"]
    kind = rng.choice(leaves + ["sequential"] * 3 if depth > 0 else leaves)
    if kind == "sequential":
        return nn.Sequential(*[call_build(rng, depth - 1, pool) for _ in range(rng.randint(1, 3))])
    if kind == "fragile":
        module = Fragile(rng.random() < 0.3)
    else:
        module = {
            "linear": lambda: nn.Linear(3, 3),
            "batchnorm": lambda: nn.BatchNorm1d(3),
            "tied": Tied,
            "relu": nn.ReLU,
        }[kind]()
    pool.append(module)
    return module


def call_model(case_seed: int) -> tuple[nn.Module, Counting, Random]:
    rng = Random(case_seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case_seed)
        body = call_build(rng, rng.choice([0, 1, 2, 2, 3]), [])
        counter = Counting()
        return nn.Sequential(counter, body), counter, rng


def described(model: nn.Module, names: list) -> list:
    named = dict(model.named_parameters(remove_duplicate=False))
    named.update(model.named_buffers(remove_duplicate=False))
    return [
        (name, tuple(named[name].shape), named[name].dtype, isinstance(named[name], nn.Parameter)) for name in names
    ]


def call_choose(rng: Random, model: nn.Module) -> tuple[list, str | None]:
    named = [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]
    chosen, objects = [], set()
    for name, value in named:
        if id(value) not in objects and rng.random() < 0.4:
            chosen.append(name)
            objects.add(id(value))
    unknown = None
    if rng.random() < 0.2:
        unknown = rng.choice(["wieght", "0.wieght", "1.weight", "0.weight.0", "bias ", "0.0.weight.data"])
        if unknown in dict(named):
            unknown = None
    return described(model, chosen), unknown


def call_fixed_cases() -> list:
    def shared_twice():
        layer = nn.Linear(3, 3)
        return nn.Sequential(layer, nn.ReLU(), layer)

    builders = [
        (lambda: nn.Sequential(nn.Linear(3, 3), Fragile(True)), ["1.0.weight", "1.1.gain"], None),
        (Tied, ["1.a.weight"], None),
        (Tied, ["1.b.weight", "1.a.bias"], None),
        (shared_twice, ["1.2.bias"], None),
        (lambda: nn.BatchNorm1d(3), ["1.running_mean", "1.num_batches_tracked"], None),
        (lambda: nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3)), ["1.0.weight", "1.1.bias"], "1.1.wieght"),
        (lambda: nn.Linear(3, 3), [], "weight "),
    ]
    cases = []
    for build, names, unknown in builders:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(CALL_SEED)
            counter = Counting()
            model = nn.Sequential(counter, build())
        cases.append((model, counter, described(model, names), unknown))
    return cases


def call_tensors(chosen: list, gen: torch.Generator) -> dict:
    tensors = {}
    for name, shape, dtype, is_parameter in chosen:
        if dtype.is_floating_point:
            tensors[name] = torch.randn(shape, generator=gen).requires_grad_(is_parameter)
        else:
            tensors[name] = torch.randint(0, 5, shape, generator=gen, dtype=dtype)
    return tensors


def call_observe_case(
    call_with: object, model: nn.Module, counter: Counting, chosen: list, unknown: object, gen: torch.Generator
) -> list:
    x = torch.randn(4, 3, generator=gen)  # drawn in the test's order whatever the call does
    given = call_tensors(chosen, gen)
    before = entries(model)
    if unknown is not None:
        given[unknown] = torch.zeros(1)
        try:
            call_with(model, given, x)
            outcome = ["returns"]
        except KeyError as error:
            outcome = ["raises KeyError", repr(unknown) in str(error)]
        except Exception as error:  # noqa: BLE001
            outcome = raised(error)
        return [outcome, counter.calls, restored(before)]
    armed = [m for m in model.modules() if isinstance(m, Fragile) and m.armed]
    own = [*model.named_parameters(), *model.named_buffers()]
    try:
        got = call_with(model, given, x)
        error = None
    except Exception as caught:  # noqa: BLE001
        error = caught
    seen = [counter.calls, restored(before)]
    if armed:
        return [*seen, error is armed[0].error]
    if error is not None:
        return [*seen, raised(error)]
    if type(got) is not torch.Tensor:
        return [*seen, {"returns": type(got).__name__}]
    seen.append(data(got))
    if got.requires_grad:
        got.sum().backward()
    seen.append([grad_of(value) if value.requires_grad else data(value) for value in given.values()])
    seen.append([[data(value), grad_of(value)] for _, value in own])
    return seen


@single_thread
def observe_call_hidden(ns: dict) -> list:
    call_with = ns.get("call_with")

    def first():
        return type(call_with(nn.Linear(2, 2), {}, torch.ones(1, 2))) is torch.Tensor

    rng = Random(CALL_SEED)
    gen = torch.Generator().manual_seed(CALL_SEED)
    cases = call_fixed_cases()
    for _ in range(CALL_CASES):
        model, counter, case_rng = call_model(rng.randrange(2**31))
        cases.append((model, counter, *call_choose(case_rng, model)))
    return [*in_turn([[]], first), *in_turn(cases, lambda *case: call_observe_case(call_with, *case, gen))]


# ---------------------------------------------------------------------------------------------------------
# Part 2: apply_once
# ---------------------------------------------------------------------------------------------------------


def visits(apply_once: object, model: nn.Module) -> list:
    """[returned is model, the qualified name of every module fn was called on, in order]."""
    names = {id(module): name or "(root)" for name, module in model.named_modules()}
    got = []
    returned = apply_once(model, got.append)
    return [returned is model, [names.get(id(item), {"not a module": type(item).__name__}) for item in got]]


def observe_apply_visible(ns: dict) -> list:
    apply_once = ns.get("apply_once")

    def shared():
        layer = nn.Linear(1, 1)
        return visits(apply_once, nn.Sequential(nn.Sequential(layer, nn.ReLU()), nn.Sequential(layer)))

    def single():
        return visits(apply_once, nn.Linear(2, 2))

    return [*in_turn([[]], shared), *in_turn([[]], single)]


class Fork(nn.Module):
    def __init__(self, left, right):
        super().__init__()
        self.left = left
        self.right = right


class Holder(nn.Module):
    def __init__(self, listed, named):
        super().__init__()
        self.listed = nn.ModuleList(listed)
        self.register_module("absent", None)
        self.named = nn.ModuleDict(named)


APPLY_SEED, APPLY_CASES = 20261210, 100


def apply_build(rng: Random, depth: int, pool: list) -> nn.Module:
    if pool and rng.random() < 0.3:
        return rng.choice(pool)
    leaves = ["linear", "relu", "dropout"]
    kind = rng.choice(leaves + ["sequential", "fork", "holder"] * 3 if depth > 0 else leaves)
    if kind == "sequential":
        module = nn.Sequential(*[apply_build(rng, depth - 1, pool) for _ in range(rng.randint(1, 3))])
    elif kind == "fork":
        left = apply_build(rng, depth - 1, pool)
        module = Fork(left, apply_build(rng, depth - 1, pool))
    elif kind == "holder":
        listed = [apply_build(rng, depth - 1, pool) for _ in range(rng.randint(0, 2))]
        keys = rng.sample(["enc", "dec", "head"], rng.randint(0, 2))
        module = Holder(listed, {key: apply_build(rng, depth - 1, pool) for key in keys})
    else:
        module = {"linear": lambda: nn.Linear(1, 1), "relu": nn.ReLU, "dropout": nn.Dropout}[kind]()
    pool.append(module)
    return module


@single_thread
def observe_apply_hidden(ns: dict) -> list:
    apply_once = ns.get("apply_once")

    def first():
        model = nn.Sequential(nn.Linear(1, 1))
        return apply_once(model, lambda module: None) is model

    rng = Random(APPLY_SEED)
    cases = []
    for _ in range(APPLY_CASES):
        model = apply_build(rng, rng.choice([0, 1, 2, 2, 3, 3, 4]), [])
        cases.append((len(list(model.modules())), model))
    cases.sort(key=lambda case: case[0])
    return [*in_turn([[]], first), *in_turn(cases, lambda _, model: visits(apply_once, model))]


OBSERVERS = {
    "test_call_with_visible": observe_call_visible,
    "test_call_with_hidden": observe_call_hidden,
    "test_apply_once_visible": observe_apply_visible,
    "test_apply_once_hidden": observe_apply_hidden,
}
