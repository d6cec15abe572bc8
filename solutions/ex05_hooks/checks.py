"""Trusted checks for ex05_hooks: the cases of each test cell (the hidden cells' seeded cases rebuilt here) run on the
submission's record_activations, strip_hooks and GradNormMonitor, and what they record, return and leave behind."""

from __future__ import annotations

import contextlib
import functools
import pickle
import random
import warnings
from collections import OrderedDict

import torch
from torch import nn

from grader.observing import approx, attempt, data, exact, in_turn, kind_of, plain, raised, walk, whole

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


class BodyError(Exception):
    pass


class ForwardError(Exception):
    pass


def grads_data(grads: list) -> list:
    return [None if grad is None else data(grad) for grad in grads]


@contextlib.contextmanager
def quietly() -> object:
    """One thread (the tensors are tiny) and no warnings, as in the hidden test cells."""
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
    """The tables and flags that are not as they were (as the hidden cells word them)."""
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


def observe_record_visible(ns: dict) -> list:
    record_activations = ns.get("record_activations")
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = torch.randn(5, 4)
    seen: list = []

    def block():
        with record_activations(mlp, ["2", "0"]) as records:
            seen.append([len(mlp[0]._forward_hooks), len(mlp[2]._forward_hooks), len(mlp[1]._forward_hooks)])
            y = mlp(x)
        seen.append(kind_of(records))
        seen.append(plain(list(records)))
        seen.append([kind_of(records["0"]), len(records["0"])])
        first = records["0"][0]
        seen.append([isinstance(first, torch.Tensor), data(first)])
        seen.append([first.requires_grad, first.grad_fn is None])
        seen.append(torch.equal(records["2"][0], y))
        seen.append([y.requires_grad, y.grad_fn is not None])
        seen.append(tables_left(mlp))
        mlp(x)
        seen.append(len(records["0"]))
        return "done"

    def invalid():
        ran = []
        try:
            with record_activations(mlp, ["encoder"]):
                ran.append(True)
                raise AssertionError("the body must not run when a name is invalid")
        except Exception as error:  # noqa: BLE001
            return [ran, isinstance(error, KeyError), tables_left(mlp)]
        return [ran, "no exception"]

    return [*in_turn([[]], block), seen, *in_turn([[]], invalid)]


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
    """A random module mapping (batch, width) to (batch, width), drawn as the hidden cell draws it."""
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
    """The module names a hidden case asks for, drawn as the hidden cells draw them: some of the model's names, a
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
    """(model, names, plan) of case number `case`, drawn as the hidden cell draws it."""
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


def entry(value: object) -> object:
    """A recorded entry as the hidden cell compares it: a tensor by its graph flags, shape and values, a tuple item
    by item, anything else by type and value."""
    if isinstance(value, torch.Tensor):
        return ["tensor", not value.requires_grad and value.grad_fn is None, data(value)]
    if type(value) is tuple:
        return ["tuple", [entry(item) for item in value]]
    return ["value", exact(value)]


def records_seen(records: object) -> object:
    if type(records) is not dict:
        return ["not a dict", kind_of(records)]
    seen = []
    for name, entries in records.items():
        if type(entries) is not list:
            seen.append([plain(name), "not a list", kind_of(entries)])
        else:
            seen.append([plain(name), [entry(value) for value in entries]])
    return seen


def error_seen(error: BaseException | None, plan: dict) -> object:
    if error is None:
        return None
    if error is plan.get("body_error"):
        return "the body's own exception"
    return raised(error)


def record_play(record_activations: object, model: nn.Module, names: object, plan: dict) -> dict:
    """The hidden cell's play() with the submission: what the block gave, what the model did inside it."""
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
                    raise AssertionError("the output does not require grad")  # where the hidden cell stops
                grads = torch.autograd.grad((out * weights).sum(), params + [x], allow_unused=True)
                seen["grads"].append(grads_data(grads))
            if plan.get("raise_at") == len(plan["inputs"]):
                raise plan["body_error"]
    except (BodyError, ForwardError, KeyError) as error:
        seen["error"] = error_seen(error, plan)
    except AssertionError as error:
        seen["stopped"] = str(error)
    seen["log"] = list(LOG)
    seen["left"] = differences(before, snapshot(model))
    if plan["kind"] == "unknown":
        return {key: seen[key] for key in ("inside", "left", "error")} | {"body ran": records is not None}
    seen["records"] = records_seen(records)
    if type(records) is dict:
        lengths = {name: len(entries) for name, entries in records.items()}
        try:
            model(plan["inputs"][0][0])
        except ForwardError:
            pass
        seen["after the block"] = {name: len(entries) for name, entries in records.items()} == lengths
    return seen


def observe_record_hidden(ns: dict) -> list:
    record_activations = ns.get("record_activations")

    def first():
        with record_activations(nn.Sequential(nn.Linear(2, 2)), ["0"]) as records:
            return kind_of(records)

    seen = in_turn([[]], first)
    with quietly():
        rng = random.Random(RECORD_SEED)
        torch.manual_seed(RECORD_SEED)
        for case in range(1, RECORD_CASES + 1):  # drawn one at a time, as the hidden cell draws them
            seen += in_turn([record_case(rng, case)], lambda *case: record_play(record_activations, *case))
    return seen


# ---------------------------------------------------------------------------------------------------------
# Part 2: strip_hooks
# ---------------------------------------------------------------------------------------------------------


def observe_strip_visible(ns: dict) -> list:
    strip_hooks = ns.get("strip_hooks")
    calls: list = []
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    mlp.register_forward_pre_hook(lambda module, args: calls.append("root pre-hook"))
    mlp[0].register_forward_hook(lambda module, args, output: calls.append("'0' forward hook"))
    doubling = mlp[2].register_forward_hook(lambda module, args, output: output * 2)
    seen: list = []

    def steps():
        clean = strip_hooks(mlp)
        seen.append([kind_of(clean), clean is not mlp])
        seen.append(tables_left(clean))
        seen.append([exact(module._is_full_backward_hook) for module in clean.modules()])
        seen.append([clean[0].weight is not mlp[0].weight, data(clean[0].weight)])
        x = torch.randn(2, 3)
        calls.clear()
        with torch.no_grad():
            y = clean(x)
        seen.append([list(calls), data(y)])
        restored = pickle.loads(pickle.dumps(clean))
        seen.append(data(restored(x)))
        calls.clear()
        with torch.no_grad():
            doubled = mlp(x)
        seen.append([list(calls), data(doubled)])
        doubling.remove()
        seen.append(len(mlp[2]._forward_hooks))
        return "done"

    return [*in_turn([[]], steps), seen]


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
    """A random module of torch's own classes, drawn as the hidden cell draws it."""
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
    """(model, width, handles) of case number `case`, drawn as the hidden cell draws it."""
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


def structure(model: nn.Module, clean: object) -> list:
    """The hidden cell's check_structure, module by module and tensor by tensor, as observations."""
    seen: list = []
    copy_of: dict = {}
    original_of: dict = {}
    model_modules = [module for _, module in walk(model)]
    pairs = [("", model, clean)]
    while pairs:
        path, orig, got = pairs.pop(0)
        if id(orig) in copy_of:
            seen.append([path, "shared", copy_of[id(orig)] is got])
            continue
        copy_of[id(orig)] = got
        distinct = id(got) not in original_of
        original_of[id(got)] = path
        state = vars(got)
        children, orig_children = state["_modules"], vars(orig)["_modules"]
        seen.append(
            [
                path,
                distinct,
                type(got) is type(orig),
                all(got is not module for module in model_modules),
                state["training"] == vars(orig)["training"],
                [
                    [kind_of(state.get(table)), len(state[table]) if hasattr(state.get(table), "__len__") else None]
                    for table in TABLES
                ],
                exact(state.get("_is_full_backward_hook", "missing")),
                plain(list(children)),
            ]
        )
        if list(children) != list(orig_children):
            return seen
        for key, child in orig_children.items():
            pairs.append((key if path == "" else f"{path}.{key}", child, children[key]))
    expected, got = tensors(model), tensors(clean)
    seen.append(plain([where for where, _ in got]))
    if [where for where, _ in got] != [where for where, _ in expected]:
        return seen
    copies: dict = {}
    storages = {value.untyped_storage().data_ptr() for _, value in expected if value is not None}
    for (where, value), (_, other) in zip(expected, got, strict=True):
        if value is None or other is None:
            seen.append([where, other is None])
            continue
        seen.append(
            [
                where,
                type(other).__name__,
                other is not value,
                other.untyped_storage().data_ptr() not in storages,
                str(other.dtype),
                data(other),
                other.requires_grad,
                copies.get(id(value), other) is other,
            ]
        )
        copies[id(value)] = other
    seen.append(len({id(v) for v in copies.values()}) == len(copies))
    return seen


def strip_check(strip_hooks: object, model: nn.Module, width: int, handles: list, gen: torch.Generator) -> dict:
    """The hidden cell's check_case with the submission, recorded instead of compared."""
    x = torch.randn(3, width, generator=gen)
    exercise(model, x)
    before = snapshot_all(model)
    seen: dict = {}
    try:
        clean = strip_hooks(model)
    except Exception as error:  # noqa: BLE001
        return {"strip_hooks": raised(error)}
    seen["model kept"] = snapshot_all(model) == before
    seen["model's values"] = [None if value is None else data(value) for _, value in tensors(model)]
    seen["copy"] = [clean is not model, type(clean) is type(model)]
    seen["structure"] = structure(model, clean)
    LOG.clear()
    with torch.no_grad():
        got = clean(x)
    seen["copy's hooks"] = list(LOG)
    seen["copy's output"] = data(got)
    try:
        restored = pickle.loads(pickle.dumps(clean))
    except Exception as error:  # noqa: BLE001
        seen["pickle"] = raised(error)
        return seen
    with torch.no_grad():
        seen["unpickled output"] = data(restored(x))
    seen["model after"] = exercise(model, x)
    for handle in handles:
        handle.remove()
    seen["model's tables after remove()"] = [
        [path, table] for path, module in walk(model) for table in TABLES if len(vars(module)[table])
    ]
    return seen


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


def observe_strip_hidden(ns: dict) -> list:
    strip_hooks = ns.get("strip_hooks")
    seen = [attempt(lambda: kind_of(strip_hooks(nn.Linear(2, 2))))]
    with quietly():
        rng = random.Random(STRIP_SEED)
        torch.manual_seed(STRIP_SEED)
        gen = torch.Generator().manual_seed(STRIP_SEED)
        for case in range(1, STRIP_CASES + 1):
            model, width, handles = strip_case(rng, case)
            seen += in_turn([[model, width, handles]], lambda *case: strip_check(strip_hooks, *case, gen))
    return seen


# ---------------------------------------------------------------------------------------------------------
# Part 3: GradNormMonitor (run in float64; the norms are compared with the hidden test's tolerances)
# ---------------------------------------------------------------------------------------------------------


def norms_seen(norms: object) -> object:
    """The norms as the hidden cell compares them: plain floats within its tolerances, anything else by type."""
    if type(norms) is not dict:
        return ["not a dict", kind_of(norms)]
    seen = []
    for name, values in norms.items():
        if type(values) is not list:
            seen.append([plain(name), "not a list", kind_of(values)])
        else:
            seen.append([plain(name), [approx(v, 1e-5, 1e-6) if type(v) is float else kind_of(v) for v in values]])
    return seen


def observe_monitor_visible(ns: dict) -> list:
    monitor_class = ns.get("GradNormMonitor")
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)).double()
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    seen: list = []

    def steps():
        with monitor_class(mlp, ["2", "1"]) as monitor:
            seen.append(isinstance(monitor, monitor_class))
            seen.append([len(mlp[1]._backward_hooks), len(mlp[2]._backward_hooks)])
            seen.append(exact(mlp[1]._is_full_backward_hook))
            mlp(x).sum().backward()
        norms = monitor.norms
        seen.append([kind_of(norms), plain(list(norms))])
        seen.append([kind_of(norms["2"]), len(norms["2"])])
        last = norms["2"][0]
        seen.append(approx(last, abs_tol=1e-6) if type(last) is float else kind_of(last))
        seen.append(approx(float(norms["1"][0]), abs_tol=1e-5))  # only its distance to the true norm is checked
        seen.append(tables_left(mlp))
        mlp(x).sum().backward()
        seen.append(len(norms["2"]))
        return "done"

    return [*in_turn([[]], steps), seen]


MONITOR_SEED, MONITOR_CASES = 20130503, 12
ACTIVATIONS = {"ReLU": nn.ReLU, "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid, "GELU": nn.GELU, "LeakyReLU": nn.LeakyReLU}


def monitor_build(rng: random.Random, width: int, depth: int, pool: list) -> tuple:
    """A random chain starting at `width` features, drawn as the hidden cell draws it: (module, output width)."""
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
    """(model, names, plan) of case number `case`, drawn as the hidden cell draws it."""
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
    """The hidden cell's monitored() with the submission, recorded instead of compared."""
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
            with monitor_class(model, names) as monitor:
                seen["inside"].append(changes(before, model))
                for x, weights, loss_kind in inputs:
                    seen["grads"].append(one_pass(model, x, weights, loss_kind))
                if plan["kind"] == "body":
                    raise plan["body_error"]
    except (BodyError, KeyError) as caught:
        error = caught
    seen["left"] = differences(before, snapshot(model))
    if plan["kind"] == "unknown":
        return {"left": seen["left"], "error": error_seen(error, plan), "inside": seen["inside"]}
    if plan["kind"] == "body":
        seen["error"] = error_seen(error, plan)
    seen["monitor"] = isinstance(monitor, monitor_class)
    x, weights, loss_kind = plan["inputs"][-1]
    one_pass(model, x, weights, loss_kind)
    seen["log"] = list(LOG)
    seen["norms"] = norms_seen(monitor.norms)
    return seen


def observe_monitor_hidden(ns: dict) -> list:
    monitor_class = ns.get("GradNormMonitor")

    def first():
        monitor = monitor_class(nn.Sequential(nn.Linear(2, 2)), ["0"])
        monitor.remove()
        return kind_of(monitor.norms)

    seen = in_turn([[]], first)
    with quietly():
        rng = random.Random(MONITOR_SEED)
        torch.manual_seed(MONITOR_SEED)
        for case in range(1, MONITOR_CASES + 1):
            model, names, plan = monitor_case(rng, case)
            model, plan = in_float64(model, plan)
            seen += in_turn([[model, names, plan]], lambda *case: monitor_check(monitor_class, *case))
    return seen


OBSERVERS = {
    "test_record_activations_visible": whole(observe_record_visible),
    "test_record_activations_hidden": whole(observe_record_hidden),
    "test_strip_hooks_visible": whole(observe_strip_visible),
    "test_strip_hooks_hidden": whole(observe_strip_hidden),
    "test_grad_norm_monitor_visible": whole(observe_monitor_visible),
    "test_grad_norm_monitor_hidden": whole(observe_monitor_hidden),
}
