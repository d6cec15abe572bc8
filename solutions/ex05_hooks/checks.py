"""Trusted checks for ex05_hooks: the cases of each test cell (fixed and seeded cases) run on the
submission's record_activations, strip_hooks and GradNormMonitor, and what they record, return and leave behind."""

from __future__ import annotations

import contextlib
import functools
import pickle
import random
import warnings
from collections import OrderedDict, namedtuple
from typing import NamedTuple

import torch
from torch import nn

from grader.observing import (
    HOOK_KINDS,
    approx,
    attempt,
    changed,
    data,
    every,
    exact,
    fixed,
    kind_of,
    labelled,
    plain,
    raised,
    register_hook,
    seed_torch,
    seeded,
    spanned,
    walk,
    whole,
)

HOOK_TABLES = (
    "_forward_pre_hooks",
    "_forward_hooks",
    "_backward_pre_hooks",
    "_backward_hooks",
    "_state_dict_pre_hooks",
    "_state_dict_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)
TABLES = HOOK_TABLES + ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs", "_forward_hooks_always_called")
LOG: list[str] = []  # the hooks that the cases give their models write here


def warm_up() -> None:
    """Run once by the grading sandbox's warm server before it forks (grader.trusted.warm_up_source): the first
    forward and backward of a recurrent layer in a process costs about 40 ms; without this, every child pays it."""
    import torch
    from torch import nn

    recurrent, cell = nn.LSTM(3, 2, batch_first=True), nn.LSTMCell(2, 2)
    output, (hidden, memory) = recurrent(torch.randn(1, 2, 3, requires_grad=True))
    (output.sum() + hidden.sum() + memory.sum() + sum(cell(hidden[0]))).sum().backward()


class BodyError(Exception):
    pass


class ForwardError(Exception):
    pass


class BodyInterrupt(KeyboardInterrupt):
    """What Ctrl-C raises in the body: a BaseException, not an Exception."""


def grads_data(grads: list) -> list:
    return [None if grad is None else data(grad) for grad in grads]


@contextlib.contextmanager
def quietly() -> object:
    """One thread (the tensors are tiny) and no warnings."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.set_num_threads(threads)


def tables_of(module: nn.Module) -> dict:
    """Each table of a module as (type, id, [(key, id of hook)])."""
    return {
        table: (
            type(vars(module)[table]),
            id(vars(module)[table]),
            [(key, id(value)) for key, value in vars(module)[table].items()],
        )
        for table in TABLES
    }


def snapshot(root: nn.Module) -> dict:
    """The tables of every module of the tree, and its _is_full_backward_hook."""
    state = {}
    for path, module in walk(root):
        state[path] = tables_of(module)
        state[path]["_is_full_backward_hook"] = vars(module)["_is_full_backward_hook"]
    return state


def differences(before: dict, after: dict) -> list:
    """The tables and flags that are not as they were (as the observation words them)."""
    found = []
    for path, state in before.items():
        for table, value in state.items():
            got = after.get(path, {}).get(table)
            if got == value:
                continue
            if table == "_is_full_backward_hook":
                found.append(f"{path!r}.{table} was {value!r}, now {got!r}")
            elif got is None or got[:2] != value[:2]:
                found.append(f"{path!r}.{table} was replaced by another object")
            else:
                found.append(f"{path!r}.{table} had {len(value[2])} entries, now {len(got[2])}")
    return found


def changes(before: dict, model: nn.Module) -> list:
    """How each table changed since before: [path, table, "replaced" / ["added", n] / ["changed", n]], plus, for a
    changed _backward_hooks, the module's _is_full_backward_hook."""
    found = []
    for path, module in walk(model):
        now = tables_of(module)
        for table in TABLES:
            old, new = before[path][table], now[table]
            if new == old:
                continue
            if new[:2] != old[:2]:
                change = "replaced"
            elif new[2][: len(old[2])] == old[2]:
                change = ["added", len(new[2]) - len(old[2])]
            else:
                change = ["changed", len(new[2])]
            entry = [path, table, change]
            if table == "_backward_hooks":
                entry.append(exact(vars(module)["_is_full_backward_hook"]))
            found.append(entry)
    return found


def tables_left(model: nn.Module) -> list:
    """Like the notebook's hooks_left(model): every non-empty hook or flag table of the tree."""
    found = []
    for name, module in model.named_modules():
        for table in TABLES:
            size = len(vars(module)[table])
            if size:
                found.append([name, table, size])
    return found


# ---------------------------------------------------------------------------------------------------------
# Part 1: record_activations
# ---------------------------------------------------------------------------------------------------------


class Pair(nn.Module):
    """Returns a tuple: a tensor, a list [tensor, None] and an int."""

    def __init__(self, left: nn.Module, right: nn.Module) -> None:
        super().__init__()
        self.left, self.right = left, right

    def forward(self, x: torch.Tensor) -> tuple:
        return self.left(x), [self.right(x), None], 3


class Fork(nn.Module):
    def __init__(self, left: nn.Module, right: nn.Module) -> None:
        super().__init__()
        self.pair = Pair(left, right)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first, (second, _), _ = self.pair(x)
        return first + second


class Recurrent(nn.Module):
    """One step of an LSTM cell; the cell itself returns the tuple (h, c)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, c = self.cell(x)
        return h + c


class Boom(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ForwardError("Boom.forward raises on purpose")


RECORD_SEED, RECORD_CASES = 20130501, 24


def record_build(rng: random.Random, width: int, depth: int, pool: list) -> nn.Module:
    """A random module mapping (batch, width) to (batch, width), drawn from the case's seed."""
    kinds = ["linear", "linear", "relu", "tanh", "norm", "lstm"]
    if pool:
        kinds += ["reuse"] * 2
    if depth > 0:
        kinds += ["sequential", "fork"] * 3
    kind = rng.choice(kinds)
    if kind == "reuse":
        return rng.choice(pool)
    if kind == "sequential":
        module = nn.Sequential(*[record_build(rng, width, depth - 1, pool) for _ in range(rng.randint(1, 3))])
    elif kind == "fork":
        left = record_build(rng, width, depth - 1, pool)
        module = Fork(left, record_build(rng, width, depth - 1, pool))
    elif kind == "linear":
        module = nn.Linear(width, width)
    elif kind == "norm":
        module = nn.LayerNorm(width)
    elif kind == "lstm":
        module = Recurrent(width)
    else:
        module = nn.ReLU() if kind == "relu" else nn.Tanh()
    pool.append(module)
    return module


def record_own_hooks(model: nn.Module, rng: random.Random) -> None:
    """Hooks the model already has before the block; they log what they see."""
    for name, module in model.named_modules():
        if rng.random() > 0.25:
            continue
        kind = rng.choice(["scale", "scale", "kwargs", "pre", "backward", "state_dict"])
        prepend = rng.random() < 0.5
        if kind == "scale":

            def scale(module, args, output, name=name):
                LOG.append(f"scale {name}")
                return output * 2 if isinstance(output, torch.Tensor) else None

            module.register_forward_hook(scale, prepend=prepend)
        elif kind == "kwargs":
            always = rng.random() < 0.5

            def seen(module, args, kwargs, output, name=name):
                LOG.append(f"kwargs {name}")

            module.register_forward_hook(seen, with_kwargs=True, always_call=always, prepend=prepend)
        elif kind == "pre":
            module.register_forward_pre_hook(lambda module, args, name=name: LOG.append(f"pre {name}"))
        elif kind == "backward" and isinstance(module, (nn.Linear, nn.Tanh, nn.ReLU, nn.LayerNorm)):
            module.register_full_backward_hook(
                lambda module, grad_input, grad_output, name=name: LOG.append(f"backward {name}")
            )
        elif kind == "state_dict":
            module.register_state_dict_post_hook(lambda *args, **kwargs: None)


def draw_names(rng: random.Random, model: nn.Module, kind: str, bad_names: list[str]) -> list:
    """The module names a hidden case asks for, drawn from the case's seed: some of the model's names, a
    shared module under two of its names, and for kind "unknown" one of bad_names (one the model lacks)."""
    all_names = [name for name, _ in model.named_modules(remove_duplicate=False)]
    count = 0 if rng.random() < 0.05 else rng.randint(1, min(5, len(all_names)))
    names = [rng.choice(all_names) for _ in range(count)]
    paths: dict = {}
    for name, module in model.named_modules(remove_duplicate=False):
        paths.setdefault(id(module), []).append(name)
    shared = [found for found in paths.values() if len(found) > 1]
    if shared and rng.random() < 0.6:
        names += rng.sample(rng.choice(shared), 2)
        rng.shuffle(names)
    if kind == "unknown":
        bad = rng.choice(bad_names)
        if bad in all_names:
            bad = "encoder"
        names.insert(rng.randint(0, len(names)), bad)
    return names


def record_fixed_case(case: int) -> tuple:
    shared = nn.Linear(2, 2)
    if case == 1:
        model, names, kind = nn.Sequential(shared, nn.ReLU(), shared), ["2", "1", "0"], "normal"
    elif case == 2:
        model, kind = nn.Sequential(shared, Fork(nn.Tanh(), shared)), "unknown"
        names = ("1.pair.right", "0", "1.pair.left", "encoder")
    else:
        model, names, kind = nn.Sequential(Recurrent(2), Boom()), ["0.cell", "1", "0"], "forward"
    inputs = [(torch.randn(3, 2, requires_grad=True), torch.randn(3, 2)) for _ in range(2)]
    return model, names, {"kind": kind, "inputs": inputs}


def record_case(rng: random.Random, case: int) -> tuple:
    """(model, names, plan) of case number `case`, drawn from the case's seed."""
    if case <= 3:
        return record_fixed_case(case)
    width = rng.randint(1, 3)
    depth = 0 if case <= 5 else 1 if case <= 10 else rng.choice([1, 2, 2, 3])
    model = record_build(rng, width, depth, [])
    kind = rng.choice(["normal"] * 5 + ["body", "forward", "unknown"])
    if kind == "forward":
        model = nn.Sequential(model, Boom())
    record_own_hooks(model, rng)
    names = draw_names(rng, model, kind, ["encoder", "9", "0.weight", "cell", "0.", ".0", "pair.left.0.1.2", " "])
    container = rng.choice([list, tuple])
    batch = rng.randint(1, 3)
    inputs = [
        (torch.randn(batch, width, requires_grad=True), torch.randn(batch, width)) for _ in range(rng.randint(1, 3))
    ]
    plan = {"kind": kind, "inputs": inputs}
    if kind == "body":
        plan["raise_at"] = rng.randint(0, len(inputs))
        plan["body_error"] = BodyError("the body raises on purpose")
    return model, container(names), plan


def entry(value: object, values: bool = True) -> object:
    """A recorded entry as the observation compares it: a tensor by its graph flags, shape and values (without
    `values`, its shape alone), a tuple item by item, anything else by type and value."""
    if isinstance(value, torch.Tensor):
        detached = not value.requires_grad and value.grad_fn is None
        return ["tensor", detached, data(value) if values else list(value.shape)]
    if type(value) is tuple:
        return ["tuple", [entry(item, values) for item in value]]
    if isinstance(value, dict):  # stored as it is: its tensors keep their graph
        return ["dict", kind_of(value), [[plain(key), entry(item, values)] for key, item in value.items()]]
    return ["value", exact(value)]


def records_seen(records: object, values: bool = True) -> object:
    """Each name's entries (entry), as named records; without `values`, what each entry is but not its values."""
    if type(records) is not dict:
        return ["not a dict", kind_of(records)]
    seen = []
    for name, entries in records.items():
        if type(entries) is not list:
            seen.append([plain(name), "not a list", kind_of(entries)])
        else:
            seen.append([plain(name), [entry(value, values) for value in entries]])
    return seen


def error_seen(error: BaseException | None, plan: dict) -> object:
    if error is None:
        return None
    if error is plan.get("body_error"):
        return "the body's own exception"
    return raised(error)


def record_play(record_activations: object, model: nn.Module, names: object, plan: dict) -> dict:
    """One case played with the submission's record_activations: what the block gave, what the model did inside it."""
    before = snapshot(model)
    LOG.clear()
    seen: dict = {"inside": [], "outputs": [], "grads": [], "error": None}
    records = None
    params = list(model.parameters())
    try:
        with record_activations(model, names) as records:
            seen["inside"].append(changes(before, model))
            for step, (x, weights) in enumerate(plan["inputs"]):
                if step == plan.get("raise_at"):
                    raise plan["body_error"]
                out = model(x)
                seen["outputs"].append(data(out))
                if not out.requires_grad:
                    raise AssertionError("the output does not require grad")  # where the observation stops
                grads = torch.autograd.grad((out * weights).sum(), params + [x], allow_unused=True)
                seen["grads"].append(grads_data(grads))
            if plan.get("raise_at") == len(plan["inputs"]):
                raise plan["body_error"]
    except (BodyError, BodyInterrupt, ForwardError, KeyError) as error:
        seen["error"] = error_seen(error, plan)
    except AssertionError as error:
        seen["stopped"] = str(error)
    seen["log"] = list(LOG)
    seen["left"] = differences(before, snapshot(model))
    if plan["kind"] == "unknown":
        return by_rule({key: seen[key] for key in ("inside", "left", "error")} | {"body ran": records is not None}, 1)
    if type(records) is dict:
        seen["records"] = records_seen(records, values=False)
        seen["the values recorded"] = records_seen(records)
        lengths = {name: len(entries) for name, entries in records.items()}
        try:
            model(plan["inputs"][0][0])
        except ForwardError:
            pass
        seen["after the block"] = {name: len(entries) for name, entries in records.items()} == lengths
    return by_rule(seen, RECORD_RULES)


# what a seeded case of part 1 looks at, by the rule that asks for it
RECORD_RULES = {
    "inside": 2,
    "outputs": 4,
    "grads": 4,
    "error": 5,
    "log": 4,
    "left": 5,
    "records": 3,
    "after the block": 5,
}
FIELD_WORDS = {  # each field of a seeded case in the contract's words
    "inside": "the tables the block changed when it started",
    "outputs": "the model's outputs",
    "grads": "the gradients",
    "error": "the exception that came out",
    "log": "the model's own hooks, as they ran",
    "left": "the tables changed after the block",
    "records": "what is recorded (each entry's kind, detached or not, shape), call by call",
    "after the block": "a forward pass after the block adds nothing",
    "body ran": "the body ran",
    "norm keys": "the keys of norms",
    "monitor": "the with statement gives the monitor itself",
    "nothing added afterwards": "a backward pass afterwards adds no norm",
    "model kept": "the model is as before",
    "model's values": "the model's values",
    "copy": "a new object, of the model's class",
    "copy's hooks": "the hooks that fire when the copy runs",
    "pickle": "pickling the copy",
    "model after": "what the model computes and fires afterwards",
    "model's tables after remove()": "the model's tables after its handles are removed",
}


def by_rule(seen: dict, rules: dict | int) -> dict:
    """A seeded case's fields named in the contract's words under the rule that asks for each (`rules`: field ->
    rule, or one rule for all); a field of no rule (an output every rule shapes) keeps its name, unnamed."""
    named = {}
    for field, value in seen.items():
        rule = rules if type(rules) is int else rules.get(field)
        words = FIELD_WORDS.get(field, field)
        named[words if rule is None else f"rule {rule}: {words}"] = value
    return named


def fresh(build: object) -> object:
    """A fixed case's body with torch's generator seeded first: each case draws the same numbers whatever the cases
    before it did."""

    def run() -> object:
        seed_torch(0)
        LOG.clear()
        return build()

    return run


def shared_chain(between: nn.Module | None = None) -> nn.Module:
    """nn.Sequential(shared, nn.ReLU(), shared) (or another module between): "0" and "2" are one module."""
    shared = nn.Linear(2, 2)
    return nn.Sequential(shared, nn.ReLU() if between is None else between, shared)


def own_hooks(module: nn.Module, name: str) -> None:
    """Hooks a module already has: a forward hook that doubles the output, one that runs first (prepend) and one with
    kwargs that is always called, a forward pre-hook and a full backward hook; all but the first log their calls."""
    module.register_forward_hook(lambda module, args, output: output * 2)
    module.register_forward_hook(lambda module, args, output: LOG.append(f"first {name}"), prepend=True)
    module.register_forward_hook(
        lambda module, args, kwargs, output: LOG.append(f"kwargs {name}"), with_kwargs=True, always_call=True
    )
    module.register_forward_pre_hook(lambda module, args: LOG.append(f"pre {name}"))
    module.register_full_backward_hook(lambda module, grad_input, grad_output: LOG.append(f"backward {name}"))


def with_own_hooks(model: nn.Module, *paths: str) -> nn.Module:
    for path in paths:
        own_hooks(model.get_submodule(path), path)
    return model


class Listed(nn.Module):
    """Returns a list: [a tensor, None]."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> list:
        return [self.linear(x), None]


class Keyed(nn.Module):
    """Returns a dict {"y": a tensor}."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> dict:
        return {"y": self.linear(x)}


class TopTwo(nn.Module):
    """Returns torch.return_types.topk, a named tuple."""

    def forward(self, x: torch.Tensor) -> tuple:
        return (x * 3).topk(2)


Split = namedtuple("Split", "low high")  # a named tuple made with collections.namedtuple


class Halves(NamedTuple):
    """A named tuple made with typing.NamedTuple."""

    low: torch.Tensor
    high: object


class Splits(nn.Module):
    """Returns a collections.namedtuple Split(tensor, tensor)."""

    def forward(self, x: torch.Tensor) -> tuple:
        return Split(x * 2, x.tanh())


class Halved(nn.Module):
    """Returns a typing.NamedTuple Halves(tensor, [tensor, None])."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> tuple:
        return Halves(self.linear(x), [x * 3, None])


class Parallel(nn.Module):
    """One submodule called twice in one forward pass, on two inputs, neither call feeding the other."""

    def __init__(self) -> None:
        super().__init__()
        self.shared = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shared(x) + 10 * self.shared(2 * x)


def given(records: object) -> object:
    """The result dict as the block gives it: exactly a dict, its keys in order, each value's class and length."""
    if type(records) is not dict:
        return ["not a dict", kind_of(records)]
    return [
        [plain(name), kind_of(value), len(value) if type(value) is list else None] for name, value in records.items()
    ]


def forward_hooks_added(before: dict, model: nn.Module) -> list:
    """How many entries each module's _forward_hooks gained since before (modules that gained none left out)."""
    return [
        [path, len(vars(module)["_forward_hooks"]) - len(before[path]["_forward_hooks"][2])]
        for path, module in walk(model)
        if len(vars(module)["_forward_hooks"]) != len(before[path]["_forward_hooks"][2])
    ]


def record_starting(record_activations: object, model: nn.Module, names: object) -> dict:
    """Rule 1: start a block and leave it at once: what it gave, how many forward hooks each module gained, the
    exception it raised, whether the body ran and what it left behind."""
    before = snapshot(model)
    seen: dict = {"body ran": False, "error": None}
    try:
        with record_activations(model, names) as records:
            seen["body ran"] = True
            seen["given"] = given(records)
            seen["hooks added"] = forward_hooks_added(before, model)
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        seen["error"] = raised(error)
    seen["left"] = differences(before, snapshot(model))
    return seen


def record_twice(record_activations: object) -> list:
    """Rule 1: two blocks on one model give two new dicts; the second starts empty, the first keeps its entry."""
    model = nn.Sequential(nn.Linear(2, 2))
    x = torch.randn(3, 2)
    with record_activations(model, ["0"]) as first:
        model(x)
    with record_activations(model, ["0"]) as second:
        seen = [given(first), given(second)]
    return [*seen, first is not second, type(first) is dict and type(second) is dict and first["0"] is not second["0"]]


def record_inside(record_activations: object, model: nn.Module, names: object) -> list:
    """Rule 2: how each table of the model changed while the block runs (the hook's place, its options)."""
    before = snapshot(model)
    with record_activations(model, names):
        return changes(before, model)


def recorded_values(record_activations: object, model: nn.Module, names: object, x: torch.Tensor) -> object:
    """Rule 2: the values a block records over one forward pass (shape and values only)."""
    with record_activations(model, names) as records:
        model(x)
    if type(records) is not dict:
        return ["not a dict", kind_of(records)]
    return [
        [plain(name), [data(item) for item in entries] if type(entries) is list else kind_of(entries)]
        for name, entries in records.items()
    ]


def recorded(record_activations: object, model: nn.Module, names: object, inputs: list) -> object:
    """Rule 3: the entries a block records over some forward passes (a ForwardError caught inside the body)."""
    with record_activations(model, names) as records:
        for x in inputs:
            try:
                model(x)
            except ForwardError:
                pass
    return records_seen(records)


def watched(record_activations: object, model: nn.Module, names: object, x: torch.Tensor) -> list:
    """Rule 4: the model's output, the gradients of a weighted sum and the model's own hooks' calls, in a block."""
    params = list(model.parameters())
    with record_activations(model, names):
        out = model(x)
        seen = [data(out), out.requires_grad]
        weights = torch.randn(out.shape)
        grads = torch.autograd.grad((out * weights).sum(), params + [x], allow_unused=True)
    return [*seen, grads_data(grads), list(LOG)]


def hook_returns(record_activations: object, model: nn.Module, names: object, x: torch.Tensor) -> dict:
    """Rule 4: each forward hook the block added, called directly inside the block on an output: what it returns
    (a forward hook that returns a value replaces the module's output)."""
    before = {id(module): list(vars(module)["_forward_hooks"]) for module in model.modules()}
    returned = []
    with record_activations(model, names):
        for module in model.modules():
            for key, hook in list(vars(module)["_forward_hooks"].items()):
                if key not in before[id(module)]:
                    returned.append(kind_of(hook(module, (x,), torch.tanh(x))))
    return {"what the block's hook returns": returned}


def entry_memory(record_activations: object, x: torch.Tensor, grad: bool = True) -> dict:
    """Rule 3: a tensor entry is output.detach(), a new tensor object sharing the output's memory (no copy) and its
    version counter (an in-place change of the output afterwards shows in the entry's _version), also for a forward
    under no_grad (without `grad`); the output is caught by a forward hook of the model's own, which runs first."""
    model = nn.Sequential(nn.Linear(2, 3))
    outputs: list = []
    model[0].register_forward_hook(lambda module, args, output: outputs.append(output) and None)
    with record_activations(model, ["0"]) as records, torch.set_grad_enabled(grad):
        model(x)
    first = records["0"][0] if type(records) is dict and type(records.get("0")) is list and records["0"] else None
    if not isinstance(first, torch.Tensor):
        return {"the entry": kind_of(first)}
    output = outputs[0]
    seen = {
        "a new tensor object": first is not output,
        "the output's memory": first.untyped_storage().data_ptr() == output.untyped_storage().data_ptr(),
    }
    with torch.no_grad():
        output.add_(1)
    seen["the output's version counter"] = first._version == output._version
    return seen


def record_leaving(
    record_activations: object, model: nn.Module, names: object, inputs: list, body_raises: bool
) -> dict:
    """Rule 5: leave a block normally or by an exception: the exception that came out, the tables left, how many
    entries the dict kept, and how many after one more forward pass and which of the model's own hooks it ran."""
    before = snapshot(model)
    body_error = BodyError("the body raises on purpose")
    records, caught = None, None
    try:
        with record_activations(model, names) as records:
            for x in inputs:
                model(x)
            if body_raises:
                raise body_error
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        caught = error
    seen = {"error": error_seen(caught, {"body_error": body_error}), "left": differences(before, snapshot(model))}

    def lengths() -> object:
        if type(records) is not dict:
            return kind_of(records)
        return [[plain(name), len(entries) if type(entries) is list else None] for name, entries in records.items()]

    seen["kept"] = lengths()
    LOG.clear()
    try:
        model(inputs[0])
    except ForwardError:
        pass
    seen["after one more pass"] = lengths()
    seen["own hooks after"] = list(LOG)
    return seen


def record_fixed(record_activations: object) -> list:
    """The fixed cases of record_activations, rule by rule (the contract of part 1)."""
    ra = record_activations
    x = torch.randn  # each case draws its inputs after fresh() has seeded the generator

    def first() -> object:
        with ra(nn.Sequential(nn.Linear(2, 2)), ["0"]) as records:
            return kind_of(records)

    def hand_built(case: int, observe: object) -> object:
        def run() -> object:
            model, names, plan = record_fixed_case(case)
            return observe(model, names, plan)

        return fresh(run)

    def fork() -> nn.Module:
        shared = nn.Linear(2, 2)
        return nn.Sequential(shared, Fork(nn.Tanh(), shared))

    def lstm_model() -> nn.Module:
        return nn.Sequential(nn.LSTM(2, 3))

    return [
        fixed(1, "a first block on a one-layer model gives a plain dict", fresh(first)),
        fixed(
            1,
            "names ['2', '1', '0'] of Sequential(shared, ReLU, shared): keys ['0', '1'], one hook each",
            fresh(lambda: record_starting(ra, shared_chain(), ["2", "1", "0"])),
        ),
        fixed(
            1,
            "a tuple of names repeating a shared module reached inside a Fork: canonical keys in request order",
            fresh(lambda: record_starting(ra, fork(), ("1.pair.right", "1.pair.left", "1.pair.right", "0"))),
        ),
        fixed(
            1,
            "the model itself ('') and a grandchild ('1.pair')",
            fresh(lambda: record_starting(ra, fork(), ["1.pair", ""])),
        ),
        fixed(1, "no names: an empty dict, no hook", fresh(lambda: record_starting(ra, shared_chain(), []))),
        fixed(
            1,
            "an invalid name after two valid ones raises KeyError before any hook is registered",
            fresh(lambda: record_starting(ra, with_own_hooks(shared_chain(), "0"), ["0", "1", "encoder"])),
        ),
        fixed(
            1,
            "a parameter name ('0.weight') is not a module name: KeyError",
            fresh(lambda: record_starting(ra, shared_chain(), ["1", "0.weight"])),
        ),
        fixed(
            1,
            "a name with a trailing dot ('0.') is invalid: KeyError",
            fresh(lambda: record_starting(ra, fork(), ["0."])),
        ),
        fixed(
            1,
            "the hand-built Fork case with 'encoder' last: KeyError, the tables untouched",
            hand_built(2, lambda model, names, plan: record_starting(ra, model, names)),
        ),
        fixed(1, "two blocks on one model give two new dicts", fresh(lambda: record_twice(ra))),
        fixed(
            2,
            "the hook sees the output after the module's own doubling forward hook",
            fresh(lambda: recorded_values(ra, with_own_hooks(nn.Sequential(nn.Linear(2, 2)), "0"), ["0"], x(3, 2))),
        ),
        fixed(
            2,
            "inside the block: one entry added at the end of _forward_hooks, no flag table touched",
            fresh(
                lambda: record_inside(
                    ra, with_own_hooks(nn.Sequential(nn.Linear(2, 2), nn.Tanh()), "0", "1"), ["1", "0"]
                )
            ),
        ),
        fixed(
            3,
            "a tensor output is stored as output.detach()",
            fresh(
                lambda: recorded(
                    ra, nn.Sequential(nn.Linear(2, 3), nn.Tanh()), ["1", "0"], [x(4, 2, requires_grad=True)]
                )
            ),
        ),
        fixed(
            3,
            "a tensor entry is output.detach(): it shares the output's memory, no copy",
            fresh(lambda: entry_memory(ra, x(3, 2, requires_grad=True))),
        ),
        fixed(
            3,
            "a forward under torch.no_grad(): the entry is still output.detach(), a new tensor object, not the output",
            fresh(lambda: entry_memory(ra, x(3, 2), grad=False)),
        ),
        fixed(
            3,
            "an LSTM's nested (output, (h, c)) becomes a tuple holding a tensor and a tuple, all detached",
            fresh(lambda: recorded(ra, lstm_model(), ["0"], [x(4, 1, 2, requires_grad=True)])),
        ),
        fixed(
            3,
            "a tuple holding a list, None and an int: (tensor, [tensor, None], 3) becomes nested tuples",
            fresh(lambda: recorded(ra, Fork(nn.Linear(2, 2), nn.Tanh()), ["pair"], [x(3, 2, requires_grad=True)])),
        ),
        fixed(
            3,
            "a list output [tensor, None] becomes a plain tuple",
            fresh(lambda: recorded(ra, nn.Sequential(Listed()), ["0"], [x(3, 2, requires_grad=True)])),
        ),
        fixed(
            3,
            "a named tuple (torch.return_types.topk) becomes a plain tuple",
            fresh(lambda: recorded(ra, nn.Sequential(nn.Linear(3, 3), TopTwo()), ["1"], [x(2, 3, requires_grad=True)])),
        ),
        fixed(
            3,
            "a collections.namedtuple Split(tensor, tensor) becomes a plain tuple",
            fresh(lambda: recorded(ra, nn.Sequential(nn.Linear(2, 2), Splits()), ["1"], [x(3, 2, requires_grad=True)])),
        ),
        fixed(
            3,
            "a typing.NamedTuple Halves(tensor, [tensor, None]) becomes a plain tuple holding a plain tuple",
            fresh(lambda: recorded(ra, nn.Sequential(Halved()), ["0"], [x(3, 2, requires_grad=True)])),
        ),
        fixed(
            3,
            "a shared module that runs twice in one pass gets two entries, in call order",
            fresh(lambda: recorded(ra, shared_chain(nn.Tanh()), ["0"], [x(3, 2)])),
        ),
        fixed(
            3,
            "Sequential(shared, ReLU, shared) asked for as '0' only: two entries per pass",
            fresh(lambda: recorded(ra, shared_chain(), ["0"], [x(3, 2), x(1, 2)])),
        ),
        fixed(
            3,
            "three forward passes in one block add up",
            fresh(
                lambda: recorded(ra, nn.Sequential(nn.Linear(2, 2), nn.ReLU()), ["1", "0"], [x(2, 2), x(1, 2), x(3, 2)])
            ),
        ),
        fixed(
            3,
            "a forward that raises records nothing for the modules it did not finish",
            fresh(lambda: recorded(ra, nn.Sequential(nn.Linear(2, 2), Boom()), ["1", "", "0"], [x(3, 2)])),
        ),
        fixed(
            3,
            "the hand-built Sequential(shared, ReLU, shared) case, names ['2', '1', '0']",
            hand_built(1, lambda model, names, plan: recorded(ra, model, names, [x for x, _ in plan["inputs"]])),
        ),
        fixed(
            4,
            "outputs and gradients of a three-layer model are as without the block",
            fresh(
                lambda: watched(
                    ra,
                    nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 2)),
                    ["0", "1", "2"],
                    x(4, 2, requires_grad=True),
                )
            ),
        ),
        fixed(
            4,
            "the model's own hooks run, and still double the outputs, as without the block",
            fresh(
                lambda: watched(
                    ra,
                    with_own_hooks(nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 2)), "0", "2"),
                    ["2", "0"],
                    x(3, 2, requires_grad=True),
                )
            ),
        ),
        fixed(
            4,
            "a tuple output reaches the rest of the model unchanged (a Fork of Linear and Tanh)",
            fresh(
                lambda: watched(
                    ra, Fork(nn.Linear(2, 2), nn.Tanh()), ["pair", "pair.left"], x(3, 2, requires_grad=True)
                )
            ),
        ),
        fixed(
            4,
            "the block's hook itself returns None (called directly on an output inside the block)",
            fresh(lambda: hook_returns(ra, nn.Sequential(nn.Linear(2, 2), nn.Tanh()), ["1", "0"], x(3, 2))),
        ),
        fixed(
            5,
            "the body raises: that same exception comes out, and every table is as before",
            fresh(
                lambda: record_leaving(
                    ra, with_own_hooks(shared_chain(), "0", "1"), ["1", "2"], [x(3, 2)], body_raises=True
                )
            ),
        ),
        fixed(
            5,
            "a forward inside the block raises: the exception comes out, the hooks are removed",
            hand_built(3, lambda model, names, plan: record_leaving(ra, model, names, [plan["inputs"][0][0]], False)),
        ),
        fixed(
            5,
            "leaving normally: the model's own hooks stay, in order, the block's are gone, the dict keeps its entries",
            fresh(
                lambda: record_leaving(
                    ra,
                    with_own_hooks(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), "0", "1"),
                    ["0", "1"],
                    [x(3, 2), x(2, 2)],
                    False,
                )
            ),
        ),
    ]


class Unpacked(nn.Module):
    """Runs a module whose output may not be a tensor, and passes on the first tensor in it."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.inner(x)
        while not isinstance(out, torch.Tensor):
            out = next(iter(out.values())) if isinstance(out, dict) else out[0]
        return out


def logger(tag: str) -> object:
    """A hook of any signature that logs its tag and returns None."""
    return lambda *args, **kwargs: LOG.append(tag)


# Part 1's input space: what the hooked module ("1.inner") returns, the hooks it already has (each kind of forward
# hook and option, a pre-hook, a full backward hook on the shared Linear), which names are asked for (none, two, one
# module under two names, an unknown one, a tuple) and what the block does (one or two passes, a body or a forward
# that raises); each value once. The model is nn.Sequential(shared, Unpacked(the module), shared).
RECORD_OUTPUTS = {
    "a tensor": nn.Tanh,
    "a tuple holding a list": lambda: Pair(nn.Tanh(), nn.Linear(2, 2)),
    "an LSTM cell's tuple": lambda: nn.LSTMCell(2, 2),
    "a named tuple (torch.return_types.topk)": TopTwo,
    "a collections.namedtuple": Splits,
    "a typing.NamedTuple": Halved,
    "a list": Listed,
    "a dict": Keyed,
}
RECORD_OWN_HOOKS = {
    "none": lambda model: None,
    "a forward hook that doubles": lambda model: model[1].inner.register_forward_hook(doubled),
    "a prepended forward hook": lambda model: register_hook(
        model[1].inner, "forward hook", logger("first"), prepend=True
    ),
    "a forward hook with_kwargs and always_call": lambda model: register_hook(
        model[1].inner, "forward hook with_kwargs", logger("kwargs"), always_call=True
    ),
    "a forward pre-hook": lambda model: register_hook(model[1].inner, "forward pre-hook", logger("pre")),
    "a full backward hook on the shared Linear": lambda model: register_hook(
        model[0], "full backward hook", logger("backward")
    ),
}
RECORD_NAMES = {
    "its name": ["1.inner"],
    "no name": [],
    "two names": ["1.inner", "1"],
    "one module under two names": ["2", "0"],
    "an unknown name": ["1.inner", "encoder"],
    "a tuple of names": ("1.inner",),
}
RECORD_SPACE = {
    "output": list(RECORD_OUTPUTS),
    "own hooks": list(RECORD_OWN_HOOKS),
    "names": list(RECORD_NAMES),
    "block": ["one pass", "two passes", "the body raises", "a forward raises", "the body is interrupted"],
}


def doubled(module: nn.Module, args: tuple, output: object) -> object:
    return output * 2 if isinstance(output, torch.Tensor) else None


def record_arguments(point: dict) -> tuple:
    """A generated case's model, names and plan (record_play), its numbers drawn from a fixed seed."""
    seed_torch(RECORD_SEED + 1)
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, Unpacked(RECORD_OUTPUTS[point["output"]]()), shared)
    RECORD_OWN_HOOKS[point["own hooks"]](model)
    block = point["block"]
    inputs = [
        (torch.randn(3, 2, requires_grad=True), torch.randn(3, 2)) for _ in range(2 if block == "two passes" else 1)
    ]
    plan = {"kind": "normal", "inputs": inputs}
    if point["names"] == "an unknown name":
        plan["kind"] = "unknown"
    elif block == "the body raises":
        plan.update(kind="body", raise_at=1, body_error=BodyError("the body raises on purpose"))
    elif block == "the body is interrupted":
        plan.update(kind="body", raise_at=1, body_error=BodyInterrupt("Ctrl-C in the body"))
    elif block == "a forward raises":
        model, plan["kind"] = nn.Sequential(model, Boom()), "forward"
    return model, RECORD_NAMES[point["names"]], plan


def observe_record_hidden(ns: dict) -> dict:
    record_activations = ns.get("record_activations")
    with quietly(), torch.random.fork_rng(devices=[]):
        cases = record_fixed(record_activations)
        rng = random.Random(RECORD_SEED)
        seed_torch(RECORD_SEED)
        drawn = [record_case(rng, case) for case in range(1, RECORD_CASES + 1)]
        # Cases 1 to 3 are the hand-built ones, observed above as fixed cases; they are still built here, in the order
        # they always were, so that the seeded cases draw the same numbers.
        points = every(RECORD_SPACE, most=1)
        generated = [(point, "", (point,)) for point in points]
        cases += spanned(generated, lambda point: record_play(record_activations, *record_arguments(point)))
        cases += seeded(drawn[3:], lambda *case: record_play(record_activations, *case))
    return labelled(*cases)


# ---------------------------------------------------------------------------------------------------------
# Part 2: strip_hooks
# ---------------------------------------------------------------------------------------------------------


STRIP_SEED, STRIP_CASES = 20130502, 20


class Recorder:
    """A callable object used as a hook; deepcopy would copy it with its list."""

    def __init__(self, name: str) -> None:
        self.name, self.seen = name, []

    def __call__(self, module: nn.Module, *args: object) -> None:
        self.seen.append(len(args))
        LOG.append(f"object {self.name}")

    def method(self, module: nn.Module, *args: object) -> None:
        LOG.append(f"method {self.name}")


def strip_build(rng: random.Random, width: int, depth: int, pool: list) -> nn.Module:
    """A random module of torch's own classes, drawn from the case's seed."""
    kinds = ["linear", "linear", "linear", "relu", "tanh", "layernorm", "batchnorm", "identity"]
    if pool:
        kinds += ["reuse"] * 2
    if depth > 0:
        kinds += ["sequential"] * 4
    kind = rng.choice(kinds)
    if kind == "reuse":
        return rng.choice(pool)
    if kind == "sequential":
        module = nn.Sequential(*[strip_build(rng, width, depth - 1, pool) for _ in range(rng.randint(1, 3))])
    elif kind == "linear":
        module = nn.Linear(width, width, bias=rng.random() < 0.8)
        if rng.random() < 0.2:
            module.weight.requires_grad_(False)
    elif kind == "layernorm":
        module = nn.LayerNorm(width)
    elif kind == "batchnorm":
        affine, track = rng.random() < 0.5, rng.random() < 0.5
        module = nn.BatchNorm1d(width, affine=affine, track_running_stats=track)
    else:
        module = {"relu": nn.ReLU, "tanh": nn.Tanh, "identity": nn.Identity}[kind]()
    pool.append(module)
    return module


def strip_add_hooks(name: str, module: nn.Module, rng: random.Random, handles: list) -> None:
    """Hooks of every kind, made of lambdas, closures, callable objects, bound methods and partials."""
    backward = rng.choice(["full", "full", "old"])
    kinds = ["pre", "fwd", "double", "bwd_pre", "bwd", "sd_pre", "sd_post", "load_pre", "load_post", "removed"]
    for kind in rng.sample(kinds, rng.randint(1, 4)):
        prepend, with_kwargs, always_call = (rng.random() < 0.5 for _ in range(3))
        style = rng.choice(["lambda", "closure", "object", "method", "partial"])
        recorder = Recorder(name)
        if style == "lambda":
            hook = lambda module, *args, **kwargs: LOG.append(f"lambda {name}")  # noqa: E731
        elif style == "closure":

            def hook(module, *args, **kwargs):
                LOG.append(f"closure {name}")

        elif style == "object":
            hook = recorder
        elif style == "method":
            hook = recorder.method
        else:
            hook = functools.partial(lambda tag, module, *args, **kwargs: LOG.append(tag), f"partial {name}")
        if kind == "pre":
            handles.append(module.register_forward_pre_hook(hook, prepend=prepend, with_kwargs=with_kwargs))
        elif kind == "fwd":
            handles.append(
                module.register_forward_hook(hook, prepend=prepend, with_kwargs=with_kwargs, always_call=always_call)
            )
        elif kind == "double":
            handles.append(module.register_forward_hook(lambda module, args, output: output * 2, prepend=prepend))
            handles.append(module.register_forward_pre_hook(lambda module, args: (args[0] + 1,)))
        elif kind == "bwd_pre":
            handles.append(module.register_full_backward_pre_hook(hook, prepend=prepend))
        elif kind == "bwd" and backward == "full":
            handles.append(module.register_full_backward_hook(hook, prepend=prepend))
        elif kind == "bwd":
            handles.append(module.register_backward_hook(hook))
        elif kind == "sd_pre":
            handles.append(module.register_state_dict_pre_hook(hook))
        elif kind == "sd_post":
            handles.append(module.register_state_dict_post_hook(lambda *args: None))
        elif kind == "load_pre":
            handles.append(module.register_load_state_dict_pre_hook(hook))
        elif kind == "load_post":
            handles.append(module.register_load_state_dict_post_hook(lambda *args: None))
        else:
            module.register_forward_hook(hook, with_kwargs=True, always_call=True).remove()


def strip_fixed_case() -> tuple:
    inner, handles = nn.Linear(3, 3), []
    model = nn.Sequential(nn.Sequential(nn.Sequential(inner, nn.Tanh())), nn.Linear(3, 3))
    grandchild = model[0][0]
    handles.append(
        inner.register_forward_hook(
            lambda module, args, kwargs, output: LOG.append("lambda '0.0.0'"), with_kwargs=True, always_call=True
        )
    )
    handles.append(inner.register_full_backward_hook(lambda module, *args: LOG.append("lambda '0.0.0'")))
    handles.append(inner.register_state_dict_pre_hook(lambda *args: None))
    handles.append(grandchild[1].register_backward_hook(lambda module, *args: LOG.append("lambda '0.0.1'")))
    handles.append(grandchild.register_forward_pre_hook(Recorder("0.0"), with_kwargs=True))
    return model, 3, handles


def strip_case(rng: random.Random, case: int) -> tuple:
    """(model, width, handles) of case number `case`, drawn from the case's seed."""
    if case == 1:
        return strip_fixed_case()
    width = rng.randint(2, 4)
    depth = 0 if case <= 4 else 1 if case <= 10 else rng.choice([1, 2, 2, 3])
    pool: list = []
    model = strip_build(rng, width, depth, pool)
    linears = [m for m in pool if type(m) is nn.Linear]
    if len(linears) >= 2 and rng.random() < 0.7:
        a, b = rng.sample(linears, 2)
        b.weight = a.weight  # tied
    handles: list = []
    for name, module in model.named_modules():
        if rng.random() < 0.15:
            module.eval()
        if rng.random() < 0.5:
            strip_add_hooks(name, module, rng, handles)
    return model, width, handles


def tensors(root: nn.Module) -> list:
    """(where, tensor) for every parameter and buffer of the tree, shared ones included."""
    found = []
    for path, module in walk(root):
        for registry in ("_parameters", "_buffers"):
            for key, value in vars(module)[registry].items():
                found.append((f"{path}.{key}" if path else key, value))
    return found


def exercise(model: nn.Module, x: torch.Tensor) -> list:
    """Forward and backward through the model: its output and the hooks that fired."""
    LOG.clear()
    x = x.clone().requires_grad_(True)
    out = model(x)
    out.sum().backward()
    return [data(out), list(LOG)]


def structure(model: nn.Module, clean: object) -> tuple[dict, dict]:
    """How the copy relates to the model: (its tree, modes and tensors, module by module and tensor by tensor, as
    rule 1 asks; each module's hook and flag tables and _is_full_backward_hook, as rule 2 asks). Where a module's
    children differ the walk stops: the tree differs as a whole."""
    modules: dict = {}
    hooks: dict = {}
    copy_of: dict = {}
    original_of: dict = {}
    model_modules = [module for _, module in walk(model)]
    pairs = [("", model, clean)]
    while pairs:
        path, orig, got = pairs.pop(0)
        place = path or "(the model)"
        if id(orig) in copy_of:
            modules[place] = {"the copy of a module met before": copy_of[id(orig)] is got}
            continue
        copy_of[id(orig)] = got
        distinct = id(got) not in original_of
        original_of[id(got)] = path
        state = vars(got)
        children, orig_children = state["_modules"], vars(orig)["_modules"]
        modules[place] = {
            "a copy of its own": distinct,
            "exactly its class": type(got) is type(orig),
            "not one of the model's modules": all(got is not module for module in model_modules),
            "the same training flag": state["training"] == vars(orig)["training"],
            "its children": plain(list(children)),
        }
        hooks[place] = {
            table: [kind_of(state.get(table)), len(state[table]) if hasattr(state.get(table), "__len__") else None]
            for table in TABLES
        } | {"_is_full_backward_hook": exact(state.get("_is_full_backward_hook", "missing"))}
        if list(children) != list(orig_children):
            return {"each module": modules}, hooks
        for key, child in orig_children.items():
            pairs.append((key if path == "" else f"{path}.{key}", child, children[key]))
    tree = {"each module": modules}
    expected, got = tensors(model), tensors(clean)
    tree["the tensors, by name"] = plain([where for where, _ in got])
    if [where for where, _ in got] != [where for where, _ in expected]:
        return tree, hooks
    copies: dict = {}
    storages = {value.untyped_storage().data_ptr() for _, value in expected if value is not None}
    each: dict = {}
    for (where, value), (_, other) in zip(expected, got, strict=True):
        if value is None or other is None:
            each[where] = {"None": other is None}
            continue
        each[where] = {
            "class": type(other).__name__,
            "a new tensor": other is not value,
            "memory of its own": other.untyped_storage().data_ptr() not in storages,
            "dtype": str(other.dtype),
            "values": data(other),
            "requires_grad": other.requires_grad,
            "shared where the model's is": copies.get(id(value), other) is other,
        }
        copies[id(value)] = other
    tree["each tensor"] = each
    tree["each copy is one tensor only"] = len({id(v) for v in copies.values()}) == len(copies)
    return tree, hooks


def strip_check(strip_hooks: object, model: nn.Module, width: int, handles: list, gen: torch.Generator) -> dict:
    """One case of strip_hooks with the submission, recorded step by step."""
    x = torch.randn(3, width, generator=gen)
    exercise(model, x)
    before = snapshot_all(model)
    seen: dict = {}
    try:
        clean = strip_hooks(model)
    except Exception as error:  # noqa: BLE001
        return {"strip_hooks": raised(error)}
    seen["copy"] = [clean is not model, type(clean) is type(model)]  # what it returns first (grader.rules)
    seen["model kept"] = snapshot_all(model) == before
    seen["model's values"] = [None if value is None else data(value) for _, value in tensors(model)]
    seen["rule 1: the copy's tree, modes and tensors"], seen["rule 2: the copy's hook and flag tables"] = structure(
        model, clean
    )
    LOG.clear()
    with torch.no_grad():
        got = clean(x)
    seen["copy's hooks"] = list(LOG)
    seen["what the copy computes"] = data(got)
    try:
        restored = pickle.loads(pickle.dumps(clean))
        seen["pickle"] = "works"
    except Exception as error:  # noqa: BLE001
        seen["pickle"] = raised(error)
        restored = None
    with torch.no_grad():
        seen["what the unpickled copy computes"] = None if restored is None else data(restored(x))
    seen["model after"] = exercise(model, x)
    for handle in handles:
        handle.remove()
    seen["model's tables after remove()"] = [
        [path, table] for path, module in walk(model) for table in TABLES if len(vars(module)[table])
    ]
    return by_rule(seen, STRIP_RULES)


STRIP_RULES = {"copy": 1, "copy's hooks": 2, "pickle": 2}  # what a seeded case of part 2 looks at, by its rule
STRIP_RULES |= dict.fromkeys(["model kept", "model's values", "model after", "model's tables after remove()"], 3)


def snapshot_all(root: nn.Module) -> list:
    """Every entry of vars() of every module: dicts by keys and ids, sets, flags and None by value."""
    state = []
    for path, module in walk(root):
        for name, value in vars(module).items():
            item = (path, name, type(value), id(value))
            if type(value) in (dict, OrderedDict):
                item += (tuple((key, id(entry)) for key, entry in value.items()),)
            elif type(value) is set:
                item += (frozenset(value),)
            elif type(value) is bool or value is None:
                item += (value,)
            state.append(item)
    return state


def clean_tables(clean: object) -> object:
    """Rule 2: each module of the copy, by path: each of its eleven tables' class and length, and its
    _is_full_backward_hook."""
    if not isinstance(clean, nn.Module):
        return ["not a module", kind_of(clean)]
    seen = []
    for path, module in walk(clean, lenient=True):
        state = vars(module)
        tables = [
            [kind_of(state.get(table)), len(state[table]) if hasattr(state.get(table), "__len__") else None]
            for table in TABLES
        ]
        seen.append([path, tables, exact(state.get("_is_full_backward_hook", "missing"))])
    return seen


def stripped(strip_hooks: object, build: object, observe: object) -> object:
    """Build a model (and its handles), strip it and observe the model and the copy."""
    model, handles = build()
    clean = strip_hooks(model)
    return observe(model, clean, handles)


def hooked_everywhere(model: nn.Module, *kinds: str) -> tuple:
    """A model with hooks of the given kinds on every module (each kind made a different way); its handles."""
    handles = []
    for name, module in model.named_modules():
        recorder = Recorder(name)
        for kind in kinds:
            if kind == "forward":
                handles.append(module.register_forward_hook(lambda module, args, output, name=name: LOG.append(name)))
            elif kind == "pre":
                handles.append(module.register_forward_pre_hook(recorder, with_kwargs=True))
            elif kind == "kwargs":
                handles.append(module.register_forward_hook(recorder.method, with_kwargs=True, always_call=True))
            elif kind == "full":
                handles.append(module.register_full_backward_hook(lambda module, gi, go: LOG.append("full")))
            elif kind == "old":
                handles.append(module.register_backward_hook(lambda module, gi, go: LOG.append("old")))
            elif kind == "backward pre":
                handles.append(module.register_full_backward_pre_hook(lambda module, go: LOG.append("pre")))
            elif kind == "state":
                handles.append(module.register_state_dict_pre_hook(lambda *args, **kwargs: None))
                handles.append(module.register_state_dict_post_hook(lambda *args, **kwargs: None))
                handles.append(module.register_load_state_dict_pre_hook(recorder))
                handles.append(module.register_load_state_dict_post_hook(lambda *args: None))
    return model, handles


def tied() -> nn.Module:
    """A Parameter used by two layers, and a submodule registered in two places."""
    first, second, shared = nn.Linear(3, 3), nn.Linear(3, 3), nn.Tanh()
    second.weight = first.weight
    model = nn.Sequential(first, shared, nn.Sequential(second, shared))
    return hooked_everywhere(model, "forward", "full")


def mixed_modes(root_training: bool) -> tuple:
    model = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1d(3)), nn.Dropout(0.2))
    model.train(root_training)
    model[1].train(not root_training)
    model[1][1].train(root_training)
    return hooked_everywhere(model, "forward")


def typed() -> tuple:
    """float64, a frozen weight, a Linear without bias, BatchNorm buffers that moved."""
    model = nn.Sequential(nn.Linear(3, 3, bias=False), nn.BatchNorm1d(3), nn.Linear(3, 2)).double()
    model[2].weight.requires_grad_(False)
    model(torch.randn(4, 3, dtype=torch.float64))
    return hooked_everywhere(model, "pre")


def update_copy(model: nn.Module, clean: nn.Module, handles: list) -> list:
    """Rule 1: add 1 to every parameter and buffer of the copy in place: the model's own values do not move."""
    with torch.no_grad():
        for _, value in tensors(clean):
            if value is not None:
                value.add_(1)
    return [None if value is None else data(value) for _, value in tensors(model)]


def doubling() -> tuple:
    """A forward hook that doubles the output, a pre-hook that adds 1 to the input, and logging hooks."""
    model, handles = hooked_everywhere(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)), "forward", "full")
    handles.append(model[2].register_forward_hook(lambda module, args, output: output * 2))
    handles.append(model[0].register_forward_pre_hook(lambda module, args: (args[0] + 1,)))
    return model, handles


def computes(model: nn.Module, clean: object, handles: list) -> list:
    """Rule 2: what the copy computes and which hooks it runs."""
    x = torch.randn(2, 3, requires_grad=True)
    LOG.clear()
    out = clean(x)
    out.sum().backward()
    return [data(out), list(LOG)]


def pickles(model: nn.Module, clean: object, handles: list) -> list:
    """Rule 2: the copy pickles, and the unpickled copy computes what the copy computes."""
    x = torch.randn(2, 3)
    restored = pickle.loads(pickle.dumps(clean))
    with torch.no_grad():
        return [kind_of(restored), data(restored(x)), data(clean(x))]


def kept(model: nn.Module, handles: list, strip_hooks: object) -> dict:
    """Rule 3: what strip_hooks changed in the model, by name: the entries of vars() (each module's slots and
    tables: "(the model)._forward_hooks", "0.1._forward_hooks"), the tensors that are other objects and those that
    hold other values ("0.weight")."""

    def state() -> tuple[dict, dict, dict]:
        slots = {f"{entry[0] or '(the model)'}.{entry[1]}": entry for entry in snapshot_all(model)}
        objects = {where: id(value) for where, value in tensors(model)}
        values = {where: None if value is None else data(value) for where, value in tensors(model)}
        return slots, objects, values

    before = state()
    strip_hooks(model)
    after = state()
    return {
        what: changed(old, new)
        for what, old, new in zip(
            ["the entries of vars() it changed", "the tensors now other objects", "the tensors now other values"],
            before,
            after,
            strict=True,
        )
    }


def still_hooked(model: nn.Module, handles: list, strip_hooks: object) -> list:
    """Rule 3: after strip_hooks, the model's hooks fire and its handles remove them."""
    strip_hooks(model)
    seen = exercise(model, torch.randn(2, 3))
    for handle in handles:
        handle.remove()
    return [seen, tables_left(model), [exact(vars(module)["_is_full_backward_hook"]) for module in model.modules()]]


def lambda_attribute(strip_hooks: object) -> dict:
    """Rule 1: a model with a lambda in a plain attribute (which pickle refuses, deepcopy keeps as it is): the copy's
    class and whether it holds that same function."""
    model = nn.Sequential(nn.Linear(2, 2))
    model.activation = activation = lambda x: x.relu()  # noqa: E731 - the lambda is the point of the case
    clean = strip_hooks(model)
    return {"the copy": kind_of(clean), "the same function in it": vars(clean).get("activation") is activation}


def strip_fixed(strip_hooks: object) -> list:
    """The fixed cases of strip_hooks, rule by rule (the contract of part 2)."""
    sh = strip_hooks

    def hand_built() -> tuple:
        model, _, handles = strip_fixed_case()
        return model, handles

    def copy_case(build: object) -> object:
        return fresh(lambda: stripped(sh, build, lambda model, clean, handles: structure(model, clean)[0]))

    def tables_case(build: object) -> object:
        return fresh(lambda: stripped(sh, build, lambda model, clean, handles: clean_tables(clean)))

    def model_case(build: object, observe: object) -> object:
        return fresh(lambda: observe(*build(), sh))

    def three_levels(*kinds: str) -> object:
        return lambda: hooked_everywhere(nn.Sequential(nn.Sequential(nn.Sequential(nn.Linear(3, 3)))), *kinds)

    return [
        fixed(1, "the copy of an nn.Linear is an nn.Linear", fresh(lambda: kind_of(sh(nn.Linear(2, 2))))),
        fixed(
            1,
            "a model holding a lambda as a plain attribute (not a hook) is copied, the lambda with it",
            fresh(lambda: lambda_attribute(sh)),
        ),
        fixed(1, "the hand-built three-level tree: names, classes, flags, values", copy_case(hand_built)),
        fixed(1, "a Parameter tied between two layers and a Tanh in two places stay shared", copy_case(tied)),
        fixed(
            1, "the root training, a child in eval mode, a grandchild training", copy_case(lambda: mixed_modes(True))
        ),
        fixed(
            1,
            "the root in eval mode, a child training, a grandchild in eval mode",
            copy_case(lambda: mixed_modes(False)),
        ),
        fixed(1, "float64, a frozen weight, no bias, BatchNorm buffers", copy_case(typed)),
        fixed(
            1,
            "an update of the copy's parameters and buffers does not reach the model",
            fresh(lambda: stripped(sh, typed, update_copy)),
        ),
        fixed(2, "the hand-built three-level tree: every table empty, the flag None", tables_case(hand_built)),
        fixed(
            2,
            "hooks on the root itself and on every level below",
            tables_case(three_levels("forward", "pre", "backward pre")),
        ),
        fixed(2, "full backward hooks (flag True) leave the flag None", tables_case(three_levels("full"))),
        fixed(2, "old-style backward hooks (flag False) leave the flag None", tables_case(three_levels("old"))),
        fixed(
            2, "with_kwargs and always_call hooks: the flag tables are emptied too", tables_case(three_levels("kwargs"))
        ),
        fixed(2, "state_dict and load_state_dict hooks are gone", tables_case(three_levels("state"))),
        fixed(2, "a Tanh with hooks registered in two places", tables_case(tied)),
        fixed(
            2,
            "the copy computes what the model computes without its hooks, and runs none of them",
            fresh(lambda: stripped(sh, doubling, computes)),
        ),
        fixed(
            2,
            "the copy of a model with lambda, closure, callable-object and bound-method hooks pickles",
            fresh(lambda: stripped(sh, three_levels("forward", "pre", "kwargs", "state", "full"), pickles)),
        ),
        fixed(
            3,
            "the model keeps its tables (same objects, same hooks), flags and tensors",
            model_case(three_levels("forward", "pre", "kwargs", "state", "full"), kept),
        ),
        fixed(3, "old-style backward hooks: the model keeps its flag False", model_case(three_levels("old"), kept)),
        fixed(3, "the model's hooks still fire and its handles still remove them", model_case(doubling, still_hooked)),
        fixed(3, "tied weights and a shared Tanh: the model keeps its tensors", model_case(tied, kept)),
    ]


# Part 2's input space: each kind of hook (every table, a removed one), each kind of callable as the hook (some
# pickle, some do not), where it is registered (the root, a child, a module registered twice, every module) and what
# else the model holds (tied weights, a module in eval mode, a frozen weight); each value once.
STRIP_CALLABLES = {
    "a lambda": lambda tag: lambda *args, **kwargs: LOG.append(tag),
    "a closure": lambda tag: logger(tag),
    "an object": Recorder,
    "a bound method": lambda tag: Recorder(tag).method,
    "a partial": lambda tag: functools.partial(lambda tag, *args, **kwargs: LOG.append(tag), tag),
}
STRIP_PLACES = {
    "a child": lambda model: [model[0]],
    "the root": lambda model: [model],
    "a module registered twice": lambda model: [model[2]],
    "every module": lambda model: list(model.modules()),
}
STRIP_MODELS = {
    "plain": lambda model: None,
    "tied weights": lambda model: setattr(model[1][0], "weight", model[0].weight),
    "a module in eval mode": lambda model: model[1].eval(),
    "a frozen weight": lambda model: model[0].weight.requires_grad_(False),
    "a lambda attribute": lambda model: setattr(model, "activation", lambda x: x.relu()),
}
STRIP_SPACE = {
    "hook": [*HOOK_KINDS, "a removed hook"],
    "hook is": list(STRIP_CALLABLES),
    "registered on": list(STRIP_PLACES),
    "model": list(STRIP_MODELS),
}


def strip_light(strip_hooks: object, model: nn.Module, handles: list) -> list:
    """A generated case, lighter than strip_check: whether the model is untouched, the copy's tables (clause 2; with
    them empty it pickles, which the seeded cases try), its structure and tensors (clause 1), what it computes and
    which hooks fire then."""
    before = snapshot_all(model)
    try:
        clean = strip_hooks(model)
    except Exception as error:  # noqa: BLE001
        return ["strip_hooks", raised(error)]
    seen = {
        "rule 3: the model is as before": snapshot_all(model) == before,
        "rule 2: the copy's hook and flag tables": clean_tables(clean),
    }
    if not isinstance(clean, nn.Module):
        return seen
    tables = own_tables(model, clean)
    seen = {  # what it returns first: a call that raises is charged to rule 1 (grader.rules)
        "rule 1: the copy's tree, modes and tensors": structure(model, clean)[0],
        **seen,
        "rule 2: each table a new one of its own": tables,
    }
    LOG.clear()
    with torch.no_grad():
        seen["what the copy computes"] = data(clean(torch.ones(2, 3)))
    seen["rule 2: the hooks that fire when the copy runs"] = list(LOG)
    return seen


def own_tables(model: nn.Module, clean: nn.Module) -> dict:
    """Rule 2: the copy's tables (each distinct module's eleven) are distinct objects, none of them the model's: a
    hook registered on the copy later lands in one table of one module."""
    theirs = {id(vars(module).get(table)) for module in model.modules() for table in TABLES}
    tables = [vars(module).get(table) for module in clean.modules() for table in TABLES]
    return {
        "no two the same object": len({id(table) for table in tables}) == len(tables),
        "none of them the model's": all(id(table) not in theirs for table in tables),
    }


def strip_arguments(point: dict) -> tuple:
    """A generated case's model (nn.Sequential(first, nn.Sequential(second, nn.Tanh()), the same Tanh)) and the
    handles of its hooks."""
    seed_torch(STRIP_SEED + 1)
    tanh = nn.Tanh()
    model = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 3), tanh), tanh)
    STRIP_MODELS[point["model"]](model)
    handles = []
    for number, module in enumerate(STRIP_PLACES[point["registered on"]](model)):
        hook = STRIP_CALLABLES[point["hook is"]](f"{point['hook is']} {number}")
        if point["hook"] == "a removed hook":
            register_hook(module, "forward hook", hook).remove()
        else:
            handles.append(register_hook(module, point["hook"], hook))
    return model, handles


def observe_strip_hidden(ns: dict) -> dict:
    strip_hooks = ns.get("strip_hooks")
    with quietly(), torch.random.fork_rng(devices=[]):
        cases = strip_fixed(strip_hooks)
        rng = random.Random(STRIP_SEED)
        seed_torch(STRIP_SEED)
        gen = torch.Generator().manual_seed(STRIP_SEED)
        drawn = [strip_case(rng, case) for case in range(1, STRIP_CASES + 1)]
        # Case 1 is the hand-built one, observed above as fixed cases; its input is still drawn, so that the seeded
        # cases get the same inputs as they always did.
        torch.randn(3, drawn[0][1], generator=gen)
        generated = [(point, "", (point,)) for point in every(STRIP_SPACE, most=1)]
        cases += spanned(generated, lambda point: strip_light(strip_hooks, *strip_arguments(point)))
        cases += seeded(drawn[1:], lambda *case: strip_check(strip_hooks, *case, gen))
    return labelled(*cases)


# ---------------------------------------------------------------------------------------------------------
# Part 3: GradNormMonitor (run in float64; the norms are compared with the observation's tolerances)
# ---------------------------------------------------------------------------------------------------------


def norm_values(values: list) -> list:
    """One module's norms as the observation compares them: floats within NORM_TOLERANCE, anything else by type."""
    return [approx(v, *NORM_TOLERANCE) if type(v) is float else kind_of(v) for v in values]


def norms_kept(norms: object) -> object:
    """What rules 4 and 5 ask of the norms after remove(): how many each module kept and, where that many, their
    values under rule 2's label (a norm computed wrongly is rule 2's mistake, whichever case shows it)."""
    if type(norms) is not dict:
        return ["not a dict", kind_of(norms)]
    kept = {}
    for name, values in norms.items():
        if type(values) is not list:
            kept[plain(name)] = kind_of(values)
        else:
            kept[plain(name)] = {f"{len(values)} kept": {"rule 2: their values": norm_values(values)}}
    return kept


# Relative, so that a vanishing gradient's norm (1e-8) is judged as closely as a large one's; the absolute part only
# forgives float64 rounding near 0. 1e-5, since the CPU kernels torch picks (ATEN_CPU_CAPABILITY) change these
# float64 norms by more than 1e-8 relatively (tests/test_portability.py); a norm rounded, nudged by an epsilon, or
# computed in float32 (inf for a gradient of 1e30) is still far outside it.
NORM_TOLERANCE = (1e-5, 1e-12)


def norms_seen(norms: object) -> object:
    """The norms as the observation compares them: plain floats within its tolerances, anything else by type."""
    if type(norms) is not dict:
        return ["not a dict", kind_of(norms)]
    seen = []
    for name, values in norms.items():
        if type(values) is not list:
            seen.append([plain(name), "not a list", kind_of(values)])
        else:
            seen.append([plain(name), norm_values(values)])
    return seen


MONITOR_SEED, MONITOR_CASES = 20130503, 12
ACTIVATIONS = {"ReLU": nn.ReLU, "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid, "GELU": nn.GELU, "LeakyReLU": nn.LeakyReLU}


def monitor_build(rng: random.Random, width: int, depth: int, pool: list) -> tuple:
    """A random chain starting at `width` features, drawn from the case's seed: (module, output width)."""
    kinds = ["linear", "linear", "activation", "activation"]
    squares = [m for m in pool if type(m) is nn.Linear and m.in_features == m.out_features == width]
    if squares:
        kinds += ["reuse"] * 2
    if depth > 0:
        kinds += ["sequential"] * 3
    kind = rng.choice(kinds)
    if kind == "reuse":
        return rng.choice(squares), width
    if kind == "sequential":
        parts = []
        for _ in range(rng.randint(1, 3)):
            part, width = monitor_build(rng, width, depth - 1, pool)
            parts.append(part)
        module = nn.Sequential(*parts)
    elif kind == "linear":
        out = width if rng.random() < 0.5 else rng.randint(1, 4)
        module = nn.Linear(width, out)
        width = out
    else:
        module = ACTIVATIONS[rng.choice(list(ACTIVATIONS))]()
    pool.append(module)
    return module, width


def monitor_own_hooks(model: nn.Module, rng: random.Random) -> None:
    for name, module in model.named_modules():
        if rng.random() > 0.3:
            continue
        if rng.random() < 0.7:
            module.register_full_backward_hook(
                lambda module, grad_input, grad_output, name=name: LOG.append(f"backward {name}")
            )
        else:
            module.register_forward_hook(lambda module, args, output, name=name: LOG.append(f"forward {name}"))


def monitor_fixed_case() -> tuple:
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.Tanh(), shared)
    shared.register_full_backward_hook(lambda module, grad_input, grad_output: LOG.append("backward '0'"))
    inputs = [
        (torch.randn(3, 2, requires_grad=True), torch.randn(3, 2), loss_kind)
        for loss_kind in ("weighted sum", "mean square", "tanh sum", "weighted sum")
    ]
    return model, ["2", "0", "1"], {"kind": "with", "inputs": inputs, "passes": 2}


def monitor_case(rng: random.Random, case: int) -> tuple:
    """(model, names, plan) of case number `case`, drawn from the case's seed."""
    if case == 1:
        return monitor_fixed_case()
    pool: list = []
    width = rng.randint(1, 4)
    first_out = rng.randint(1, 4)
    first = nn.Linear(width, first_out)
    pool.append(first)
    parts = [first]
    depth = 0 if case <= 3 else 1 if case <= 8 else rng.choice([1, 2, 2, 3])
    out = first_out
    for _ in range(rng.randint(0 if case <= 3 else 1, 3)):
        part, out = monitor_build(rng, out, depth, pool)
        parts.append(part)
    model = nn.Sequential(*parts)
    monitor_own_hooks(model, rng)
    kind = rng.choice(["with"] * 4 + ["manual", "body", "unknown"])
    names = draw_names(rng, model, kind, ["encoder", "9", "0.weight", "0.bias", "head", "1.", " "])
    batch = rng.randint(1, 3)
    requires_grad = rng.random() < 0.75
    inputs = [
        (
            torch.randn(batch, width).requires_grad_(requires_grad),
            torch.randn(batch, out),
            rng.choice(["weighted sum", "mean square", "tanh sum"]),
        )
        for _ in range(4)
    ]
    plan = {"kind": kind, "inputs": inputs, "passes": rng.randint(1, 3)}
    if kind == "body":
        plan["body_error"] = BodyError("the body raises on purpose")
    return model, names, plan


def in_float64(model: nn.Module, plan: dict) -> tuple:
    inputs = [(x.double().requires_grad_(x.requires_grad), w.double(), loss) for x, w, loss in plan["inputs"]]
    return model.double(), {**plan, "inputs": inputs}


def one_pass(model: nn.Module, x: torch.Tensor, weights: torch.Tensor, loss_kind: str) -> list:
    for parameter in model.parameters():
        parameter.grad = None
    x = x.detach().requires_grad_(x.requires_grad)
    out = model(x)
    if loss_kind == "weighted sum":
        loss = (out * weights).sum()
    elif loss_kind == "mean square":
        loss = out.pow(2).mean()
    else:
        loss = out.tanh().sum()
    loss.backward()
    return grads_data([p.grad for p in model.parameters()] + [x.grad])


def monitor_check(monitor_class: object, model: nn.Module, names: list, plan: dict) -> dict:
    """One case of the submission's GradNormMonitor on a model, recorded step by step."""
    before = snapshot(model)
    LOG.clear()
    seen: dict = {"inside": [], "grads": []}
    error, monitor = None, None
    inputs = plan["inputs"][: plan["passes"]]
    try:
        if plan["kind"] == "manual":
            monitor = monitor_class(model, names)
            seen["inside"].append(changes(before, model))
            for x, weights, loss_kind in inputs:
                seen["grads"].append(one_pass(model, x, weights, loss_kind))
            monitor.remove()
            monitor.remove()
        else:
            created = monitor_class(model, names)
            with created as monitor:
                seen["inside"].append(changes(before, model))
                for x, weights, loss_kind in inputs:
                    seen["grads"].append(one_pass(model, x, weights, loss_kind))
                if plan["kind"] == "body":
                    raise plan["body_error"]
    except (BodyError, KeyError) as caught:
        error = caught
    seen["left"] = differences(before, snapshot(model))
    if plan["kind"] == "unknown":
        return by_rule({"left": seen["left"], "error": error_seen(error, plan), "inside": seen["inside"]}, 1)
    if plan["kind"] == "body":
        seen["error"] = error_seen(error, plan)
    if plan["kind"] != "manual":
        seen["monitor"] = monitor is created
        monitor = created
        # the flags are remove()'s business (rule 4), once leaving the block removed the hooks at all (rule 5)
        tables = [line for line in seen["left"] if "_is_full_backward_hook" not in line]
        flags = [line for line in seen["left"] if "_is_full_backward_hook" in line]
        seen["left"] = {"the tables changed": tables} if tables else {"rule 4: the flags changed": flags}
    canonical = {id(module): name for name, module in model.named_modules()}
    every = dict(model.named_modules(remove_duplicate=False))
    keys = list(dict.fromkeys(canonical[id(every[name])] for name in names))  # rule 1's keys, in order
    counts = norm_counts(monitor.norms, keys)
    got = list(dict.keys(monitor.norms)) if isinstance(monitor.norms, dict) else kind_of(monitor.norms)
    # how many norms each key holds is rule 2's, once the keys are rule 1's
    seen["norm keys"] = {"those of rule 1": {"rule 2: the norms under each": counts}} if got == keys else plain(got)
    x, weights, loss_kind = plan["inputs"][-1]
    one_pass(model, x, weights, loss_kind)
    seen["log"] = list(LOG)
    seen["nothing added afterwards"] = norm_counts(monitor.norms, keys) == counts
    seen["the norms recorded"] = norms_seen(monitor.norms)
    ending = 4 if plan["kind"] == "manual" else 5  # remove() itself, or leaving a with block
    rules = {"inside": 1, "norm keys": 1, "grads": 3}
    return by_rule(
        seen, rules | {"left": ending, "log": ending, "monitor": ending, "error": 5, "nothing added afterwards": ending}
    )


def norm_counts(norms: object, keys: list[str]) -> object:
    """Rule 2's part of the norms that no other rule changes: under each of these keys, how many norms and whether
    each is a float."""
    if not isinstance(norms, dict):
        return None
    found = [[key, dict.get(norms, key)] for key in keys]
    return [[key, [len(got), all(type(v) is float for v in got)] if type(got) is list else None] for key, got in found]


class TwoOutputs(nn.Module):
    """Returns two tensors computed by one Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> tuple:
        return self.linear(x), self.linear(x) * 3


def chain() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()


def inputs(*shape: int, requires_grad: bool = True) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64, requires_grad=requires_grad)


def weighted(out: torch.Tensor) -> torch.Tensor:
    """A weighted sum of the output, its weights drawn when the loss is computed."""
    return (out * torch.randn(out.shape, dtype=out.dtype)).sum()


def monitor_starting(monitor_class: object, model: nn.Module, names: object) -> dict:
    """Rule 1: create a monitor: its norms as given, how each table changed (and the flag), or the exception raised
    and what it left behind."""
    before = snapshot(model)
    seen: dict = {"error": None}
    try:
        monitor = monitor_class(model, names)
        seen["norms"] = given(monitor.norms)
        seen["changes"] = changes(before, model)
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        seen["error"] = raised(error)
        seen["left"] = differences(before, snapshot(model))
    return seen


def norms_after(monitor_class: object, model: nn.Module, names: object, x: torch.Tensor, losses: list) -> object:
    """Rule 2: the norms a monitor records over one backward pass per loss."""
    monitor = monitor_class(model, names)
    for loss in losses:
        loss(model(x)).backward()
    return norms_seen(monitor.norms)


def monitored_gradients(monitor_class: object, model: nn.Module, names: object, x: torch.Tensor) -> list:
    """Rule 3: the gradients of every parameter and of the input under a monitor, and the model's own hooks' calls."""
    monitor_class(model, names)
    LOG.clear()
    grads = torch.autograd.grad(weighted(model(x)), list(model.parameters()) + [x], allow_unused=True)
    names = [name for name, _ in model.named_parameters()] + ["the input"]
    return {
        "each gradient": dict(zip(names, grads_data(grads), strict=True)),
        "the model's own hooks, as they ran": list(LOG),
    }


def monitor_hook_returns(monitor_class: object, model: nn.Module, names: object) -> dict:
    """Rule 3: what each backward hook the monitor registers returns when called as backward calls it, by the name
    of its module (a hook that hands back grad_input, even unchanged, returns something: rule 3 asks for None)."""
    before = {id(module): set(vars(module)["_backward_hooks"]) for module in model.modules()}
    monitor_class(model, names)
    returned = {}
    for name, module in model.named_modules():
        for key, hook in vars(module)["_backward_hooks"].items():
            if key not in before[id(module)]:
                grad_input = (torch.ones(2, 3, dtype=torch.float64),)
                grad_output = (torch.full((2, 3), 2.0, dtype=torch.float64),)
                returned.setdefault(name, []).append(type(hook(module, grad_input, grad_output)).__name__)
    return returned


def watched_first(monitor_class: object, model: nn.Module, x: torch.Tensor) -> list:
    """Rule 3: a monitor on the first layer only, fed with data that does not require grad: the parameters'
    gradients after one backward pass."""
    monitor_class(model, ["0"])
    return one_pass(model, x, torch.randn(3, 2, dtype=torch.float64), "weighted sum")


def removing(monitor_class: object, model: nn.Module, names: object, x: torch.Tensor) -> dict:
    """Rule 4: one backward pass, remove(), another pass, remove() again: the tables and flags left, the norms kept,
    the model's own hooks' calls, and whether an old-style backward hook is accepted afterwards."""
    before = snapshot(model)
    monitor = monitor_class(model, names)
    weighted(model(x)).backward()
    monitor.remove()
    seen: dict = {"left": differences(before, snapshot(model))}
    LOG.clear()
    weighted(model(x)).backward()
    seen["own hooks after"] = list(LOG)
    monitor.remove()
    seen["norms"] = norms_kept(monitor.norms)
    seen["left after a second remove()"] = differences(before, snapshot(model))
    hooked = [model.get_submodule(name) for name in names]
    seen["old-style hook accepted"] = [
        attempt(lambda module=module: module.register_backward_hook(lambda *args: None) and None) for module in hooked
    ]
    return seen


def flag_left_true(model: nn.Module, path: str) -> nn.Module:
    """A full backward hook registered on the module and removed: its flag stays True, its table is empty."""
    model.get_submodule(path).register_full_backward_hook(logger("removed")).remove()
    return model


def remove_again(monitor_class: object, x: torch.Tensor) -> dict:
    """Rule 4: remove(), then the user registers a full backward hook, then remove() again: the flag it leaves and
    whether the user's hook still fires."""
    model = chain()
    monitor = monitor_class(model, ["0"])
    weighted(model(x)).backward()
    monitor.remove()
    model[0].register_full_backward_hook(logger("registered between the two remove() calls"))
    monitor.remove()
    LOG.clear()
    weighted(model(x)).backward()
    return {
        "the flag after the second remove()": exact(vars(model[0])["_is_full_backward_hook"]),
        "the hooks that fire": list(LOG),
    }


def half_norms(monitor_class: object) -> object:
    """Rule 2: a float16 model whose gradient at the output is 300 everywhere: the norm as Tensor.norm() computes
    it (1200.0), where a sum of squares in float16 overflows to inf."""
    model = nn.Sequential(nn.Linear(4, 4)).half()
    monitor = monitor_class(model, ["0"])
    x = torch.ones(4, 4, dtype=torch.float16, requires_grad=True)
    (model(x) * 300).sum().backward()
    monitor.remove()
    return norms_seen(monitor.norms)


def in_with(monitor_class: object, model: nn.Module, names: object, x: torch.Tensor, body_raises: bool) -> dict:
    """Rule 5: a with block (one backward pass inside, then maybe an exception): what `as` gave, the exception
    that came out, the hook tables left (the flag is remove()'s business), the norms kept and after one more pass."""
    before = snapshot(model)
    body_error = BodyError("the body raises on purpose")
    monitor = monitor_class(model, names)
    seen: dict = {"error": None}
    try:
        with monitor as got:
            seen["as gives the monitor"] = got is monitor
            weighted(model(x)).backward()
            if body_raises:
                raise body_error
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        seen["error"] = error_seen(error, {"body_error": body_error})
    seen["tables left"] = [
        line for line in differences(before, snapshot(model)) if "_is_full_backward_hook" not in line
    ]
    seen["norms"] = norms_kept(monitor.norms)
    weighted(model(x)).backward()
    seen["norms after one more pass"] = norms_kept(monitor.norms)
    return seen


def monitor_fixed(monitor_class: object) -> list:
    """The fixed cases of GradNormMonitor, rule by rule (the contract of part 3), in float64."""
    mc = monitor_class

    def first() -> object:
        monitor = mc(nn.Sequential(nn.Linear(2, 2)), ["0"])
        monitor.remove()
        return kind_of(monitor.norms)

    def hand_built() -> list:
        model, names, plan = monitor_fixed_case()
        model, plan = in_float64(model, plan)
        mc(model, names)
        LOG.clear()
        seen = [one_pass(model, x, weights, loss_kind) for x, weights, loss_kind in plan["inputs"][: plan["passes"]]]
        return [seen, list(LOG)]

    def shared() -> nn.Module:
        return shared_chain(nn.Tanh()).double()

    def own_backward(model: nn.Module, path: str) -> nn.Module:
        model.get_submodule(path).register_full_backward_hook(lambda module, gi, go: LOG.append(f"backward {path}"))
        return model

    def parallel() -> nn.Module:
        return Parallel().double()

    def two_outputs() -> nn.Module:
        return TwoOutputs().double()

    return [
        fixed(1, "norms of a monitor on a one-layer model is a plain dict", fresh(first)),
        fixed(
            1,
            "names ['2', '1', '0'] of Sequential(shared, Tanh, shared): keys ['0', '1'], one full backward hook each",
            fresh(lambda: monitor_starting(mc, shared(), ["2", "1", "0"])),
        ),
        fixed(
            1,
            "a tuple of names repeating a module, and the model itself ('')",
            fresh(lambda: monitor_starting(mc, chain(), ("2", "", "2", "0"))),
        ),
        fixed(
            1,
            "an invalid name after two valid ones raises KeyError before any hook is registered",
            fresh(lambda: monitor_starting(mc, own_backward(chain(), "0"), ["0", "2", "head"])),
        ),
        fixed(
            1,
            "a parameter name ('0.bias') is not a module name: KeyError",
            fresh(lambda: monitor_starting(mc, chain(), ["1", "0.bias"])),
        ),
        fixed(
            2,
            "a Linear under a weighted-sum loss: the norm of grad_output[0]",
            fresh(lambda: norms_after(mc, chain(), ["2"], inputs(5, 3), [weighted])),
        ),
        fixed(
            2,
            "a 3-d gradient: the norm of all its elements together",
            fresh(lambda: norms_after(mc, nn.Sequential(nn.Linear(4, 3)).double(), ["0"], inputs(2, 5, 4), [weighted])),
        ),
        fixed(
            2,
            "a module called twice in parallel: two entries per pass, the last call first",
            fresh(lambda: norms_after(mc, parallel(), ["shared"], inputs(4, 2), [weighted])),
        ),
        fixed(
            2,
            "three backward passes of different losses add up",
            fresh(
                lambda: norms_after(
                    mc,
                    chain(),
                    ["0"],
                    inputs(3, 3),
                    [weighted, lambda out: out.pow(2).mean(), lambda out: out.sum()],
                )
            ),
        ),
        fixed(
            2,
            "the loss uses only the second output: grad_output[0] is None, recorded as 0.0",
            fresh(lambda: norms_after(mc, two_outputs(), [""], inputs(4, 3), [lambda out: weighted(out[1])])),
        ),
        fixed(
            2,
            "a float16 gradient whose squares overflow float16 (300 in each of 16 elements): its norm is 1200.0",
            fresh(lambda: half_norms(mc)),
        ),
        fixed(
            2,
            "a vanishing gradient (the loss scaled by 1e-8): its norm, judged relatively",
            fresh(lambda: norms_after(mc, chain(), ["0"], inputs(4, 3), [lambda out: weighted(out) * 1e-8])),
        ),
        fixed(
            2,
            "a zero gradient tensor (the loss scaled by 0): its norm is 0.0",
            fresh(lambda: norms_after(mc, chain(), ["2"], inputs(4, 3), [lambda out: weighted(out) * 0.0])),
        ),
        fixed(
            2,
            "an exploding float64 gradient (the loss scaled by 1e30): its norm in float64",
            fresh(lambda: norms_after(mc, chain(), ["0"], inputs(4, 3), [lambda out: weighted(out) * 1e30])),
        ),
        fixed(
            2,
            "the loss uses both outputs: only grad_output[0] counts",
            fresh(lambda: norms_after(mc, two_outputs(), [""], inputs(4, 3), [lambda out: weighted(out[0] + out[1])])),
        ),
        fixed(
            3,
            "every gradient, of the parameters and of the input, is as without the monitor",
            fresh(lambda: monitored_gradients(mc, chain(), ["2", "1"], inputs(4, 3))),
        ),
        fixed(
            3,
            "a module called twice and the model's own backward hook: gradients as without the monitor",
            fresh(lambda: monitored_gradients(mc, own_backward(shared(), "1"), ["2"], inputs(4, 2))),
        ),
        fixed(3, "the hand-built shared chain with its own backward hook: gradients as without", fresh(hand_built)),
        fixed(
            3,
            "each hook the monitor registers returns None when called (handing back grad_input returns something)",
            fresh(
                lambda: monitor_hook_returns(
                    mc, nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3)).double(), ["0", "1"]
                )
            ),
        ),
        fixed(
            3,
            "a hook on the first layer, fed with data that does not require grad: backward runs, gradients as without",
            fresh(lambda: watched_first(mc, chain(), inputs(3, 3, requires_grad=False))),
        ),
        fixed(
            4,
            "remove() empties the tables and puts back None on a module that had no backward hook",
            fresh(lambda: removing(mc, chain(), ["0"], inputs(3, 3))),
        ),
        fixed(
            4,
            "remove() puts back True on a module with its own full backward hook, which still fires",
            fresh(lambda: removing(mc, own_backward(chain(), "0"), ["0"], inputs(3, 3))),
        ),
        fixed(
            4,
            "the model's own forward and backward hooks on the module stay, in order, and still fire",
            fresh(lambda: removing(mc, with_own_hooks(chain(), "0"), ["0"], inputs(3, 3))),
        ),
        fixed(
            4,
            "remove() puts back True on a module whose own full backward hook was removed before (its table empty)",
            fresh(lambda: removing(mc, flag_left_true(chain(), "0"), ["0"], inputs(3, 3))),
        ),
        fixed(
            4,
            "a second remove() does nothing: a full backward hook registered after the first keeps its flag and fires",
            fresh(lambda: remove_again(mc, inputs(3, 3))),
        ),
        fixed(
            5,
            "the with statement gives the monitor itself; leaving the block removes its hooks",
            fresh(lambda: in_with(mc, own_backward(chain(), "2"), ["0"], inputs(3, 3), body_raises=False)),
        ),
        fixed(
            5,
            "the body raises: that same exception comes out and the hooks are removed",
            fresh(lambda: in_with(mc, own_backward(chain(), "0"), ["0"], inputs(3, 3), body_raises=True)),
        ),
    ]


class SecondOnly(nn.Module):
    """Passes on the second output of TwoOutputs: the gradient of its first output is None."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = TwoOutputs()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)[1]


# Part 3's input space: the names asked for (none, two, one name twice, one module under two names, every module, an
# unknown one), the model (a module run twice, a chain, a module whose first output the loss does not use), the hooks
# the watched module already has, its _is_full_backward_hook before (None, or True from a hook registered and
# removed), how the monitor is used (a with block, remove() twice, a body that raises) and how many backward passes;
# each value once.
MONITOR_MODELS = {  # the model (float64, 3 features in and out) and the name of the module watched
    "a module run twice": lambda: (nn.Sequential(*twice(nn.Linear(3, 3), nn.Tanh())), "0"),
    "a chain": lambda: (nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3)), "0"),
    "a first output unused": lambda: (nn.Sequential(nn.Linear(3, 3), SecondOnly()), "1.inner"),
}
MONITOR_NAMES = {
    "the watched one": lambda watched, model: [watched],
    "no name": lambda watched, model: [],
    "two names": lambda watched, model: [watched, "1"],
    "a name given twice": lambda watched, model: [watched, watched],
    "one module under two names": lambda watched, model: [watched, "2"],
    "every module": lambda watched, model: [name for name, _ in model.named_modules(remove_duplicate=False)],
    "an unknown name": lambda watched, model: [watched, "encoder"],
}
PASSES = {"one": 1, "two": 2}
MONITOR_OWN_HOOKS = {
    "none": None,
    "a full backward hook": "full backward hook",
    "a full backward pre-hook": "full backward pre-hook",
    "a forward hook": "forward hook",
}
MONITOR_SPACE = {
    "names": list(MONITOR_NAMES),
    "model": list(MONITOR_MODELS),
    "own hooks": list(MONITOR_OWN_HOOKS),
    "flag before": ["None", "True"],
    "used": ["a with block", "remove() twice", "a body that raises"],
    "passes": list(PASSES),
}


def twice(shared: nn.Module, between: nn.Module) -> list:
    """The modules of a chain that runs `shared` twice."""
    return [shared, between, shared]


def monitor_arguments(point: dict) -> tuple:
    """A generated case's model, names and plan (monitor_check), in float64, its numbers from a fixed seed."""
    seed_torch(MONITOR_SEED + 1)
    model, watched = MONITOR_MODELS[point["model"]]()
    module = model.get_submodule(watched)
    if point["flag before"] == "True":
        module.register_full_backward_hook(logger("removed")).remove()
    if MONITOR_OWN_HOOKS[point["own hooks"]] is not None:
        register_hook(module, MONITOR_OWN_HOOKS[point["own hooks"]], logger(point["own hooks"]))
    names = MONITOR_NAMES[point["names"]](watched, model)
    kind = {"a with block": "with", "remove() twice": "manual", "a body that raises": "body"}[point["used"]]
    plan = {"kind": "unknown" if point["names"] == "an unknown name" else kind, "passes": PASSES[point["passes"]]}
    plan["inputs"] = [(torch.randn(2, 3, requires_grad=True), torch.randn(2, 3), "weighted sum") for _ in range(3)]
    if plan["kind"] == "body":
        plan["body_error"] = BodyError("the body raises on purpose")
    model, plan = in_float64(model, plan)
    return model, names, plan


def observe_monitor_hidden(ns: dict) -> dict:
    monitor_class = ns.get("GradNormMonitor")
    with quietly(), torch.random.fork_rng(devices=[]):
        cases = monitor_fixed(monitor_class)
        rng = random.Random(MONITOR_SEED)
        seed_torch(MONITOR_SEED)
        drawn = []
        for case in range(1, MONITOR_CASES + 1):
            model, names, plan = monitor_case(rng, case)
            model, plan = in_float64(model, plan)
            drawn.append([model, names, plan])
        # Case 1 is the hand-built one, observed above as a fixed case; it is still built here, first, so that the
        # seeded cases draw the same numbers.
        generated = [(point, "", (point,)) for point in every(MONITOR_SPACE, most=1)]
        cases += spanned(generated, lambda point: monitor_check(monitor_class, *monitor_arguments(point)))
        cases += seeded(drawn[1:], lambda *case: monitor_check(monitor_class, *case))
    return labelled(*cases)


# hidden test cell -> {dimension of its generated cases: the values they take, plainest first} (grader.coverage).
SPACES = {
    "test_record_activations_hidden": RECORD_SPACE,
    "test_strip_hooks_hidden": STRIP_SPACE,
    "test_grad_norm_monitor_hidden": MONITOR_SPACE,
}

OBSERVERS = {
    "test_record_activations_hidden": whole(observe_record_hidden),
    "test_strip_hooks_hidden": whole(observe_strip_hidden),
    "test_grad_norm_monitor_hidden": whole(observe_monitor_hidden),
}

# hidden test cell -> {number of a rule of its part's contract, as the notebook numbers it: a short name}.
CLAUSES = {
    "test_record_activations_hidden": {
        1: "starting the block: names checked first, one hook per module, the result dict",
        2: "one forward hook per module, default options, after the module's own hooks",
        3: "what is recorded: detached tensors, nested tuples, every call",
        4: "the hook only watches: outputs, gradients and the model's hooks unchanged",
        5: "leaving the block, also by an exception: every table as before, the records kept",
    },
    "test_strip_hooks_hidden": {
        1: "a deep copy: same tree, modes, values; own memory; sharing kept",
        2: "no hook of any kind anywhere in the copy, so it computes without them and pickles",
        3: "the model is left untouched",
    },
    "test_grad_norm_monitor_hidden": {
        1: "the constructor: names checked first, one full backward hook per module, norms",
        2: "what is recorded: the norm of grad_output[0] as a float (0.0 when None), every call",
        3: "the hook only watches: every gradient unchanged",
        4: "remove(): hooks gone, flags put back, the model's own hooks kept, twice is fine",
        5: "a context manager: as gives the monitor, leaving the block removes, exceptions propagate",
    },
}
