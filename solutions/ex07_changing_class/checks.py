"""Trusted checks for ex07_changing_class: what export_plain_state_dict returns and leaves of each model, and what
materialize does to each model, on the models of each test cell (fixed and seeded cases), case
by case."""

from __future__ import annotations

from random import Random

import torch
import torch.nn.utils.parametrize as parametrize
from torch import nn

from grader.observing import data, every, fixed, labelled, plain, raised, seed_torch, seeded, single_thread, spanned


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


class Gain(nn.Module):
    """A parametrization with a parameter of its own: state_dict() holds it under parametrizations.<name>.0.gain."""

    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.tensor(3.0))

    def forward(self, x):
        return self.gain * x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)
        self.scale = nn.Parameter(torch.randn(3, 3))


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


def unchanged_after(export: object, model: nn.Module) -> tuple[dict, object, Exception | None]:
    """Call export(model): (what rule 4 asks of the model afterwards, what export returned, what it raised). A name
    that no longer computes counts as changed."""
    classes = [type(m).__name__ for _, m in model.named_modules(remove_duplicate=False)]
    flags = [bool(p.requires_grad) for _, p in model.named_parameters(remove_duplicate=False)]
    state = [(key, value.clone()) for key, value in model.state_dict().items()]
    computed = parametrized_values(model)
    result, error = None, None
    try:
        result = export(model)
    except Exception as caught:  # noqa: BLE001 - any failure of the submission is an observation
        error = caught
    state_after = list(model.state_dict().items())
    kept = []
    for module, name, before in computed:
        try:
            kept.append(torch.equal(getattr(module, name), before))
        except AttributeError:
            kept.append(False)
    return (
        {
            "every module keeps its class": [type(m).__name__ for _, m in model.named_modules(remove_duplicate=False)]
            == classes,
            "state_dict() keeps its keys, in order": [key for key, _ in state_after] == [key for key, _ in state],
            "state_dict() keeps its values": all(
                torch.equal(a, b) for (_, a), (_, b) in zip(state, state_after, strict=False)
            ),
            "every parametrized name computes what it did": all(kept),
            "every parameter keeps its requires_grad": [
                bool(p.requires_grad) for _, p in model.named_parameters(remove_duplicate=False)
            ]
            == flags,
        },
        result,
        error,
    )


def export_seeded(export: object, model: nn.Module) -> object:
    """One seeded case, each rule's part under its label; a call that raises stops the case there, unnamed."""
    kept, result, error = unchanged_after(export, model)
    if error is not None:
        return raised(error)
    return {
        "rule 1: the class of the result": kind(result),
        "rule 2: the keys, in order": exported_keys(result),
        "rule 3: each value": exported_values(result),
        **{f"rule 4: {what}": holds for what, holds in kept.items()},
    }


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


def exported_keys(result: object) -> object:
    """Rule 2: the keys of a result, in order (any dict, OrderedDict included: the class is rule 1's business)."""
    return [plain(key) for key in result] if isinstance(result, dict) else {"not a dict": type(result).__name__}


def exported_values(result: object) -> object:
    """Rule 3: each value by its key (their order is rule 2's business): its class, and a tensor's requires_grad,
    shape and values."""
    if not isinstance(result, dict):
        return {"not a dict": type(result).__name__}
    seen = {}
    for key, value in result.items():
        seen[key if type(key) is str else repr(key)] = {"class": type(value).__name__}
        if isinstance(value, torch.Tensor):
            seen[key if type(key) is str else repr(key)] |= {
                "requires_grad": bool(value.requires_grad),
                "dtype": str(value.dtype),
                "shape and values": data(value),
            }
    return seen


def other_dtypes() -> nn.Module:
    """The worked example in float64, beside a float16 buffer: a value keeps its dtype (rule 3)."""
    model = worked_example().double()
    model.register_buffer("low", torch.ones(2, dtype=torch.float16))
    return model


def worked_example() -> nn.Module:
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))
    parametrize.register_parametrization(model[0], "weight", Symmetric())
    parametrize.register_parametrization(model[2], "bias", Doubled())
    return model


def shared_twice() -> nn.Module:
    shared = nn.Linear(3, 3)
    parametrize.register_parametrization(shared, "weight", Scaled(2.0))
    return nn.Sequential(shared, nn.ReLU(), nn.Sequential(nn.Tanh(), shared))


def parametrized_root() -> nn.Module:
    model = nn.Linear(3, 3)
    parametrize.register_parametrization(model, "weight", Symmetric())
    parametrize.register_parametrization(model, "bias", Unchanged())
    return model


def stacked() -> nn.Module:
    """Two parametrizations on one name, whose order matters, and one that returns original itself."""
    model = nn.Sequential(nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3)))
    parametrize.register_parametrization(model[0][0], "weight", Scaled(-1.0))
    parametrize.register_parametrization(model[0][0], "weight", Symmetric())
    parametrize.register_parametrization(model[0][1], "weight", Unchanged())
    parametrize.register_parametrization(model[0][1], "weight", Scaled(0.5))
    parametrize.register_parametrization(model[0][1], "bias", Unchanged())
    return model


def in_the_middle() -> nn.Module:
    """A BatchNorm and a Block whose parametrized tensors come after other keys (buffers, a child's) in state_dict(),
    a buffer state_dict() leaves out (persistent=False), and a submodule named "original"."""
    norm, block = nn.BatchNorm1d(3), Block()
    norm(torch.randn(4, 3))
    block.register_buffer("mask", torch.ones(3), persistent=False)
    parametrize.register_parametrization(norm, "weight", Scaled(2.0))
    parametrize.register_parametrization(block, "scale", Symmetric())
    return nn.Sequential(norm, block, nn.ModuleDict({"original": nn.Linear(3, 3)}))


class Lookalike(nn.Module):
    """Not parametrized, yet with the key parametrizations.weight.original: a plain submodule named
    "parametrizations" holding one named "weight" with a parameter "original", next to a weight of its own."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))
        self.parametrizations = nn.Module()
        self.parametrizations.weight = nn.Module()
        self.parametrizations.weight.original = nn.Parameter(torch.randn(3))


def lookalike() -> nn.Module:
    """A Lookalike beside a parametrized Linear: only the Linear's original is renamed."""
    model = nn.Sequential(nn.Linear(3, 3), Lookalike())
    parametrize.register_parametrization(model[0], "weight", Scaled(2.0))
    return model


def frozen() -> nn.Module:
    """A parametrized Parameter that does not require grad, and a plain model around it."""
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    model[0].weight.requires_grad_(False)
    parametrize.register_parametrization(model[0], "weight", Scaled(2.0))
    return model


def kind(result: object) -> str:
    """Rule 1: the class of a result."""
    return f"{type(result).__module__}.{type(result).__qualname__}"


def export_fixed(export: object) -> list:
    """The fixed cases of export_plain_state_dict, rule by rule (the contract of part 1)."""

    def case(build: object, observe: object) -> object:
        def run() -> object:
            seed_torch(0)
            return observe(export(build()))

        return run

    def kept(build: object) -> object:
        def run() -> object:
            seed_torch(0)
            return unchanged_after(export, build())[0]

        return run

    def two_calls() -> list:
        seed_torch(0)
        model = worked_example()
        first, second = export(model), export(model)
        return {"the class of the first": kind(first), "the second is a new object": first is not second}

    return [
        fixed(1, "an nn.Linear gives exactly a dict", case(lambda: nn.Linear(2, 2), kind)),
        fixed(1, "the worked example gives exactly a dict", case(worked_example, kind)),
        fixed(
            1,
            "a model without any parametrization gives exactly a dict, not state_dict()'s OrderedDict",
            case(lambda: nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)), kind),
        ),
        fixed(1, "two calls give two new dicts", two_calls),
        fixed(2, "the worked example: each key renamed in place", case(worked_example, exported_keys)),
        fixed(2, "a parametrized module in two places: both prefixes renamed", case(shared_twice, exported_keys)),
        fixed(2, "parametrizations on the root module: no prefix", case(parametrized_root, exported_keys)),
        fixed(2, "two levels deep, two parametrizations on one name", case(stacked, exported_keys)),
        fixed(
            2,
            "a renamed key stays after its module's buffers and child's keys; a child named 'original' keeps its keys",
            case(in_the_middle, exported_keys),
        ),
        fixed(
            2,
            "a plain submodule named 'parametrizations' is no parametrization: its key stays as it is",
            case(lookalike, exported_keys),
        ),
        fixed(3, "the worked example: the symmetric weight, the doubled bias", case(worked_example, exported_values)),
        fixed(
            3,
            "two parametrizations on one name applied in turn; one that returns original itself",
            case(stacked, exported_values),
        ),
        fixed(3, "a parametrized module in two places: its value under both keys", case(shared_twice, exported_values)),
        fixed(3, "parametrizations on the root module", case(parametrized_root, exported_values)),
        fixed(
            3,
            "buffers and parameters next to parametrized ones; a non-persistent buffer left out",
            case(in_the_middle, exported_values),
        ),
        fixed(3, "a parametrized weight that does not require grad", case(frozen, exported_values)),
        fixed(3, "float64 and float16 values keep their dtype", case(other_dtypes, exported_values)),
        fixed(4, "the worked example keeps its classes, keys, values and what it computes", kept(worked_example)),
        fixed(4, "a parametrized module in two places stays parametrized", kept(shared_twice)),
        fixed(4, "the parametrized root stays parametrized", kept(parametrized_root)),
        fixed(4, "stacked parametrizations stay", kept(stacked)),
        fixed(4, "a BatchNorm and a Block keep their keys in their order", kept(in_the_middle)),
    ]


class Host(nn.Module):
    """What part 1's generated cases parametrize: a parameter, a buffer and a non-persistent buffer, each (3, 3),
    around a child whose keys come between them and the parametrizations' in state_dict()."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 3))
        self.register_buffer("stat", torch.randn(3, 3))
        self.register_buffer("mask", torch.randn(3, 3), persistent=False)
        self.inner = nn.Linear(3, 3)


# Part 1's input space: which registry the parametrized tensor sits in (persistent or not), what is registered on
# it, whether it requires grad, and where its module sits in the model (the root, a child, two levels down, or
# registered in two places); every pair of unusual values.
EXPORT_TARGETS = {
    "a parameter": ["weight"],
    "a buffer": ["stat"],
    "a non-persistent buffer": ["mask"],
    "a parameter and a buffer": ["weight", "stat"],
}
EXPORT_STACKS = {
    "symmetric": lambda: [Symmetric()],
    "returns original": lambda: [Unchanged()],
    "one with a parameter of its own": lambda: [Gain()],
    "scaled then symmetric": lambda: [Scaled(-1.0), Symmetric()],
}
EXPORT_PLACES = {
    "the root": lambda host: host,
    "a child": lambda host: nn.Sequential(nn.Linear(3, 3), host),
    "two levels down": lambda host: nn.Sequential(nn.Sequential(nn.ReLU(), host), nn.BatchNorm1d(3)),
    "two places": lambda host: nn.Sequential(host, nn.ReLU(), nn.Sequential(host)),
}
EXPORT_SPACE = {
    "parametrized": list(EXPORT_TARGETS),
    "parametrizations": list(EXPORT_STACKS),
    "requires grad": ["yes", "no"],
    "module at": list(EXPORT_PLACES),
}


def export_model(point: dict) -> nn.Module:
    """A generated case's model (seeded by the caller): a Host with the point's parametrizations, placed."""
    host = Host()
    host.weight.requires_grad_(point["requires grad"] == "yes")
    for name in EXPORT_TARGETS[point["parametrized"]]:
        for parametrization in EXPORT_STACKS[point["parametrizations"]]():
            parametrize.register_parametrization(host, name, parametrization)
    return EXPORT_PLACES[point["module at"]](host)


@single_thread
def observe_export_hidden(ns: dict) -> dict:
    export = ns.get("export_plain_state_dict")
    fixed_cases = export_fixed(export)
    rng = Random(EXPORT_SEED)
    seed_torch(EXPORT_SEED)
    cases = sorted((export_case(rng) for _ in range(EXPORT_CASES)), key=lambda case: case[0])

    def generated(point: dict) -> object:
        seed_torch(EXPORT_SEED)
        return export_seeded(export, export_model(point))

    space = [(point, "", (point,)) for point in every(EXPORT_SPACE, most=2)]
    return labelled(
        *fixed_cases, *spanned(space, generated), *seeded(cases, lambda _, model: export_seeded(export, model))
    )


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


def after_materialize(materialize: object, model: nn.Module, counter: Counting, *args: object) -> object:
    """One seeded case, materialize(model, *args): each rule's part under its label; a call that raises stops the
    case there, unnamed."""
    try:
        returned = materialize(model, *args)
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        return raised(error)
    return {
        "rule 1: the model itself comes back": returned is model,
        "rule 2: times the model was called": counter.calls,
        "rule 2: each module's class": per_module(model, lambda module: type(module).__name__),
        "rule 2: each parameter's shape": {name: shape_of(p) for name, p in model.named_parameters()},
        "rule 3: each module's training flag": per_module(model, lambda module: boolean(module.training)),
        "rule 2: every buffer shaped, then each buffer's values": buffer_values(model),
        "rule 3: the parameters and buffers that are inference tensors": inference_tensors(model),
    }


def per_module(model: nn.Module, value_of: object) -> dict:
    """value_of(module) for every module of the model, by its name ("(the model)" for the model itself)."""
    return {name or "(the model)": value_of(module) for name, module in model.named_modules()}


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


CALLS: list = []  # the fixed cases' models log each call of the model here (a hook on the root)


def counted(model: nn.Module) -> nn.Module:
    """The model, with a forward hook on its root that logs each call of model(*args)."""
    model.register_forward_hook(lambda module, args, output: CALLS.append(type(module).__name__))
    return model


def materialized(materialize: object, build: object, *shape: int) -> tuple:
    """Build a model (seeded), call materialize(model, x) on it: (model, what it returned, the calls it made)."""
    seed_torch(0)
    model = counted(build())
    x = torch.randn(*shape)
    CALLS.clear()
    returned = materialize(model, x)
    return model, returned, list(CALLS)


def worked() -> nn.Module:
    model = nn.Sequential(nn.LazyLinear(4), nn.LazyBatchNorm1d(), nn.Dropout(0.5))
    model[2].eval()
    return model


def ready() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.Dropout(0.5))


def deep() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.ReLU(), nn.Sequential(nn.LazyLinear(2))))


def loaded() -> nn.Module:
    """A lazy module whose parameters a checkpoint already materialized: still a LazyLinear until called."""
    lazy = nn.LazyLinear(2)
    lazy.load_state_dict(nn.Linear(3, 2).state_dict())
    return nn.Sequential(nn.Linear(3, 3), lazy)


def conv() -> nn.Module:
    return nn.Sequential(nn.LazyConv1d(2, 3), nn.LazyBatchNorm1d(), nn.ReLU(), nn.LazyConv1d(1, 2))


def mixed() -> nn.Module:
    """The root in eval mode, a child training, a grandchild in eval mode, a trained BatchNorm training."""
    norm = nn.BatchNorm1d(3)
    norm(torch.randn(5, 3))
    model = nn.Sequential(norm, nn.Sequential(nn.LazyLinear(3), nn.Sequential(nn.Dropout(0.5))), nn.LazyBatchNorm1d())
    model.eval()
    model[0].train()
    model[1].train()
    model[1][1].eval()
    return model


def training_norms() -> nn.Module:
    """Every module training: a trained BatchNorm and a lazy one, whose running statistics must not move."""
    norm = nn.BatchNorm1d(3, momentum=None)
    norm(torch.randn(5, 3))
    return nn.Sequential(norm, nn.LazyLinear(3), nn.LazyBatchNorm1d())


class Tally(nn.Module):
    """A module of one's own that counts, in a buffer, the batches it sees in training mode: neither a norm layer nor
    a Dropout, and a dry call in training mode moves its buffer all the same."""

    def __init__(self):
        super().__init__()
        self.register_buffer("batches", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        if self.training:
            self.batches += 1
        return x


def tallied() -> nn.Module:
    return nn.Sequential(nn.LazyLinear(3), Tally(), nn.ReLU())


def evaluating() -> nn.Module:
    return nn.Sequential(nn.LazyLinear(3), nn.Dropout(0.5), nn.LazyBatchNorm1d()).eval()


def returned_itself(materialize: object, build: object, *shape: int) -> bool:
    """Rule 1: what materialize returned is the model itself."""
    model, returned, _ = materialized(materialize, build, *shape)
    return returned is model


def called(materialize: object, build: object, *shape: int) -> dict:
    """Rule 2: the calls made, then each module's class and each parameter's and buffer's shape."""
    model, _, calls = materialized(materialize, build, *shape)
    return {
        "the calls of the model": calls,
        "each module's class": per_module(model, lambda module: type(module).__name__),
        "each parameter's shape": {name: shape_of(p) for name, p in model.named_parameters()},
        "each buffer's shape": {name: shape_of(b) for name, b in model.named_buffers()},
    }


def unchanged(materialize: object, build: object, *shape: int) -> dict:
    """Rule 3: each module's training flag and each buffer's values afterwards, and the inference tensors left."""
    model, _, _ = materialized(materialize, build, *shape)
    return {
        "each module's training flag": per_module(model, lambda module: boolean(module.training)),
        "each buffer's values": {name: values_of(b) for name, b in model.named_buffers()},
        "the parameters and buffers that are inference tensors": inference_tensors(model),
    }


def inference_tensors(model: nn.Module) -> list:
    """Rule 3: the names of the model's parameters and buffers that are inference tensors (made under
    torch.inference_mode(), which a later training step refuses)."""
    named = [*model.named_parameters(), *model.named_buffers()]
    return [name for name, tensor in named if tensor.is_inference()]


class DryCallError(Exception):
    """What the forward of Refuses raises."""


class Refuses(nn.Module):
    """A module whose forward raises DryCallError (after a lazy module before it has been materialized)."""

    def forward(self, x):
        raise DryCallError("Refuses.forward raises on purpose")


def refusing() -> nn.Module:
    """A lazy model in mixed modes whose dry call raises."""
    model = nn.Sequential(nn.LazyLinear(3), nn.Sequential(nn.Dropout(0.5), Refuses()))
    model[1][0].eval()
    return model


def when_the_call_raises(materialize: object) -> dict:
    """Rule 3: the dry call raises: the exception that comes out of materialize, and each module's training flag."""
    seed_torch(0)
    model = refusing()
    try:
        materialize(model, torch.randn(4, 2))
        error = None
    except Exception as caught:  # noqa: BLE001 - any failure of the submission is an observation
        error = caught
    return {
        "the exception": "DryCallError, unchanged" if type(error) is DryCallError else raised(error) if error else None,
        "each module's training flag": per_module(model, lambda module: boolean(module.training)),
    }


def unshaped(tensor: torch.Tensor) -> bool:
    """Whether a lazy module's parameter or buffer is one no call has shaped yet (it has no shape or values to read)."""
    return isinstance(tensor, nn.parameter.UninitializedTensorMixin)


def values_of(tensor: torch.Tensor) -> object:
    """A buffer's values, or "uninitialized" for one no call has shaped (which has none to read)."""
    return "uninitialized" if unshaped(tensor) else data(tensor)


def materialize_fixed(materialize: object) -> list:
    """The fixed cases of materialize, rule by rule (the contract of part 2)."""
    m = materialize

    def lazy_root() -> nn.Module:
        return nn.LazyLinear(3)

    return [
        fixed(1, "a lazy model: the model itself", lambda: returned_itself(m, worked, 8, 3)),
        fixed(1, "a model with nothing lazy: the model itself", lambda: returned_itself(m, ready, 4, 3)),
        fixed(1, "a model whose root is lazy: the model itself", lambda: returned_itself(m, lazy_root, 2, 5)),
        fixed(2, "the worked example: one call, a Linear [4, 3] and a BatchNorm1d", lambda: called(m, worked, 8, 3)),
        fixed(2, "nothing lazy: the model is not called", lambda: called(m, ready, 4, 3)),
        fixed(2, "a lazy module three levels down: one call", lambda: called(m, deep, 2, 3)),
        fixed(2, "the root itself lazy: one call", lambda: called(m, lazy_root, 2, 5)),
        fixed(
            2,
            "a lazy module a checkpoint already materialized is still lazy: one call makes it a Linear",
            lambda: called(m, loaded, 2, 3),
        ),
        fixed(2, "three lazy convolutions and norms: one call for all", lambda: called(m, conv, 2, 4, 6)),
        fixed(
            3, "the worked example: flags True, True, True, False, initial buffers", lambda: unchanged(m, worked, 8, 3)
        ),
        fixed(
            3,
            "mixed modes: the root in eval mode, a child and a trained BatchNorm training, a grandchild in eval mode",
            lambda: unchanged(m, mixed, 4, 3),
        ),
        fixed(
            3,
            "everything training: the running statistics of a trained and of a lazy BatchNorm do not move",
            lambda: unchanged(m, training_norms, 6, 3),
        ),
        fixed(
            3,
            "a module of one's own (no norm layer) counting its training batches in a buffer: the count stays",
            lambda: unchanged(m, tallied, 4, 3),
        ),
        fixed(3, "everything in eval mode stays in eval mode", lambda: unchanged(m, evaluating, 4, 2)),
        fixed(3, "nothing lazy, mixed modes: nothing changes", lambda: unchanged(m, mixed_ready, 4, 3)),
        fixed(
            3,
            "the dry call raises: the exception propagates unchanged and every flag is restored",
            lambda: when_the_call_raises(m),
        ),
    ]


def mixed_ready() -> nn.Module:
    model = ready()
    model[1](torch.randn(4, 3))
    model[1].eval()
    return model


def loaded_lazy() -> nn.Module:
    """A LazyLinear whose parameters a checkpoint already materialized: still lazy until called."""
    lazy = nn.LazyLinear(3)
    lazy.load_state_dict(nn.Linear(3, 3).state_dict())
    return lazy


class Deferred(nn.LazyLinear):
    """A lazy class of one's own, whose name does not say so: a LazyModuleMixin all the same."""


def trained_norm() -> nn.BatchNorm1d:
    """A BatchNorm1d whose running statistics are not the initial ones."""
    norm = nn.BatchNorm1d(3)
    norm(torch.randn(5, 3))
    return norm


# Part 2's input space: what is lazy (a LazyLinear, nothing, a LazyLinear loaded, a LazyBatchNorm1d, both, a lazy
# class of one's own), where it sits (the root, a child, two levels down, registered twice in one parent or under two
# parents), the modes of the model's modules, and what sits next to it (a trained BatchNorm1d, or a module of one's
# own that counts its training batches in a buffer); every pair of unusual values. A LazyLinear comes first, so that
# each pair of the other dimensions' values has a call to make and flags to restore. Every layer maps 3 features to 3.
MATERIALIZE_LAZY = {
    "LazyLinear": lambda: nn.LazyLinear(3),
    "nothing lazy": lambda: nn.Linear(3, 3),
    "a loaded LazyLinear": loaded_lazy,
    "LazyBatchNorm1d": nn.LazyBatchNorm1d,
    "LazyLinear and LazyBatchNorm1d": lambda: nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d()),
    "a lazy class of one's own": lambda: Deferred(3),
}
MATERIALIZE_PLACES = {
    "the root": lambda layer: layer,
    "a child": lambda layer: nn.Sequential(nn.Linear(3, 3), layer, nn.Dropout(0.5)),
    "two levels down": lambda layer: nn.Sequential(nn.Sequential(nn.ReLU(), nn.Sequential(layer))),
    "a shared module": lambda layer: nn.Sequential(layer, nn.ReLU(), layer),
    "under two parents": lambda layer: nn.Sequential(nn.Sequential(layer), nn.Sequential(nn.ReLU(), layer)),
}
MATERIALIZE_NEIGHBOURS = {
    "nothing": None,
    "a trained BatchNorm1d": trained_norm,
    "a module of one's own counting its training batches": Tally,
}
MATERIALIZE_SPACE = {
    "lazy": list(MATERIALIZE_LAZY),
    "lazy at": list(MATERIALIZE_PLACES),
    "modes": ["all training", "all evaluating", "mixed"],
    "next to": list(MATERIALIZE_NEIGHBOURS),
}


def materialize_model(point: dict) -> nn.Module:
    """A generated case's model (seeded by the caller)."""
    model = MATERIALIZE_PLACES[point["lazy at"]](MATERIALIZE_LAZY[point["lazy"]]())
    beside = MATERIALIZE_NEIGHBOURS[point["next to"]]
    if beside is not None:
        model = nn.Sequential(beside(), model)
    if point["modes"] != "all training":
        model.eval()
    if point["modes"] == "mixed":
        for number, module in enumerate(model.modules()):
            module.training = number % 2 == 0
    return model


def shape_of(tensor: torch.Tensor) -> object:
    """A tensor's shape, or "uninitialized" for a lazy module's parameter or buffer no call has shaped."""
    return "uninitialized" if unshaped(tensor) else list(tensor.shape)


def materialize_space_case(materialize: object, point: dict) -> dict:
    """A generated case, each rule's part under its label: whether the model came back, the calls made and each
    module's class and parameter's shape, each module's flag, and each buffer's values (once every buffer is shaped)."""
    model, returned, calls = materialized(materialize, lambda: materialize_model(point), 4, 3)
    return {
        "rule 1: the model itself comes back": returned is model,
        "rule 2: the calls of the model": calls,
        "rule 2: each module's class": [type(m).__name__ for m in model.modules()],
        "rule 2: each parameter's shape": [[name, shape_of(p)] for name, p in model.named_parameters()],
        "rule 3: each module's training flag": [boolean(m.training) for m in model.modules()],
        "rule 2: every buffer shaped, then each buffer's values": buffer_values(model),
        "rule 3: the parameters and buffers that are inference tensors": inference_tensors(model),
    }


def buffer_values(model: nn.Module) -> dict:
    """Rule 3 looks at the buffers' values once rule 2 has shaped them all: the names of those no call shaped (a lazy
    module not materialized breaks rule 2 alone), else each buffer's values under rule 3's label."""
    left = [name for name, b in model.named_buffers() if unshaped(b)]
    if left:
        return {"buffers no call shaped": left}
    return {"rule 3: each buffer's values": [[name, data(b)] for name, b in model.named_buffers()]}


@single_thread
def observe_materialize_hidden(ns: dict) -> dict:
    materialize = ns.get("materialize")

    def first():
        model = nn.Sequential(nn.LazyLinear(2))
        return materialize(model, torch.ones(1, 3)) is model

    fixed_cases = [
        fixed(1, "nn.Sequential(nn.LazyLinear(2)): the model itself", first),
        *materialize_fixed(materialize),
    ]
    rng = Random(MATERIALIZE_SEED)
    gen = torch.Generator().manual_seed(MATERIALIZE_SEED)
    seed_torch(MATERIALIZE_SEED)
    seeds = [rng.randrange(2**31) for _ in range(MATERIALIZE_CASES)]
    cases = sorted((materialize_case(seed) for seed in seeds), key=lambda case: case[0])

    def case(_, model, counter, width):
        x = torch.randn(4, width, generator=gen)  # drawn in the test's order whatever the call does
        return after_materialize(materialize, model, counter, x)

    space = [(point, "", (point,)) for point in every(MATERIALIZE_SPACE, most=2)]
    generated = spanned(space, lambda point: materialize_space_case(materialize, point))
    return labelled(*fixed_cases, *generated, *seeded(cases, case))


# hidden test cell -> {dimension of its generated cases: the values they take, plainest first} (grader.coverage).
SPACES = {"test_export_hidden": EXPORT_SPACE, "test_materialize_hidden": MATERIALIZE_SPACE}

OBSERVERS = {
    "test_export_hidden": observe_export_hidden,
    "test_materialize_hidden": observe_materialize_hidden,
}

# hidden test cell -> {number of a rule of its part's contract, as the notebook numbers it: a short name}.
CLAUSES = {
    "test_export_hidden": {
        1: "returns a new plain dict",
        2: "keys in state_dict() order, each original renamed in place, under every prefix",
        3: "values: the parametrized tensor for a renamed key, plain tensors without grad",
        4: "the model is not changed",
    },
    "test_materialize_hidden": {
        1: "returns the model itself",
        2: "one call exactly when a module is lazy, which materializes every lazy module",
        3: "nothing else changes: training flags and buffers",
    },
}
