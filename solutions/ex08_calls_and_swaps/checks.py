"""Trusted checks for ex08_calls_and_swaps: what call_with returns, raises and leaves in the registries, and which
modules apply_once visits in which order, on the models of each test cell (hand-built and seeded
cases rebuilt here), case by case."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable
from random import Random
from typing import NamedTuple

import torch
import torch.nn.utils.parametrize as parametrize
from torch import nn

from grader.observing import (
    GRAPH_SPACE,
    built,
    code_that_runs,
    data,
    every,
    fixed,
    graph_cases,
    holder,
    kind_of,
    labelled,
    raised,
    seed_torch,
    seeded,
    single_thread,
    spanned,
)

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


NON_PERSISTENT = "_non_persistent_buffers_set"


class Pair(NamedTuple):
    """An output a module may return: a named tuple (a tuple of another class)."""

    out: torch.Tensor
    total: torch.Tensor


class Output:
    """An output a module may return: an object of a class of one's own."""

    def __init__(self, out: torch.Tensor) -> None:
        self.out = out


REGISTRIES = ("_parameters", "_buffers")


def entries(model: nn.Module) -> list:
    """Every registry entry of every module (owner, registry, key, object), in order, then each module's set of
    non-persistent buffers (owner, NON_PERSISTENT, None, a copy of the set)."""
    return entries_of(list(model.modules()))


def entries_of(owners: list) -> list:
    return [
        (owner, registry, key, value)
        for owner in owners
        for registry in REGISTRIES
        for key, value in vars(owner)[registry].items()
    ] + [(owner, NON_PERSISTENT, None, set(vars(owner)[NON_PERSISTENT])) for owner in owners]


def restored(before: list) -> bool:
    """Whether every module's registries hold the very objects they held, under the same keys in the same order (none
    added, none dropped, none moved: named_parameters() and state_dict() list them as before), and every module
    keeps its non-persistent buffers so."""
    now = entries_of([owner for owner, registry, _, _ in before if registry == NON_PERSISTENT])  # each once, in order
    return len(now) == len(before) and all(
        owner is was_owner
        and (registry, key) == (was_registry, was_key)
        and (value == was if registry == NON_PERSISTENT else value is was)
        for (owner, registry, key, value), (was_owner, was_registry, was_key, was) in zip(now, before, strict=True)
    )


def names_it(error: BaseException, name: str) -> bool:
    """Rule 2: whether a KeyError's message holds the name as repr writes it (its text, or str() of the error,
    which is the repr of that text)."""
    text = error.args[0] if error.args and type(error.args[0]) is str else ""
    return repr(name) in text or repr(name) in str(error)


class Interrupted(BaseException):  # noqa: N818 - named for what it does, as KeyboardInterrupt is
    """What a call may raise that is no Exception (as KeyboardInterrupt and SystemExit are not)."""


def grad_of(tensor: torch.Tensor) -> object:
    return None if tensor.grad is None else data(tensor.grad)


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
        seed_torch(case_seed)
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
            seed_torch(CALL_SEED)
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


def comes_back(got: object, output: object, calls: int) -> str:
    """Rule 4: what call_with returned, said against what module(*args) gave (`output`: what the model's forward
    hook saw, None where it saw no single tensor; `calls`: how many outputs it saw)."""
    if got is output:
        return "what module(*args) returned (the tensor the model's forward hooks saw)"
    if calls == 0:
        return f"a {kind_of(got)}, while the model's forward hooks saw no call: module(*args) never ran"
    return f"a {kind_of(got)}, not the one module(*args) returned (the tensor the model's forward hooks saw)"


def call_observe_case(
    call_with: object, model: nn.Module, counter: Counting, chosen: list, unknown: object, gen: torch.Generator
) -> dict:
    """One seeded case: what each rule asks of the call, each under the rule's label. The model's output is taken
    where the model gives it (a forward hook), so what reaches the given tensors (rule 3) does not depend on what
    call_with returns (rule 4). A call of valid names only that raises stops the case there, unnamed (grader.rules
    then blames the rules the other cases show broken, else rule 4 alone, the first this case names); whether an
    unknown name's message names it is left to the fixed cases."""
    x = torch.randn(4, 3, generator=gen)  # drawn in the test's order whatever the call does
    given = call_tensors(chosen, gen)
    before = entries(model)
    if unknown is not None:
        given[unknown] = torch.zeros(1)
        try:
            call_with(model, given, x)
            outcome = ["returns"]
        except Exception as error:  # noqa: BLE001
            outcome = raised(error)
        return {
            "rule 2: what the call does (it raises KeyError)": outcome,
            "rule 2: times the model ran": counter.calls,
            "rule 2: every registry entry holds what it held": restored(before),
        }
    armed = [m for m in model.modules() if isinstance(m, Fragile) and m.armed]
    own = [*model.named_parameters(), *model.named_buffers()]
    outputs: list = []
    model.register_forward_hook(lambda module, args, output: outputs.append(output))
    try:
        got = call_with(model, given, x)
        error = None
    except Exception as caught:  # noqa: BLE001
        error = caught
    seen = {
        "rule 3: times the model ran": counter.calls,
        "rule 5: every registry entry holds its object again": restored(before),
    }
    if armed:
        seen["rule 5: the model's exception reaches the caller itself"] = error is armed[0].error
        return seen
    if error is not None:
        return raised(error)
    output = outputs[0] if len(outputs) == 1 and type(outputs[0]) is torch.Tensor else None
    seen = {"rule 4: what comes back": comes_back(got, output, len(outputs)), **seen}
    seen["rule 3: the model's output"] = None if output is None else data(output)
    if output is not None and output.requires_grad:
        output.sum().backward()
    seen["rule 3: what reached each given tensor (a gradient, or a buffer's values)"] = {
        name: grad_of(value) if value.requires_grad else data(value) for name, value in given.items()
    }
    seen["rule 3: the model's own tensors afterwards (values, gradient)"] = {
        name: [data(value), grad_of(value)] for name, value in own
    }
    return seen


def call_facts(
    call_with: object, model: nn.Module, counter: Counting, chosen: list, unknown: object, gen: torch.Generator
) -> dict:
    """A hand-built case run as call_observe_case runs it (the same draws from gen), its facts kept apart so that each
    fixed case looks at the rule it checks."""
    x = torch.randn(4, 3, generator=gen)
    given = call_tensors(chosen, gen)
    before = entries(model)
    if unknown is not None:
        given[unknown] = torch.zeros(1)
    armed = [m for m in model.modules() if isinstance(m, Fragile) and m.armed]
    try:
        call_with(model, given, x)
        error = None
    except Exception as caught:  # noqa: BLE001
        error = caught
    outcome = ["returns"] if error is None else raised(error)
    if type(error) is KeyError and unknown is not None:
        outcome.append(names_it(error, unknown))
    buffers = {name: data(value) for name, value in given.items() if not value.requires_grad}
    return {
        "outcome": outcome,
        "calls": counter.calls,
        "restored": restored(before),
        "same error": error is armed[0].error if armed else None,
        "given buffers": buffers,
    }


class Probe(nn.Module):
    """A module that records, while it runs, which objects its registries hold; it keeps a loss built from its
    weight (for a backward after the call) and adds 1 to its buffer in place."""

    def __init__(self, fail: BaseException | None = None):
        super().__init__()
        self.weight = nn.Parameter(torch.full((3,), 2.0))
        self.register_buffer("stat", torch.zeros(3))
        self.fail = fail
        self.seen: list = []
        self.kept: list = []
        self.outputs: list = []

    def forward(self, x):
        self.seen.append([vars(self)["_parameters"]["weight"], vars(self)["_buffers"]["stat"]])
        self.kept.append((self.weight * x).sum())
        self.stat.add_(1.0)
        if self.fail is not None:
            raise self.fail
        out = x * self.weight
        self.outputs.append(out)
        return out


def call_rule_cases(call_with: object, hand_built: list) -> list:
    """The fixed cases of each rule of part 1; hand_built: the facts of the seven hand-built cases, in order."""

    def names_ok(build: Callable[[], nn.Module], names: list) -> Callable[[], object]:
        """Each name given alone (never two names of one object): accepted, or what was raised."""

        def run():
            seen = {}
            for name in names:
                model = build()
                value = named_tensors(model)[name]
                try:
                    call_with(model, {name: torch.zeros_like(value)}, torch.ones(2, 3))
                    seen[name] = "accepted"
                except Exception as error:  # noqa: BLE001
                    seen[name] = raised(error)
            return seen

        return run

    def unknown(build: Callable[[], nn.Module], given_names: list) -> Callable[[], object]:
        def run():
            model = nn.Sequential(Counting(), build())
            valid = named_tensors(model)
            given = {name: torch.zeros_like(valid[name]) if name in valid else torch.zeros(3) for name in given_names}
            before = entries(model)
            bad = [name for name in given_names if name not in valid]
            try:
                call_with(model, given, torch.ones(2, 3))
                outcome = ["returns"]
            except KeyError as error:
                outcome = ["raises KeyError", {f"its message names {name!r}": names_it(error, name) for name in bad}]
            except Exception as error:  # noqa: BLE001
                outcome = raised(error)
            return {
                "what the call does": outcome,
                "times the model ran": model[0].calls,
                "every entry as before": restored(before),
            }

        return run

    def probe_case(build: Callable[[], tuple], names: list, grad: bool = True) -> Callable[[], object]:
        """During the call: which registry entries hold the given objects, what reached the given tensors."""

        def run():
            model, probes = build()
            valid = named_tensors(model)
            given = {
                name: torch.full_like(valid[name], 5.0).requires_grad_(valid[name].requires_grad and grad)
                for name in names
            }
            try:
                call_with(model, given, torch.ones(3))
                error = None
            except Exception as caught:  # noqa: BLE001
                error = caught
            labels = {id(value): f"given {name}" for name, value in given.items()}
            labels.update({id(value): f"own {name}" for name, value in valid.items()})
            held = {
                f"probe {number}, call {call}": dict(
                    zip(("weight", "stat"), [labels.get(id(item), kind_of(item)) for item in row], strict=True)
                )
                for number, probe in enumerate(probes, 1)
                for call, row in enumerate(probe.seen, 1)
            }
            for probe in probes:
                for loss in probe.kept:
                    if loss.requires_grad:
                        loss.backward()
            return {
                "the call's exception": None if error is None else raised(error),
                "what the registry entries held during the call": held,
                "what reached each given tensor (a gradient, or a buffer's values)": {
                    name: grad_of(value) if value.requires_grad else data(value) for name, value in given.items()
                },
                "the model's own tensors afterwards (gradient, values)": {
                    name: [grad_of(value), data(value)] for name, value in valid.items()
                },
            }

        return run

    def one_probe():
        probe = Probe()
        return probe, [probe]

    def tied_probes():
        first, second = Probe(), Probe()
        second.weight = first.weight
        return nn.Sequential(first, second), [first, second]

    def shared_probe():
        probe = Probe()
        return nn.Sequential(probe, nn.ReLU(), probe), [probe]

    def once():
        counter = Counting()
        model = nn.Sequential(counter, nn.Linear(3, 3), counter)
        call_with(model, {"1.weight": torch.zeros(3, 3)}, torch.ones(2, 3))
        return counter.calls

    def hooks_run():
        lin = nn.Linear(3, 3)
        ran: list = []
        lin.register_forward_pre_hook(lambda module, args: ran.append("pre-hook"))
        lin.register_forward_hook(lambda module, args, output: ran.append("forward hook"))
        call_with(lin, {"weight": torch.zeros(3, 3)}, torch.ones(2, 3))
        return ran

    def batch_norm():
        model = nn.BatchNorm1d(3)
        given = {
            "running_mean": torch.zeros(3),
            "running_var": torch.ones(3),
            "num_batches_tracked": torch.tensor(7),
        }
        x = torch.arange(12.0).reshape(4, 3)
        call_with(model, given, x)
        return {
            **{f"the given {name}": data(value) for name, value in given.items()},
            "the model's own running_mean": data(model.running_mean),
            "the model's own num_batches_tracked": data(model.num_batches_tracked),
        }

    def returned(make: Callable[[torch.Tensor], object]) -> Callable[[], object]:
        class Returns(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(3))
                self.results: list = []

            def forward(self, x):
                result = make(x * self.weight)
                self.results.append(result)
                return result

        def run():
            module = Returns()
            got = call_with(module, {"weight": torch.full((3,), 2.0)}, torch.ones(3))
            return {
                "times forward ran": len(module.results),
                "what forward returned comes back, that very object": bool(module.results) and got is module.results[0],
            }

        return run

    def gradient_through_output():
        """The output as the module gives it (a forward hook), whatever call_with returns (rule 4's business)."""
        lin = nn.Linear(2, 2)
        outputs: list = []
        lin.register_forward_hook(lambda module, args, output: outputs.append(output))
        given = torch.zeros(2, 2, requires_grad=True)
        call_with(lin, {"weight": given}, torch.ones(3, 2))
        outputs[0].sum().backward()
        return {
            "the output less the bias": data(outputs[0].detach() - lin.bias.detach()),
            "the given weight's gradient": grad_of(given),
            "the own weight's gradient": grad_of(lin.weight),
        }

    def first():
        return type(call_with(nn.Linear(2, 2), {}, torch.ones(1, 2))) is torch.Tensor

    def raising(names: list, failing: type[BaseException] = LookupError) -> Callable[[], object]:
        def run():
            failure = failing("refused by the probe")
            first_probe, second = Probe(failure), Probe()
            second.weight = first_probe.weight
            model = nn.Sequential(second, first_probe, second)
            before = entries(model)
            valid = named_tensors(model)
            given = {name: torch.zeros_like(valid[name]) for name in names}
            try:
                call_with(model, given, torch.ones(3))
                outcome = "returns"
            except BaseException as error:  # noqa: BLE001 - also what is no Exception, as the case may raise
                outcome = "the model's own exception" if error is failure else raised(error)
            return {"what reaches the caller": outcome, "every entry holds its object again": restored(before)}

        return run

    def non_persistent_restored():
        """After a call given a non-persistent buffer, every entry holds its object again and the buffer is still
        non-persistent (left out of state_dict()); a call_with that refuses the name changes nothing either (whether
        it may refuse is rule 1's business)."""
        slots = Slots(False)
        before = entries(slots)
        with contextlib.suppress(Exception):  # rule 5 looks at the module afterwards, however the call ended
            call_with(slots, {"scratch": torch.full((3,), 5.0)}, torch.ones(2, 3))
        return {"every entry as before": restored(before), "the keys of state_dict()": list(slots.state_dict())}

    def kept_order():
        model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
        call_with(model, {"0.weight": torch.zeros(3, 3), "1.running_mean": torch.zeros(3)}, torch.ones(4, 3))
        return {
            "the names named_parameters() gives": [name for name, _ in model.named_parameters()],
            "the keys of state_dict()": list(model.state_dict()),
        }

    def shared_restored():
        layer = nn.Linear(3, 3)
        model = nn.Sequential(layer, nn.ReLU(), layer)
        before = entries(model)
        call_with(model, {"0.weight": torch.zeros(3, 3), "0.bias": torch.ones(3)}, torch.ones(2, 3))
        return restored(before)

    facts = hand_built
    return [
        fixed(1, "a tied weight under its second name (hand-built case 3)", lambda: facts[2]["outcome"]),
        fixed(1, "a shared module's bias under its second name (hand-built case 4)", lambda: facts[3]["outcome"]),
        fixed(
            1, "a BatchNorm's buffers, num_batches_tracked included (hand-built case 5)", lambda: facts[4]["outcome"]
        ),
        fixed(1, "the second name of a shared module", names_ok(shared_layer, ["2.weight", "2.bias", "0.weight"])),
        fixed(
            1, "every name of a model with a shared module and tied weights", names_ok(shared_and_tied, SHARED_NAMES)
        ),
        fixed(
            1,
            "the buffers of a BatchNorm inside a Sequential",
            names_ok(
                lambda: nn.Sequential(nn.BatchNorm1d(3)), ["0.running_mean", "0.running_var", "0.num_batches_tracked"]
            ),
        ),
        fixed(2, "a misspelled name after valid ones (hand-built case 6)", lambda: refused(facts[5])),
        fixed(2, "a name with a trailing space (hand-built case 7)", lambda: refused(facts[6])),
        fixed(
            2,
            "a valid name, then an unknown one: nothing swapped, nothing called",
            unknown(lambda: nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3)), ["1.0.weight", "1.1.bias", "1.0.wieght"]),
        ),
        fixed(
            2,
            "the name of a None bias (a Linear without bias)",
            unknown(lambda: nn.Linear(3, 3, bias=False), ["1.weight", "1.bias"]),
        ),
        fixed(2, "a module's own name is not a tensor's", unknown(lambda: nn.Sequential(nn.Linear(3, 3)), ["1.0"])),
        fixed(2, "an attribute path is not a registered name", unknown(lambda: nn.Linear(3, 3), ["1.weight.data"])),
        fixed(
            2,
            "a plain tensor attribute, and a parametrized weight's name, are no registered names",
            unknown(with_plain_tensor, ["1.scale", "1.weight"]),
        ),
        fixed(
            2,
            "a name holding a quote: the message holds it as repr writes it",
            unknown(lambda: nn.Linear(3, 3), ["1.it's"]),
        ),
        fixed(
            3,
            "the entries hold the given objects themselves: gradients and in-place updates reach them",
            probe_case(one_probe, ["weight", "stat"]),
        ),
        fixed(
            3,
            "a tensor without grad goes into a parameter's entry as it is, not as a Parameter",
            probe_case(one_probe, ["weight"], grad=False),
        ),
        fixed(
            3,
            "a tied weight given under its first name is replaced in both modules",
            probe_case(tied_probes, ["0.weight"]),
        ),
        fixed(
            3,
            "a shared module given under its first name sees the tensor in both uses",
            probe_case(shared_probe, ["0.weight", "0.stat"]),
        ),
        fixed(3, "module(*args) runs once (a Counting module used twice inside counts two)", once),
        fixed(3, "module(*args), not module.forward: the module's own hooks run, once each", hooks_run),
        fixed(3, "BatchNorm in training mode updates the given running statistics in place", batch_norm),
        fixed(3, "the given BatchNorm buffers after the call (hand-built case 5)", lambda: facts[4]["given buffers"]),
        fixed(3, "the output carries the gradient to the given tensor", gradient_through_output),
        fixed(4, "what the call returns is a tensor (the visible lines of this cell)", first),
        fixed(4, "the output tensor itself is returned", returned(lambda y: y)),
        fixed(4, "a tuple is returned as it is", returned(lambda y: (y, "tag"))),
        fixed(4, "a dict is returned as it is", returned(lambda y: {"out": y})),
        fixed(4, "None is returned as it is", returned(lambda y: None)),
        fixed(4, "a named tuple is returned as it is", returned(lambda y: Pair(y, y.sum()))),
        fixed(4, "a list is returned as it is", returned(lambda y: [y])),
        fixed(4, "an OrderedDict is returned as it is", returned(lambda y: OrderedDict(out=y))),
        fixed(4, "an object of a class of one's own is returned as it is", returned(lambda y: Output(y))),
        fixed(
            5,
            "a call that raises: restored, the same exception (hand-built case 1)",
            lambda: {
                "every entry holds its object again": facts[0]["restored"],
                "the model's own exception reaches the caller": facts[0]["same error"],
            },
        ),
        fixed(5, "tied weights restored after the call (hand-built case 2)", lambda: facts[1]["restored"]),
        fixed(5, "a shared module restored under both names (functional_call leaves it swapped)", shared_restored),
        fixed(
            5,
            "a call that raises with tied weights given: every entry restored, the same exception",
            raising(["0.weight", "0.stat", "1.stat"]),
        ),
        fixed(5, "a call that raises with nothing given: the same exception", raising([])),
        fixed(
            5,
            "a call interrupted by what is no Exception (as KeyboardInterrupt): every entry restored, the same one",
            raising(["0.weight", "0.stat"], Interrupted),
        ),
        fixed(5, "a non-persistent buffer given stays non-persistent", non_persistent_restored),
        fixed(5, "the registries keep their order: named_parameters() and state_dict() as before", kept_order),
    ]


def with_plain_tensor() -> nn.Module:
    """A Linear whose weight is parametrized (its name is parametrizations.weight.original) and which holds a plain
    tensor attribute, in no registry."""
    lin = nn.Linear(3, 3)
    lin.scale = torch.ones(3)
    parametrize.register_parametrization(lin, "weight", nn.Identity())
    return lin


def refused(facts: dict) -> dict:
    """What a hand-built case with an unknown name shows of rule 2."""
    outcome = facts["outcome"]
    return {
        "what the call does": outcome,
        "times the model ran": facts["calls"],
        "every entry as before": facts["restored"],
    }


def shared_layer() -> nn.Module:
    layer = nn.Linear(3, 3)
    return nn.Sequential(layer, nn.ReLU(), layer)


SHARED_NAMES = ["0.weight", "0.bias", "1.weight", "2.weight", "2.bias", "3.running_mean"]


def shared_and_tied() -> nn.Module:
    layer, other = nn.Linear(3, 3), nn.Linear(3, 3, bias=False)
    other.weight = layer.weight
    return nn.Sequential(layer, other, layer, nn.BatchNorm1d(3))


def named_tensors(model: nn.Module) -> dict:
    named = dict(model.named_parameters(remove_duplicate=False))
    named.update(model.named_buffers(remove_duplicate=False))
    return named


class Slots(nn.Module):
    """What part 1's generated cases name: an entry of every kind. While it runs it records the objects its five
    tensor entries hold and adds 1 to its float buffers in place; armed, it then raises its own error."""

    ENTRIES = (("_parameters", "weight"), ("_parameters", "frozen"), ("_buffers", "stat"), ("_buffers", "scratch"))

    def __init__(self, armed: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.full((3,), 2.0))
        self.frozen = nn.Parameter(torch.ones(3), requires_grad=False)
        self.register_buffer("stat", torch.zeros(3))
        self.register_buffer("scratch", torch.zeros(3), persistent=False)
        self.register_buffer("count", torch.tensor(0))
        self.register_parameter("unused", None)
        self.register_buffer("empty", None)
        self.plain = torch.full((3,), 3.0)  # a tensor in no registry: its name is no valid name
        self.armed, self.error = armed, LookupError("refused by Slots")
        self.held: list = []
        self.outputs: list = []

    def forward(self, x):
        state = vars(self)
        self.held.append([state[registry][key] for registry, key in (*self.ENTRIES, ("_buffers", "count"))])
        self.stat.add_(1.0)
        self.scratch.add_(1.0)
        if self.armed:
            raise self.error
        self.outputs.append(x * self.weight + self.frozen + self.stat + self.scratch)
        return self.outputs[-1]


# Part 1's input space: the kind of entry a name names (each registry, persistent or not, a frozen or integer tensor,
# None entries, and names that are no entry's), where its module sits (the root, a child, two levels down, the second
# name of a shared module), whether the call raises, and whether another valid name comes with it; every pair of
# unusual values.
CALL_ENTRIES = {
    "a parameter": "weight",
    "a buffer": "stat",
    "a non-persistent buffer": "scratch",
    "a frozen parameter": "frozen",
    "an integer buffer": "count",
    "a None parameter": "unused",
    "a None buffer": "empty",
    "a module's name": "",
    "an attribute path": "weight.data",
    "a misspelling": "wieght",
    "a plain tensor attribute": "plain",
}
CALL_VALID = ("a parameter", "a buffer", "a non-persistent buffer", "a frozen parameter", "an integer buffer")
CALL_PLACES = {  # the model around a Slots, the prefix of the name given, the prefix of its first name
    "the root": lambda slots: (slots, "", ""),
    "a child": lambda slots: (nn.Sequential(nn.Linear(3, 3), slots), "1.", "1."),
    "two levels down": lambda slots: (nn.Sequential(nn.Sequential(nn.ReLU(), slots)), "0.1.", "0.1."),
    "a shared module's second name": lambda slots: (nn.Sequential(slots, nn.ReLU(), slots), "2.", "0."),
}
CALL_SPACE = {
    "entry": list(CALL_ENTRIES),
    "module at": list(CALL_PLACES),
    "call": ["returns", "raises"],
    "names given": ["only it", "with another valid name"],
}


def call_space_case(call_with: object, point: dict) -> dict:
    """A generated case, each part named by the rule that decides it. A valid name (rule 1) is taken, not refused
    with a KeyError, and only then: what the entries held during each call and what the given tensors hold afterwards
    (rule 3: in-place updates land in them), what the call returned (rule 4) or the armed call's own exception
    (rule 5). A name that is no valid one: rule 2's KeyError naming it, before anything else. Either way, whether every
    entry holds its own object afterwards (rule 5)."""
    slots = Slots(point["call"] == "raises")
    model, prefix, first = CALL_PLACES[point["module at"]](slots)
    entry = CALL_ENTRIES[point["entry"]]
    name = f"{prefix}{entry}" if entry else prefix.removesuffix(".")
    given = {name: torch.tensor(5) if entry == "count" else torch.full((3,), 5.0)}
    if point["names given"] == "with another valid name":
        given[f"{first}{'weight' if entry == 'stat' else 'stat'}"] = torch.full((3,), 7.0)
    labels = {id(value): f"given {key}" for key, value in given.items()}
    labels.update({id(vars(slots)[registry][key]): f"own {key}" for registry, key in Slots.ENTRIES})
    before = entries(model)
    refused = None
    try:
        got = call_with(model, given, torch.ones(2, 3))
        outcome = {"returns": bool(slots.outputs) and got is slots.outputs[-1]}
    except KeyError as error:
        refused = names_it(error, name)
    except Exception as error:  # noqa: BLE001
        outcome = {"raises": [*raised(error), error is slots.error]}
    taken = {
        "what the entries held during each call": [
            [labels.get(id(item), kind_of(item)) for item in row[:-1]] + [data(row[-1])] for row in slots.held
        ],
        "what the given tensors hold afterwards": [data(value) for value in given.values()],
    }
    if point["entry"] in CALL_VALID and refused is not None:
        seen = {"rule 1: the name is taken": {"refused with a KeyError": True}}
    elif point["entry"] in CALL_VALID:
        called = {f"rule 3: {what}": value for what, value in taken.items()}
        called[f"rule {5 if point['call'] == 'raises' else 4}: what the call does"] = outcome
        seen = {"rule 1: the name is taken": called}
    else:
        raises = {"raises KeyError": {"naming it": refused}} if refused is not None else {"no KeyError": True}
        seen = {"rule 2: what the call does": raises, **{f"rule 2: {what}": value for what, value in taken.items()}}
    return seen | {"rule 5: every entry holds its own object afterwards": restored(before)}


@single_thread
def observe_call_hidden(ns: dict) -> dict:
    call_with = ns.get("call_with")
    rng = Random(CALL_SEED)
    gen = torch.Generator().manual_seed(CALL_SEED)
    hand_built = []
    for case in call_fixed_cases():
        try:
            hand_built.append(call_facts(call_with, *case, gen))
        except Exception as error:  # noqa: BLE001
            hand_built.append(
                dict.fromkeys(["outcome", "calls", "restored", "same error", "given buffers"], raised(error))
            )
    cases = call_rule_cases(call_with, hand_built)
    generated = []
    for _ in range(CALL_CASES):
        model, counter, case_rng = call_model(rng.randrange(2**31))
        generated.append((model, counter, *call_choose(case_rng, model)))
    space = [(point, "", (point,)) for point in every(CALL_SPACE, most=2)]
    return labelled(
        *cases,
        *spanned(space, lambda point: call_space_case(call_with, point)),
        *seeded(generated, lambda *case: call_observe_case(call_with, *case, gen)),
    )


# ---------------------------------------------------------------------------------------------------------
# Part 2: apply_once
# ---------------------------------------------------------------------------------------------------------


def visits(apply_once: object, model: nn.Module) -> dict:
    """One seeded case: what fn was called on, each rule's part of it apart (rule 3: what is not a module; rule 1:
    how often each module; rule 2: the order of first visits), and whether the model itself came back."""
    returned, seen = visit_names(apply_once, model)
    modules = [name for name in seen if not name.startswith("not a module")]
    return {  # what it returns first: a call that raises is charged to rule 4 (grader.rules)
        "rule 4: the model itself comes back": returned is model,
        "rule 1: how many times fn saw each module": dict(sorted((name, modules.count(name)) for name in set(modules))),
        "rule 2: the order in which fn first saw each module": list(dict.fromkeys(modules)),
        "rule 3: what fn saw that is not a module": [name for name in seen if name.startswith("not a module")],
    }


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


def visit_names(apply_once: object, model: nn.Module) -> tuple:
    """(what apply_once returned, the names of what fn was called on, in order). fn returns a value of its own (as
    the nn.init functions do), never the module."""
    names = {id(module): name or "(root)" for name, module in model.named_modules()}
    got: list = []
    returned = apply_once(model, lambda module: got.append(module) or "what fn returned")
    return returned, [names.get(id(item), f"not a module: {type(item).__name__}") for item in got]


def apply_rule_cases(apply_once: object) -> list:
    def counts(build: Callable[[], nn.Module]) -> Callable[[], object]:
        """How many times fn saw each module (and anything else), whatever the order."""

        def run():
            _, seen = visit_names(apply_once, build())
            return dict(sorted((name, seen.count(name)) for name in set(seen)))

        return run

    def first_visits(build: Callable[[], nn.Module]) -> Callable[[], object]:
        """The order of the first visit of each module."""

        def run():
            _, seen = visit_names(apply_once, build())
            return list(dict.fromkeys(seen))

        return run

    def returns(build: Callable[[], nn.Module]) -> Callable[[], object]:
        def run():
            model = build()
            returned, _ = visit_names(apply_once, model)
            return {"the model itself comes back": returned is model, "what comes back": kind_of(returned)}

        return run

    def first():
        model = nn.Sequential(nn.Linear(1, 1))
        return apply_once(model, lambda module: None) is model

    return [
        fixed(1, "a module shared by two parents: once (the worked example)", counts(worked_example)),
        fixed(1, "a module registered twice under one parent: once", counts(twice_in_one)),
        fixed(1, "a shared subtree at two depths: each of its modules once", counts(shared_subtree)),
        fixed(1, "a layer with one parent, inside a block under two parents: once", counts(block_under_two_parents)),
        fixed(1, "a block registered twice in one parent: it and its layers once", counts(block_twice_in_one)),
        fixed(1, "a module without children: once", counts(lambda: nn.Linear(2, 2))),
        fixed(1, "a deep tree without sharing: every module once", counts(deep_tree)),
        fixed(
            2, "a deep tree: each child's subtree first, in registration order, the root last", first_visits(deep_tree)
        ),
        fixed(2, "a shared module where apply first reaches it (the worked example)", first_visits(worked_example)),
        fixed(2, "a shared subtree where apply first reaches it", first_visits(shared_subtree)),
        fixed(
            2,
            "a layer inside a block under two parents, where apply first reaches it",
            first_visits(block_under_two_parents),
        ),
        fixed(2, "ModuleList and ModuleDict children in registration order", first_visits(containers)),
        fixed(3, "a None child between two others is skipped", counts(none_between)),
        fixed(3, "a None child first, and one in a nested module", counts(none_nested)),
        fixed(3, "a model whose only child is None", counts(none_only)),
        fixed(4, "the model itself is returned (the visible lines of this cell)", first),
        fixed(4, "a module without children is returned", returns(lambda: nn.Linear(2, 2))),
        fixed(4, "a nested model with a shared module is returned", returns(shared_subtree)),
    ]


def worked_example() -> nn.Module:
    shared = nn.Linear(1, 1)
    return nn.Sequential(nn.Sequential(shared, nn.ReLU()), nn.Sequential(shared))


def twice_in_one() -> nn.Module:
    layer = nn.Linear(1, 1)
    return nn.Sequential(layer, layer, nn.ReLU())


def shared_subtree() -> nn.Module:
    block = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU(), nn.Dropout()))
    return Fork(nn.Sequential(nn.Linear(1, 1), block), Fork(block, nn.Sequential(block)))


def block_under_two_parents() -> nn.Module:
    """The layer has one parent, the block; the block has two, so apply reaches the layer along two paths."""
    block = nn.Sequential(nn.Linear(1, 1), nn.ReLU())
    return Fork(nn.Sequential(block, nn.Dropout()), nn.Sequential(block))


def block_twice_in_one() -> nn.Module:
    block = nn.Sequential(nn.Linear(1, 1), nn.ReLU())
    return nn.Sequential(block, nn.Dropout(), block)


def deep_tree() -> nn.Module:
    return Fork(
        nn.Sequential(nn.Linear(1, 1), Fork(nn.ReLU(), nn.Sequential(nn.Dropout(), nn.Linear(1, 1)))),
        nn.Sequential(nn.ReLU()),
    )


def containers() -> nn.Module:
    model = nn.Module()
    model.listed = nn.ModuleList([nn.ReLU(), nn.Sequential(nn.Linear(1, 1))])
    model.named = nn.ModuleDict({"dec": nn.Dropout(), "enc": nn.Linear(1, 1)})
    model.head = nn.ReLU()
    return model


def none_between() -> nn.Module:
    return Holder([nn.ReLU(), nn.Linear(1, 1)], {"enc": nn.Dropout()})


def none_nested() -> nn.Module:
    inner = nn.Sequential()
    inner.add_module("gap", None)
    inner.add_module("lin", nn.Linear(1, 1))
    model = nn.Module()
    model.register_module("first", None)
    model.inner = inner
    model.last = nn.ReLU()
    return model


def none_only() -> nn.Module:
    model = nn.Module()
    model.register_module("only", None)
    return model


APPLY_CODE = {nn.Module.apply.__code__: "nn.Module.apply", nn.Module._apply.__code__: "nn.Module._apply"}


def apply_not_called_cases(apply_once: object) -> list:
    """Rule 5: the code of nn.Module.apply (or _apply) never runs while apply_once runs, whatever reference would
    reach it (a method looked up then, or a function captured before)."""

    def ran(make: Callable[[], nn.Module]) -> Callable[[], list]:
        def observe() -> list:
            model = make()
            return code_that_runs(lambda: apply_once(model, lambda module: None), APPLY_CODE)

        return observe

    return [
        fixed(5, "the worked example: apply's code never runs", ran(worked_example)),
        fixed(5, "a block under two parents: apply's code never runs", ran(block_under_two_parents)),
        fixed(5, "one Linear: apply's code never runs", ran(lambda: nn.Linear(1, 1))),
    ]


@single_thread
def observe_apply_hidden(ns: dict) -> dict:
    apply_once = ns.get("apply_once")
    fixed_cases = [*apply_rule_cases(apply_once), *apply_not_called_cases(apply_once)]
    rng = Random(APPLY_SEED)
    cases = []
    for _ in range(APPLY_CASES):
        model = apply_build(rng, rng.choice([0, 1, 2, 2, 3, 3, 4]), [])
        cases.append((len(list(model.modules())), model))
    cases.sort(key=lambda case: case[0])
    return labelled(
        *fixed_cases,
        *spanned(graph_cases(4, 4), lambda graph: visits(apply_once, graph_model(graph))),
        *seeded(cases, lambda _, model: visits(apply_once, model)),
    )


def graph_model(graph: tuple) -> nn.Module:
    """A generated case of part 2: plain modules in the shape of a graph of every small shape (observing.graphs)."""
    return built(graph, lambda node, children: holder(children))[0]


# hidden test cell -> {dimension of its generated cases: the values they take, plainest first} (grader.coverage).
SPACES = {"test_call_with_hidden": CALL_SPACE, "test_apply_once_hidden": GRAPH_SPACE}

OBSERVERS = {
    "test_call_with_hidden": observe_call_hidden,
    "test_apply_once_hidden": observe_apply_hidden,
}

CLAUSES = {
    "test_call_with_hidden": {
        1: "valid names: every name named_parameters/named_buffers yield with remove_duplicate=False",
        2: "an unknown name raises KeyError naming it, before anything else",
        3: "during the one call, every entry of the object holds the given tensor itself",
        4: "it returns what the call returns",
        5: "afterwards every entry holds its object again, and the exception reaches the caller unchanged",
    },
    "test_apply_once_hidden": {
        1: "fn once for every module of model.modules(), nothing else",
        2: "in the order apply first reaches each module",
        3: "a None child is skipped",
        4: "it returns the model itself",
        5: "the walk is its own: nn.Module.apply's code never runs",
    },
}

# A part 2 that calls apply (rule 5) earns nothing, its visible test cell included (grader.trusted).
MUST_NOT = {"test_apply_once_hidden": ([5], ["test_apply_once_visible"])}
