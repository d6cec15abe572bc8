"""Trusted checks for ex04_persistence: what migrate_state_dict and explain_incompatibility return and change on the
checkpoints of each test cell (fixed and seeded cases), recorded case by case."""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable

import torch
from torch import nn

from grader.observing import changed, every, fixed, kind_of, labelled, numbers, plain, seed_torch, seeded, spanned


def strict_load(model: nn.Module, checkpoint: object, keys: list) -> list:
    """Load strictly; when a RuntimeError stops it, whether its message names each of keys ("key")."""
    try:
        model.load_state_dict(checkpoint)
    except Exception as error:  # noqa: BLE001
        if not isinstance(error, RuntimeError):
            return ["raises", False]
        return ["raises", True, [f'"{key}"' in str(error) for key in keys]]
    return ["loads"]


# ---------------------------------------------------------------------------------------------------------
# Part 1: migrate_state_dict
# ---------------------------------------------------------------------------------------------------------


MIGRATE_SEED, MIGRATE_CASES = 20130404, 16
CHILD_NAMES = ["enc", "dec", "head", "body", "norm", "stats", "pre"]
UNKNOWN_NAMES = ["bogus", "running_var", "mean_sq", "count", "scale_old"]


def migrate_spec(rng: random.Random, depth: int, with_standardizer: bool) -> tuple:
    if depth == 0:
        kind = "std" if with_standardizer else rng.choice(["std", "linear", "norm"])
        if kind == "std":
            return ("std", rng.randint(1, 4))
        if kind == "linear":
            return ("linear", rng.randint(1, 3), rng.randint(1, 3), rng.random() < 0.7)
        return ("norm", rng.randint(1, 3))
    children = [migrate_spec(rng, depth - 1, with_standardizer)]
    children += [migrate_spec(rng, rng.randint(0, depth - 1), False) for _ in range(rng.randint(0, 2))]
    rng.shuffle(children)
    if rng.random() < 0.5:
        return ("seq", children)
    return ("dict", list(zip(rng.sample(CHILD_NAMES, len(children)), children, strict=True)))


def entries(spec: tuple) -> object:
    return enumerate(spec[1]) if spec[0] == "seq" else spec[1]


def leaves(spec: tuple, prefix: str = "") -> object:
    if spec[0] in ("seq", "dict"):
        for name, child in entries(spec):
            yield from leaves(child, f"{prefix}{name}.")
    else:
        yield prefix, spec


def migrate_build(spec: tuple, release_at: Callable[[str], type], prefix: str = "") -> nn.Module:
    kind = spec[0]
    if kind == "seq":
        return nn.Sequential(*[migrate_build(child, release_at, f"{prefix}{i}.") for i, child in entries(spec)])
    if kind == "dict":
        return nn.ModuleDict(
            {name: migrate_build(child, release_at, f"{prefix}{name}.") for name, child in entries(spec)}
        )
    if kind == "std":
        return release_at(prefix)(spec[1])
    if kind == "linear":
        return nn.Linear(spec[1], spec[2], bias=spec[3])
    return nn.BatchNorm1d(spec[1])


def fill(model: nn.Module, gen: torch.Generator) -> None:
    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            if tensor.is_floating_point():
                tensor.copy_(torch.randn(tensor.shape, generator=gen))
            else:
                tensor.copy_(torch.randint(0, 1000, tensor.shape, generator=gen))


def migrate_case(rng: random.Random) -> dict:
    depth = rng.choice([0, 1, 1, 2, 2, 3, 3])
    spec = migrate_spec(rng, depth, True)
    all_leaves = list(leaves(spec))
    prefixes = [prefix for prefix, leaf in all_leaves if leaf[0] == "std"]
    versions = {prefix: rng.choice([1, 2, 3]) for prefix in prefixes}
    metadata = rng.choice(["kept", "kept", "kept", "dict", "OrderedDict", "partly lost"])
    if metadata == "kept":
        unversioned = []
    elif metadata == "partly lost":
        unversioned = rng.sample(prefixes, rng.randint(1, len(prefixes)))
    else:
        unversioned = list(prefixes)
    unknown = None
    if rng.random() < 0.35:
        if rng.random() < 0.8:
            prefix = rng.choice(prefixes)
            names = list(UNKNOWN_NAMES)
            if prefix not in unversioned and versions[prefix] >= 2:
                names += ["running_mean"] * 4
            if prefix not in unversioned and versions[prefix] == 3:
                names += ["steps"] * 4
            unknown = prefix + rng.choice(names)
        else:
            unknown = rng.choice([prefix for prefix, _ in all_leaves] + [""]) + "bogus"
    drop = (rng.random() < 0.8, rng.random()) if rng.random() < 0.25 else None
    size = (depth, len(all_leaves), (unknown is not None) + (drop is not None), metadata != "kept")
    return {
        "spec": spec,
        "versions": versions,
        "metadata": metadata,
        "unversioned": unversioned,
        "unknown": unknown,
        "drop": drop,
        "seed": rng.randrange(2**31),
        "size": size,
    }


def migrate_hand_made() -> list:
    spec = ("dict", [("enc", ("std", 3)), ("head", ("seq", [("linear", 3, 2, True), ("std", 2)]))])
    versions = {"enc.": 3, "head.1.": 2}
    return [
        {
            "spec": spec,
            "versions": versions,
            "metadata": "kept",
            "unversioned": [],
            "unknown": unknown,
            "drop": None,
            "seed": MIGRATE_SEED + number,
            "size": (2, 3, 1, False),
        }
        for number, unknown in enumerate(["enc.steps", "head.1.running_mean"])
    ]


def checkpoint_of(case: dict, releases: dict) -> object:
    gen = torch.Generator().manual_seed(case["seed"])
    source = migrate_build(case["spec"], lambda prefix: releases[case["versions"][prefix]])
    fill(source, gen)
    checkpoint = source.state_dict()
    if case["metadata"] == "dict":
        checkpoint = dict(checkpoint)
    elif case["metadata"] == "OrderedDict":
        checkpoint = OrderedDict(checkpoint)
    elif case["metadata"] == "partly lost":
        metadata = OrderedDict(checkpoint._metadata)
        for prefix in case["unversioned"]:
            del metadata[prefix[:-1]]
        checkpoint._metadata = metadata
    if case["drop"] is not None:
        prefer_standardizer, where = case["drop"]
        keys = [key for key in checkpoint if any(key.startswith(p) for p in case["versions"])]
        keys = keys if prefer_standardizer and keys else list(checkpoint)
        del checkpoint[keys[int(where * len(keys))]]
    if case["unknown"] is not None and case["unknown"] not in checkpoint:
        checkpoint[case["unknown"]] = torch.randn(2, generator=gen)
    return checkpoint


class OrderedDictSubclass(OrderedDict):
    """A checkpoint of a class derived from OrderedDict (rule 6: the result is still exactly a dict or an
    OrderedDict)."""


class DictSubclass(dict):
    """A checkpoint of a class derived from dict."""


CHECKPOINT_CLASSES = {  # a checkpoint's class (rule 6 asks for a result of exactly dict or OrderedDict whatever it is)
    "an OrderedDict with _metadata": OrderedDict,
    "a dict": dict,
    "an OrderedDict subclass with _metadata": OrderedDictSubclass,
    "a dict subclass": DictSubclass,
}


def as_class(checkpoint: OrderedDict, kind: type) -> dict:
    """checkpoint's entries in a new checkpoint of class kind, its _metadata kept where kind is an OrderedDict."""
    converted = kind(checkpoint)
    if issubclass(kind, OrderedDict) and hasattr(checkpoint, "_metadata"):
        converted._metadata = checkpoint._metadata
    return converted


def checkpoint_record(checkpoint: object) -> dict:
    """What rule 5 keeps of a checkpoint, by name: its class, its keys in order, each value (the object and its
    version counter) and each _metadata entry's fields."""
    record: dict = {"its class": kind_of(checkpoint), "its keys in order": [plain(key) for key in checkpoint]}
    record |= {f"the value at {key!r}": (id(value), value._version) for key, value in checkpoint.items()}
    metadata = getattr(checkpoint, "_metadata", None)
    record["its _metadata object"] = id(metadata)
    for where, entry in (metadata or {}).items():
        fields = entry.items() if isinstance(entry, dict) else [("itself", entry)]
        record |= {f"_metadata[{where!r}][{field!r}]": plain(value) for field, value in fields}
    return record


def checkpoint_changes(before: dict, after: object) -> list:
    """What a call changed in a checkpoint (checkpoint_record before it, the checkpoint after): each record by name,
    a _metadata field with its value before and after; [] when nothing changed."""
    now = checkpoint_record(after)
    return [
        f"{name} changed from {before.get(name)!r} to {now.get(name)!r}" if name.startswith("_metadata[") else name
        for name in changed(before, now)
    ]


def checkpoint_snapshot(checkpoint: object) -> tuple:
    metadata = getattr(checkpoint, "_metadata", None)
    return (
        type(checkpoint),
        [(key, id(value), value._version) for key, value in checkpoint.items()],
        id(metadata),
        repr(metadata),
    )


def smallest_first(
    cases: list, fixed_cases: Callable[[], list], case: Callable[[dict], object], space: Callable[[], list]
) -> dict:
    """A hidden test's observation on one thread: the fixed cases of each rule (fixed_cases()), then the cases of its
    input space (space(), observing.spanned), then case(item) for each seeded case, smallest first."""
    cases.sort(key=lambda item: item["size"])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            seed_torch(0)
            found = fixed_cases()
            generated = space()
        return labelled(*found, *generated, *seeded([[item] for item in cases], case))
    finally:
        torch.set_num_threads(threads)


def result_view(got: object, keys: Callable[[object], bool]) -> object:
    """The entries of a result of migrate_state_dict that a rule looks at, by value, sorted by key: whatever dict
    class it is (rule 6 judges that) and whatever object each value is (rule 4 judges that)."""
    if not isinstance(got, dict):
        return {"not a dict": type(got).__name__}
    return sorted(([plain(key), numbers(value)] for key, value in got.items() if keys(key)), key=repr)


def handled(prefix: str, version: object) -> set:
    """The keys that rules 1 and 2 settle for a Standardizer at prefix with version."""
    keys = set()
    if version in (1, None):
        keys |= {prefix + "mean", prefix + "running_mean"}
    if version in (1, 2, None):
        keys.add(prefix + "steps")
    return keys


def migrate_fixed(migrate_state_dict: object, releases: dict) -> list:
    def checkpoint(layout, seed=0):
        """A checkpoint with recognisable values: layout is [(prefix, release or "linear"/"norm"), ...]."""
        parts = []
        for prefix, kind in layout:
            module = nn.Linear(2, 3) if kind == "linear" else nn.BatchNorm1d(3) if kind == "norm" else releases[kind](3)
            parts.append((prefix, module.state_dict()))
        gen = torch.Generator().manual_seed(seed)
        result = OrderedDict()
        result._metadata = OrderedDict()
        for prefix, state in parts:
            for key, value in state.items():
                if value.is_floating_point():
                    result[prefix + key] = torch.randn(value.shape, generator=gen)
                else:
                    result[prefix + key] = torch.randint(0, 1000, value.shape, generator=gen)
            for key, entry in state._metadata.items():
                result._metadata[(prefix + key).rstrip(".") if key else prefix[:-1]] = entry
        return result

    def edited(layout, prefix, version, drop=(), add=(), kind=OrderedDict):
        state = checkpoint(layout)
        for key in drop:
            del state[key]
        for key in add:
            state[key] = torch.full((2,), 7.0)
        return as_class(state, kind), prefix, version

    def rename(*case):
        def run():
            state, prefix, version = edited(*case)
            got = migrate_state_dict(state, prefix, version)
            return result_view(got, lambda key: key in (prefix + "mean", prefix + "running_mean"))

        return run

    def steps(*case):
        def run():
            state, prefix, version = edited(*case)
            got = migrate_state_dict(state, prefix, version)
            return isinstance(got, dict) and prefix + "steps" in got

        return run

    def others(*case):
        def run():
            state, prefix, version = edited(*case)
            got = migrate_state_dict(state, prefix, version)
            settled = handled(prefix, version)
            return result_view(got, lambda key: key not in settled)

        return run

    def same_objects(*case):
        def run():
            state, prefix, version = edited(*case)
            values = {id(value) for value in state.values()}
            got = migrate_state_dict(state, prefix, version)
            return isinstance(got, dict) and all(id(value) in values for value in dict.values(got))

        return run

    def untouched(*case):
        def run():
            state, prefix, version = edited(*case)
            before = checkpoint_record(state)
            migrate_state_dict(state, prefix, version)
            return {"what changed in the checkpoint": checkpoint_changes(before, state)}

        return run

    def new_dict(*case):
        def run():
            state, prefix, version = edited(*case)
            got = migrate_state_dict(state, prefix, version)
            return {"a dict or an OrderedDict": exactly_dict(got), "a new one": got is not state}

        return run

    v1, v2, v3 = [("", 1)], [("", 2)], [("", 3)]
    nested = [("0.", "linear"), ("1.norm.", 1), ("2.", "norm")]
    beside = [("a.", 1), ("b.", 2), ("c.", "norm")]
    return [
        fixed(1, "version 1, the model itself: running_mean becomes mean", rename(v1, "", 1)),
        fixed(1, "version 1 at prefix '1.norm.' next to a Linear and a BatchNorm1d", rename(nested, "1.norm.", 1)),
        fixed(1, "version None at prefix '1.norm.': running_mean becomes mean", rename(nested, "1.norm.", None)),
        fixed(1, "version None, a plain dict without _metadata", rename(v1, "", None, (), (), dict)),
        fixed(1, "version 1 without its running_mean: no mean is made up", rename(v1, "", 1, ["running_mean"])),
        fixed(1, "version None on a version-2 layout: mean stays", rename(v2, "", None)),
        fixed(2, "version 1: steps dropped", steps(v1, "", 1)),
        fixed(2, "version 2: steps dropped", steps(v2, "", 2)),
        fixed(2, "version None at prefix '1.norm.': steps dropped", steps(nested, "1.norm.", None)),
        fixed(
            2, "version 2 at prefix 'b.' without steps: nothing to drop, no error", steps(beside, "b.", 2, ["b.steps"])
        ),
        fixed(3, "version 1 at '1.norm.': the Linear's and the BatchNorm1d's keys kept", others(nested, "1.norm.", 1)),
        fixed(
            3, "version 1 at 'a.': another Standardizer's running_mean and steps at 'b.' kept", others(beside, "a.", 1)
        ),
        fixed(3, "version 2 with a running_mean: kept", others(v2, "", 2, (), ["running_mean"])),
        fixed(3, "version 3 with a steps: kept", others(v3, "", 3, (), ["steps"])),
        fixed(3, "version 1 with an unknown key 'bogus': kept", others(v1, "", 1, (), ["bogus"])),
        fixed(3, "version 1 with 'running_mean_old': kept, not renamed", others(v1, "", 1, (), ["running_mean_old"])),
        fixed(3, "version 1 with an unknown key 'count_steps': kept", others(v1, "", 1, (), ["count_steps"])),
        fixed(
            3,
            "version None at '1.norm.' with '1.norm.count': kept",
            others(nested, "1.norm.", None, (), ["1.norm.count"]),
        ),
        fixed(
            3, "version 3 at 'b.' in a version-2 neighbourhood: nothing to do, every key kept", others(beside, "b.", 3)
        ),
        fixed(4, "version 1: every value is an object of the checkpoint", same_objects(v1, "", 1)),
        fixed(4, "version 3: every value is an object of the checkpoint", same_objects(v3, "", 3)),
        fixed(4, "version None at '1.norm.': the same objects", same_objects(nested, "1.norm.", None)),
        fixed(5, "version 1: the checkpoint keeps its keys, values and _metadata", untouched(v1, "", 1)),
        fixed(5, "version 2 at 'b.', a plain dict: unchanged", untouched(beside, "b.", 2, (), (), dict)),
        fixed(
            5, "version None at '1.norm.' with an unknown key: unchanged", untouched(nested, "1.norm.", None, (), ["x"])
        ),
        fixed(6, "version 3, nothing to migrate: still a new dict", new_dict(v3, "", 3)),
        fixed(6, "version 1: a new dict", new_dict(v1, "", 1)),
        fixed(6, "version 2 given a plain dict: a new dict", new_dict(beside, "b.", 2, (), (), dict)),
        fixed(
            6,
            "version 1 given an OrderedDict subclass: a new dict or OrderedDict, not the subclass",
            new_dict(v1, "", 1, (), (), OrderedDictSubclass),
        ),
        fixed(
            6,
            "version 3 given a dict subclass: a new dict or OrderedDict, not the subclass",
            new_dict(v3, "", 3, (), (), DictSubclass),
        ),
    ]


def exactly_dict(got: object) -> object:
    """Rule 6's class of a result: True for exactly dict or OrderedDict, otherwise the class it is."""
    return True if type(got) in (dict, OrderedDict) else kind_of(got)


def copied(checkpoint: dict) -> dict:
    """A new checkpoint of the same class holding the same value objects, and the same _metadata object."""
    copy = type(checkpoint)(checkpoint)
    if hasattr(checkpoint, "_metadata"):
        copy._metadata = checkpoint._metadata
    return copy


def migration_seen(checkpoint: dict, prefix: str, version: int | None, got: object) -> dict:
    """One migration of a seeded case (`checkpoint`: its entries before the call), each part under the rule that
    decides it: what became of each key of the checkpoint by name (a running_mean under the prefix at version 1 or
    None: rule 1; a steps there at version 1, 2 or None: rule 2; any other: rule 3), whether the values are the
    checkpoint's objects (rule 4), and what the result is (rule 6)."""
    result = got if isinstance(got, dict) else {}
    fates: dict = {1: {}, 2: {}, 3: {}}
    for key in checkpoint:
        local = key[len(prefix) :] if key.startswith(prefix) else None
        if local == "running_mean" and version in (1, None):
            fates[1][key] = [key in result, f"{prefix}mean" in result]
        elif local == "steps" and version in (1, 2, None):
            fates[2][key] = key in result
        else:
            fates[3][key] = key in result
    mean = f"{prefix}mean"
    renaming = version in (1, None) and mean not in checkpoint  # rule 1 decides whether the result has a mean
    made_up = renaming and not fates[1] and mean in result
    objects = {id(value) for value in checkpoint.values()}
    return {  # what the result is first: a call that raises is charged to rule 6 (grader.rules)
        "rule 6: a dict or an OrderedDict": exactly_dict(got),
        "rule 6: a new one": got is not checkpoint,
        "rule 1: each running_mean of the prefix: kept, and mean there": fates[1],
        "rule 1: a mean made up without a running_mean": made_up,
        "rule 2: each steps of the prefix: kept": fates[2],
        "rule 3: each other key: kept": fates[3],
        "rule 3: keys of the result that the checkpoint does not hold (a renamed mean aside)": sorted(
            plain(key) for key in result if key not in checkpoint and not (renaming and key == mean)
        ),
        "rule 4: keys whose value is no object of the checkpoint": sorted(
            plain(key) for key, value in result.items() if id(value) not in objects and not (made_up and key == mean)
        ),
    }


def observe_migrate_hidden(ns: dict) -> dict:
    migrate_state_dict = ns.get("migrate_state_dict")
    standardizer = ns.get("Standardizer")
    releases = {1: ns.get("StandardizerV1"), 2: ns.get("StandardizerV2"), 3: standardizer}

    def first():
        return type(migrate_state_dict(releases[2](2).state_dict(), "", 2)) in (dict, OrderedDict)

    def fixed_cases():
        return [
            *migrate_fixed(migrate_state_dict, releases),
            fixed(6, "a version-2 checkpoint of a Standardizer: a dict or an OrderedDict", first),
        ]

    def case(case):
        checkpoint = checkpoint_of(case, releases)
        seen = {}
        for prefix, release in case["versions"].items():
            version = None if prefix in case["unversioned"] else release
            seen[f"migrating {prefix!r}"] = migrated(migrate_state_dict, checkpoint, prefix, version)
        model = migrate_build(case["spec"], lambda prefix: standardizer)
        fill(model, torch.Generator().manual_seed(case["seed"] + 1))
        result = model.load_state_dict(checkpoint, strict=False)
        missing, unexpected = sorted(result.missing_keys), sorted(result.unexpected_keys)
        strict = strict_load(migrate_build(case["spec"], lambda prefix: standardizer), checkpoint, missing + unexpected)
        seen["loading the migrated checkpoint (every rule shapes it)"] = {
            "missing keys": plain(missing),
            "unexpected keys": plain(unexpected),
            "the values loaded": {
                name: numbers(tensor) for name, tensor in [*model.named_parameters(), *model.named_buffers()]
            },
            "a strict load": strict,
        }
        return seen

    def space():
        generated = [(point, "", (point,)) for point in every(MIGRATE_SPACE, most=2)]
        return spanned(generated, lambda point: migrated(migrate_state_dict, *migrate_arguments(point, releases)))

    rng = random.Random(MIGRATE_SEED)
    cases = [*(migrate_case(rng) for _ in range(MIGRATE_CASES)), *migrate_hand_made()]
    return smallest_first(cases, fixed_cases, case, space)


def migrated(migrate_state_dict: object, checkpoint: dict, prefix: str, version: int | None) -> dict:
    """One call of migrate_state_dict on a copy of the checkpoint of its own (one that changes it changes no other
    call's input), each part under the rule that decides it (migration_seen), and whether the copy is as before."""
    given = copied(checkpoint)
    before, entries = checkpoint_record(given), dict(given)
    got = migrate_state_dict(given, prefix, version)
    return migration_seen(entries, prefix, version, got) | {
        "rule 5: what changed in the checkpoint": checkpoint_changes(before, given)
    }


# Part 1's input space: the version given (each, None included) against the release that wrote the Standardizer's
# keys (so a version that does not explain a key), its prefix (the model itself, one or two levels down), the keys
# beside it (another Standardizer's, a module nested under its prefix, a Linear), a key dropped or added, and the
# checkpoint's class; every pair of unusual values.
MIGRATE_PREFIXES = {"the model itself": "", "one level down": "norm.", "two levels down": "1.norm."}
MIGRATE_BESIDE = {  # the keys beside the Standardizer's: (a prefix relative to its own or absolute, a release)
    "nothing": None,
    "another Standardizer's": ("other.", 1),
    "a Standardizer under its prefix": ("+inner.", 1),
    "a Linear": ("lin.", "linear"),
}
MIGRATE_SPACE = {
    "version": ["1", "2", "3", "None"],
    "written by": ["release 1", "release 2", "release 3"],
    "prefix": list(MIGRATE_PREFIXES),
    "beside": list(MIGRATE_BESIDE),
    "change": ["none", "running_mean dropped", "steps dropped", "an unknown key added"],
    "checkpoint": list(CHECKPOINT_CLASSES),
}


def migrate_arguments(point: dict, releases: dict) -> tuple:
    """A generated case's checkpoint, prefix and version: the state_dict() of the modules the point places."""
    prefix = MIGRATE_PREFIXES[point["prefix"]]
    parts = [(prefix, releases[int(point["written by"][-1])](3))]
    beside = MIGRATE_BESIDE[point["beside"]]
    if beside is not None:
        where, release = beside
        module = nn.Linear(2, 3) if release == "linear" else releases[release](3)
        parts.append((prefix + where[1:] if where.startswith("+") else where, module))
    checkpoint = OrderedDict()
    checkpoint._metadata = OrderedDict()
    for where, module in parts:
        state = module.state_dict()
        checkpoint.update((where + key, value) for key, value in state.items())
        checkpoint._metadata.update(
            (where + key if key else where[:-1], entry) for key, entry in state._metadata.items()
        )
    change = point["change"]
    if change != "none" and change != "an unknown key added":
        checkpoint.pop(prefix + change.split()[0], None)
    if change == "an unknown key added":
        checkpoint[prefix + "bogus"] = torch.zeros(2)
    version = None if point["version"] == "None" else int(point["version"])
    return as_class(checkpoint, CHECKPOINT_CLASSES[point["checkpoint"]]), prefix, version


# ---------------------------------------------------------------------------------------------------------
# Part 2: explain_incompatibility
# ---------------------------------------------------------------------------------------------------------


def loosely(value: object, depth: int = 0) -> object:
    """value as == sees it: a tuple (or a subclass, such as torch.Size) is told from a list, 1 == 1.0 == True."""
    if depth > 20:
        return {"type": "too deep"}
    if isinstance(value, tuple):
        return {"tuple": [loosely(item, depth + 1) for item in value]}
    if isinstance(value, list):
        return [loosely(item, depth + 1) for item in value]
    if isinstance(value, dict) and all(type(key) is str for key in value):
        return {key: loosely(item, depth + 1) for key, item in value.items()}
    return plain(value, depth + 1)


EXPLAIN_SEED, EXPLAIN_CASES = 20130405, 30
FIELDS = ("kind", "checkpoint_key", "model_key", "checkpoint_shape", "model_shape")
PARTS = ["enc", "dec", "head", "body", "proj", "norm"]
ENTRY_NAMES = ["weight", "bias", "scale", "shift", "mean", "var", "count", "ema", "mask"]
SHAPES = [(), (2,), (3,), (2, 3), (3, 2), (4,)]


class Leaf(nn.Module):
    def __init__(self, entries):
        super().__init__()
        for name, shape, kind in entries:
            if kind == "parameter":
                self.register_parameter(name, nn.Parameter(torch.zeros(shape)))
            else:
                self.register_buffer(name, torch.zeros(shape), persistent=kind == "buffer")


def explain_spec(rng: random.Random, depth: int) -> tuple:
    if depth == 0:
        kind = rng.choice(["linear", "norm", "leaf", "leaf", "leaf"])
        if kind == "linear":
            return ("linear", rng.randint(2, 3), rng.randint(2, 3), rng.random() < 0.7)
        if kind == "norm":
            return ("norm", rng.randint(2, 3), rng.random() < 0.7, rng.random() < 0.7)
        names = rng.sample(ENTRY_NAMES, rng.randint(1, 4))
        kinds_of = ["parameter", "parameter", "buffer", "non-persistent buffer"]
        return ("leaf", [(name, rng.choice(SHAPES), rng.choice(kinds_of)) for name in names])
    children = [explain_spec(rng, depth - 1)]
    children += [explain_spec(rng, rng.randint(0, depth - 1)) for _ in range(rng.randint(0, 2))]
    rng.shuffle(children)
    if rng.random() < 0.5:
        return ("seq", children)
    return ("dict", list(zip(rng.sample(PARTS, len(children)), children, strict=True)))


def explain_build(spec: tuple) -> nn.Module:
    kind = spec[0]
    if kind == "seq":
        return nn.Sequential(*[explain_build(child) for _, child in entries(spec)])
    if kind == "dict":
        return nn.ModuleDict({name: explain_build(child) for name, child in entries(spec)})
    if kind == "linear":
        return nn.Linear(spec[1], spec[2], bias=spec[3])
    if kind == "norm":
        return nn.BatchNorm1d(spec[1], affine=spec[2], track_running_stats=spec[3])
    return Leaf(spec[1])


def explain_case(rng: random.Random) -> dict:
    depth = rng.choice([0, 1, 1, 2, 2, 3])
    spec = explain_spec(rng, depth)
    wrapped_model = rng.random() < 0.15
    wrapped_checkpoint = rng.random() < (0.5 if wrapped_model else 0.2)
    damages = [
        rng.choice(["flip", "flip", "rename entry", "rename module", "reshape", "delete", "add"])
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4]))
    ]
    size = (depth, len(damages), wrapped_model + wrapped_checkpoint)
    return {
        "spec": spec,
        "wrapped_model": wrapped_model,
        "wrapped_checkpoint": wrapped_checkpoint,
        "damages": damages,
        "plain_dict": rng.random() < 0.2,
        "seed": rng.randrange(2**31),
        "size": size,
    }


def explain_hand_made() -> list:
    leaf = ("leaf", [("scale", (2,), "parameter"), ("shift", (2,), "parameter"), ("mean", (3,), "buffer")])
    renames = [("norm.scale", "norm.w"), ("norm.shift", "norm.b"), ("norm.mean", "norm.running_mean")]
    counted = ("leaf", [("count", (), "non-persistent buffer"), ("ema", (3,), "buffer")])
    return [
        {
            "spec": ("dict", [("norm", leaf)]),
            "wrapped_model": False,
            "wrapped_checkpoint": False,
            "damages": renames,
            "plain_dict": False,
            "seed": EXPLAIN_SEED + 1,
            "size": (1, 3, 0),
        },
        {
            "spec": ("seq", [("linear", 2, 3, True), counted]),
            "wrapped_model": True,
            "wrapped_checkpoint": False,
            "damages": ["flip"],
            "plain_dict": False,
            "seed": EXPLAIN_SEED + 2,
            "size": (1, 1, 1),
        },
    ]


def damage(rng: random.Random, kind: object, inner: nn.Module, checkpoint: dict) -> None:
    """The test's damages, applied to the checkpoint the same way (what was done is not needed here)."""
    if type(kind) is tuple:
        old, new = kind
        checkpoint[new] = checkpoint.pop(old)
        return
    keys = list(checkpoint)
    model_keys = set(inner.state_dict())
    if kind == "flip":
        flips = [
            (name, buffer)
            for name, buffer in inner.named_buffers()
            if name not in model_keys and name not in checkpoint
        ]
        if flips:
            name, buffer = rng.choice(flips)
            checkpoint[name] = torch.zeros(buffer.shape)
        return
    if not keys and kind != "add":
        return
    if kind == "rename entry":
        key = rng.choice(keys)
        module, _, last = key.rpartition(".")
        new_last = rng.choice(["w", "b", "old_" + last, last + "_v1", "running_" + last, rng.choice(ENTRY_NAMES)])
        new = f"{module}.{new_last}" if module else new_last
        if new not in checkpoint and new not in model_keys:
            checkpoint[new] = checkpoint.pop(key)
        return
    if kind == "rename module":
        paths = sorted({key.rsplit(".", 1)[0] for key in keys if "." in key})
        if not paths:
            return
        parts = rng.choice(paths).split(".")
        depth = rng.randrange(len(parts))
        old_path = ".".join(parts[: depth + 1])
        new_path = ".".join(parts[:depth] + [rng.choice(["encoder", "decoder", "block", parts[depth] + "_old"])])
        if any(key.startswith(new_path + ".") for key in [*keys, *model_keys]):
            return
        for key in keys:
            if key.startswith(old_path + "."):
                checkpoint[new_path + key[len(old_path) :]] = checkpoint.pop(key)
        return
    if kind == "reshape":
        key = rng.choice(keys)
        checkpoint[key] = torch.zeros(rng.choice([s for s in SHAPES if s != tuple(checkpoint[key].shape)]))
        return
    if kind == "delete":
        del checkpoint[rng.choice(keys)]
        return
    path = rng.choice([name for name, _ in inner.named_modules()])
    new = (path + "." if path else "") + rng.choice(ENTRY_NAMES + ["extra", "bogus"])
    if new in checkpoint or new in model_keys:
        return
    checkpoint[new] = torch.zeros(rng.choice(SHAPES))


def model_snapshot(model: nn.Module) -> tuple:
    state = [
        (name, id(tensor), tensor._version)
        for name, tensor in [
            *model.named_parameters(remove_duplicate=False),
            *model.named_buffers(remove_duplicate=False),
        ]
    ]
    structure = [
        (name, module.training, sorted(module._non_persistent_buffers_set), list(module._modules))
        for name, module in model.named_modules(remove_duplicate=False)
    ]
    return state, structure


def key_seen(value: object) -> object:
    return value if value is None or type(value) is str else {"not a key": type(value).__name__}


def shape_seen(value: object) -> object:
    if value is None:
        return None
    if type(value) is tuple and all(type(size) is int for size in value):
        return list(value)
    return {"not a shape": plain(value)}


def finding_seen(item: object) -> object:
    """A finding as the observation judges it: a plain dict, its keys, str-or-None keys, tuple-of-int shapes."""
    if type(item) is not dict:
        return {"not a dict": type(item).__name__}
    if not all(type(key) is str for key in item):
        return {"keys": sorted(repr(key) for key in item)}
    seen = {}
    for key, value in item.items():
        if key in ("checkpoint_key", "model_key"):
            seen[key] = key_seen(value)
        elif key in ("checkpoint_shape", "model_shape"):
            seen[key] = shape_seen(value)
        else:
            seen[key] = plain(value)
    return seen


ORDER_OF_KINDS = ("module prefix", "persistence flip", "renamed key", "shape mismatch", "missing", "unexpected")


def findings_view(got: object, kinds: tuple = ORDER_OF_KINDS) -> object:
    """The findings of the given kinds, as the observation judges each, in an order of their own (rule 6 judges the
    order): a rule's cases look at the kinds that rule decides."""
    if type(got) is not list:
        return {"not a list": type(got).__name__}
    seen = [finding_seen(item) for item in got]
    return sorted((item for item in seen if type(item) is not dict or item.get("kind") in kinds), key=repr)


def findings_by_step(got: object, prefixed: bool) -> list:
    """A case's findings step by step, in the contract's order of rules 1 to 5, each step's findings under the rule
    that decides them: the module prefix (rule 1), shape mismatches (2), persistence flips (3), renamed keys (4),
    missing and unexpected ones (5). Each step works on what the earlier ones left (names, keys not matched), so only
    the first step that differs is charged (grader.rules: a sequence's first differing entry). Where a module prefix
    is in play (`prefixed`), rule 1 makes the names every later step compares: those steps stand unnamed, charged to
    the rules shown broken elsewhere, else to rule 1 (the first rule this sequence names)."""
    steps = [
        ("the module prefix findings", ("module prefix",)),
        ("the shape mismatch findings", ("shape mismatch",)),
        ("the persistence flip findings", ("persistence flip",)),
        ("the renamed key findings", ("renamed key",)),
        ("the missing and unexpected findings", ("missing", "unexpected")),
    ]
    return [
        {
            f"step {rule}, {what} (names without the prefix)"
            if prefixed and rule > 1
            else f"rule {rule}: {what}": findings_view(got, kinds)
        }
        for rule, (what, kinds) in enumerate(steps, start=1)
    ]


def in_order(got: object) -> object:
    """Whether the findings come in the contract's order (rule 6), whatever they are: True, or the findings (kind,
    model key, checkpoint key) in the order given beside the same findings in the contract's order."""
    if type(got) is not list or not all(type(item) is dict for item in got):
        return "unreadable"
    try:
        keys = [
            (ORDER_OF_KINDS.index(item["kind"]), item["model_key"] or "", item["checkpoint_key"] or "") for item in got
        ]
    except Exception:  # noqa: BLE001
        return "unreadable"
    if keys == sorted(keys):
        return True
    named = [[ORDER_OF_KINDS[kind], model_key, checkpoint_key] for kind, model_key, checkpoint_key in keys]
    contract = [named[n] for n in sorted(range(len(keys)), key=keys.__getitem__)]
    return {"in the order given": named, "in the contract's order": contract}


def structure(got: object) -> object:
    """What rule 8 asks of the value returned: a list of plain dicts with exactly the five fields, keys str or None,
    shapes tuples of int or None (not their values, nor how many findings there are: rules 1 to 5 judge that)."""
    if type(got) is not list:
        return {"not a list": type(got).__name__}
    seen = []
    for item in got:
        if type(item) is not dict:
            seen.append({"not a dict": type(item).__name__})
            continue
        fields = sorted(repr(key) for key in item)
        keys_ok = all(type(item.get(key)) in (str, type(None)) for key in ("checkpoint_key", "model_key"))
        shapes_ok = all(
            item.get(key) is None or (type(item[key]) is tuple and all(type(size) is int for size in item[key]))
            for key in ("checkpoint_shape", "model_shape")
        )
        seen.append([fields, keys_ok, shapes_ok])
    return sorted({repr(item): item for item in seen}.values(), key=repr)  # each form once: not how many findings


FINDING_FORM = [sorted(repr(key) for key in FIELDS), True, True]  # a finding as the contract shapes it (structure)


def other_forms(got: object) -> object:
    """Rule 8's part of a seeded or generated case: the forms of the findings other than the contract's (none when
    every finding has it); a finding missing or added is another rule's, and an empty list has no other form."""
    seen = structure(got)
    return seen if type(seen) is dict else [form for form in seen if form != FINDING_FORM]


def explain_fixed(explain_incompatibility: object) -> list:
    def leaf(*entries):
        return Leaf([(name, shape, kind) for name, shape, kind in entries])

    def view(build, kinds=ORDER_OF_KINDS):
        def run():
            model, checkpoint = build()
            return findings_view(explain_incompatibility(model, checkpoint), kinds)

        return run

    def after_prefix(build, kinds):
        """The findings of the given kinds once rule 1's module prefix finding agrees (a sequence: a case whose
        names rest on the prefix charges rule 1 alone where rule 1 decides the prefix otherwise)."""

        def run():
            model, checkpoint = build()
            got = explain_incompatibility(model, checkpoint)
            return [
                {"rule 1: the module prefix findings": findings_view(got, ("module prefix",))},
                {"then the findings": findings_view(got, kinds)},
            ]

        return run

    def prefixed_after_plain(rule, plain, prefixed, kinds):
        """The findings of the given kinds for a case without the module prefix (under `rule`, which decides them),
        then for the same case with it: a sequence, so only a case whose plain twin agrees charges the prefix's
        names (rule 1)."""

        def run():
            return [
                {f"rule {rule}: without the prefix": findings_view(explain_incompatibility(*plain()), kinds)},
                {"then with it": findings_view(explain_incompatibility(*prefixed()), kinds)},
            ]

        return run

    def ordered(build):
        def run():
            model, checkpoint = build()
            return in_order(explain_incompatibility(model, checkpoint))

        return run

    def shaped(build):
        def run():
            model, checkpoint = build()
            return structure(explain_incompatibility(model, checkpoint))

        return run

    def reads_only(build):
        def run():
            model, checkpoint = build()
            model_before, checkpoint_before = model_snapshot(model), checkpoint_snapshot(checkpoint)
            loaded = []
            handles = [
                module.register_load_state_dict_pre_hook(lambda module, *args: loaded.append(module))
                for module in model.modules()
            ]
            try:
                explain_incompatibility(model, checkpoint)
            finally:
                for handle in handles:
                    handle.remove()
            return [
                not loaded,
                model_snapshot(model) == model_before,
                checkpoint_snapshot(checkpoint) == checkpoint_before,
            ]

        return run

    def own(model):
        return model, model.state_dict()

    def wrapped_checkpoint():
        return nn.Linear(2, 3), nn.DataParallel(nn.Linear(2, 3)).state_dict()

    def wrapped_model():
        inner = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        return nn.DataParallel(inner), nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)).state_dict()

    def wrapped_with_buffer():
        model = nn.Sequential(
            nn.Linear(2, 2), leaf(("scale", (2,), "parameter"), ("count", (), "non-persistent buffer"))
        )
        return model, OrderedDict(("module." + key, value) for key, value in model.state_dict().items())

    def partly_wrapped():
        return nn.Linear(2, 2), {"module.weight": torch.zeros(2, 2), "bias": torch.zeros(2)}

    def empty_checkpoint():
        return nn.Linear(2, 3), {}

    def wider():
        return nn.Linear(2, 3), nn.Linear(2, 4).state_dict()

    def transposed():
        checkpoint = nn.Linear(2, 3).state_dict()
        checkpoint["weight"] = torch.zeros(2, 3)
        return nn.Linear(2, 3), checkpoint

    def scalar_as_vector():
        checkpoint = nn.BatchNorm1d(2).state_dict()
        checkpoint["num_batches_tracked"] = torch.zeros(1, dtype=torch.long)
        return nn.BatchNorm1d(2), checkpoint

    def wrapped_mismatch():
        checkpoint = nn.DataParallel(nn.Linear(3, 2)).state_dict()
        return nn.Linear(2, 2), checkpoint

    def saved_mask():
        model = leaf(("weight", (2,), "parameter"), ("mask", (3,), "non-persistent buffer"))
        checkpoint = model.state_dict()
        checkpoint["mask"] = torch.ones(3)
        return model, checkpoint

    def nested_count():
        model = nn.Sequential(nn.Linear(2, 2), leaf(("ema", (3,), "buffer"), ("count", (), "non-persistent buffer")))
        checkpoint = model.state_dict()
        checkpoint["1.count"] = torch.zeros(())
        return model, checkpoint

    def flip_other_shape():
        model = leaf(("mask", (3,), "non-persistent buffer"), ("scale", (2,), "parameter"))
        checkpoint = model.state_dict()
        checkpoint["mask"] = torch.ones(4)
        return model, checkpoint

    def none_buffer():
        model = leaf(("weight", (2,), "parameter"))
        model.register_buffer("mask", None, persistent=False)  # a non-persistent buffer that holds None: no key
        return model, {"weight": torch.zeros(2), "mask": torch.ones(3)}

    def wrapped_flip():
        model = leaf(("scale", (2,), "parameter"), ("mask", (3,), "non-persistent buffer"))
        checkpoint = OrderedDict([("module.scale", torch.ones(2)), ("module.mask", torch.ones(3))])
        return model, checkpoint

    def empty_model_wrapped_checkpoint():
        return nn.Sequential(), nn.DataParallel(nn.Linear(2, 2)).state_dict()

    def both_wrapped():
        return nn.DataParallel(nn.Linear(2, 3)), nn.DataParallel(nn.Linear(2, 4)).state_dict()

    def flip_beside_missing():
        model = leaf(("mask", (3,), "non-persistent buffer"), ("ema", (3,), "buffer"))
        return model, {"mask": torch.ones(3)}

    def renamed_top_level():
        return leaf(("gamma", (2,), "parameter"), ("delta", (3,), "parameter")), {
            "beta": torch.zeros(2),
            "delta": torch.zeros(3),
        }

    def moved_deeper():
        model = nn.ModuleDict({"enc": nn.ModuleDict({"proj": nn.Linear(2, 3, bias=False)})})
        return model, {"fc.weight": torch.zeros(3, 2)}

    def renamed_buffer():
        model = nn.ModuleDict({"norm": leaf(("mean", (4,), "buffer"))})
        return model, {"norm.running_mean": torch.zeros(4)}

    def renamed_module():
        model = nn.ModuleDict({"enc": nn.ModuleDict({"proj": nn.Linear(2, 3)})})
        checkpoint = {"enc.fc.weight": torch.zeros(3, 2), "enc.fc.bias": torch.zeros(3)}
        return model, checkpoint

    def ambiguous_two():
        model = leaf(("a", (2,), "parameter"), ("b", (2,), "parameter"))
        return model, {"x": torch.zeros(2), "y": torch.zeros(2)}

    def ambiguous_one_for_two():
        model = leaf(("a", (2,), "parameter"), ("b", (2,), "parameter"), ("c", (3,), "parameter"))
        return model, {"x": torch.zeros(2), "c": torch.zeros(3)}

    def two_for_one():
        model = leaf(("a", (2,), "parameter"), ("c", (3,), "parameter"))
        return model, {"x": torch.zeros(2), "y": torch.zeros(2), "c": torch.zeros(3)}

    def submodule_named_module():
        """A model with a submodule called module (a wrapper's usual name) deeper down."""
        return nn.Sequential(nn.ModuleDict({"module": nn.Linear(2, 2)}))

    def inner_module_wrapped_checkpoint():
        return submodule_named_module(), nn.DataParallel(submodule_named_module()).state_dict()

    def inner_module_wrapped_model():
        return nn.DataParallel(submodule_named_module()), submodule_named_module().state_dict()

    def keyless_model():
        return nn.ReLU(), nn.Linear(2, 2).state_dict()

    def wrapped_model_empty_checkpoint():
        return nn.DataParallel(nn.Linear(2, 2)), {}

    def child_named_module():
        """A model whose children are module and head (some of its keys start with "module.", not all), and its
        checkpoint without head.bias (a finding: the list is not empty)."""
        model = nn.ModuleDict({"module": nn.Linear(2, 2), "head": nn.Linear(2, 3)})
        checkpoint = model.state_dict()
        del checkpoint["head.bias"]
        return model, checkpoint

    def look_alike_checkpoint():
        """Children module_list and head, a checkpoint of module_list alone: every key starts with "module" (no dot)."""
        model = nn.ModuleDict({"module_list": nn.ModuleList([nn.Linear(2, 2)]), "head": nn.Linear(2, 3)})
        return model, {key: value for key, value in model.state_dict().items() if key.startswith("module_list.")}

    def shared_non_persistent():
        """One tensor registered as a non-persistent buffer in two modules, saved under both keys."""
        mask = torch.ones(3)
        model = nn.Sequential(leaf(("w", (2,), "parameter")), leaf(("v", (2,), "parameter")))
        for child in model:
            child.register_buffer("mask", mask, persistent=False)
        return model, {**model.state_dict(), "0.mask": torch.ones(3), "1.mask": torch.ones(3)}

    def masked():
        """A module with a non-persistent buffer, and its checkpoint with that buffer saved."""
        model = leaf(("scale", (2,), "parameter"), ("mask", (3,), "non-persistent buffer"))
        return model, {"scale": torch.ones(2), "mask": torch.ones(3)}

    def wrapped_model_flip():
        model, checkpoint = masked()
        return nn.DataParallel(model), checkpoint

    def renamed_mean():
        """norm.running_mean saved for norm.mean beside a Linear's keys."""
        model = nn.ModuleDict({"norm": leaf(("mean", (4,), "buffer")), "head": nn.Linear(2, 2)})
        return model, {key.replace("mean", "running_mean"): value for key, value in own(model)[1].items()}

    def wrapped_renamed():
        model, checkpoint = renamed_mean()
        return model, {"module." + key: value for key, value in checkpoint.items()}

    def name_of_both():
        """A root with its own non-persistent buffer x (3,) and a child named module with a persistent buffer x
        (2,): the model's keys all start with "module.", so the checkpoint's x is the name of module.x and of the
        root's non-persistent x."""
        model = leaf(("x", (3,), "non-persistent buffer"))
        model.module = leaf(("x", (2,), "buffer"))
        return model, {"x": torch.zeros(2)}

    def tied():
        """Two leaves whose second shares the first's parameter w and buffer ema (tied weights): the model's
        state_dict() has both keys of each, and the checkpoint lacks the second leaf's."""
        model = nn.Sequential(*(leaf(("w", (2,), "parameter"), ("ema", (3,), "buffer")) for _ in range(2)))
        model[1].w, model[1].ema = model[0].w, model[0].ema
        checkpoint = model.state_dict()
        del checkpoint["1.w"], checkpoint["1.ema"]
        return model, checkpoint

    def two_calls(build):
        def run():
            first, second = explain_incompatibility(*build()), explain_incompatibility(*build())
            return {"two calls return two different lists": type(first) is not list or first is not second}

        return run

    def other_shape():
        return nn.Linear(2, 2), {"weight": torch.zeros(2, 2), "scale": torch.ones(1)}

    def deleted_and_added():
        model = nn.Sequential(nn.Linear(2, 3), leaf(("ema", (3,), "buffer")))
        checkpoint = model.state_dict()
        del checkpoint["0.bias"]
        checkpoint["1.extra"] = torch.zeros(2)
        return model, checkpoint

    def mismatch_and_deleted():
        model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
        checkpoint = model.state_dict()
        checkpoint["0.weight"] = torch.zeros(5, 3)
        del checkpoint["1.bias"]
        return model, checkpoint

    def nothing_to_load_into():
        return nn.Sequential(), {"x": torch.zeros(2), "y.z": torch.zeros(())}

    def mismatch_before_flip():
        model = nn.Sequential(leaf(("w", (2,), "parameter"), ("mask", (3,), "non-persistent buffer")))
        model.insert(0, nn.Linear(2, 2))
        checkpoint = model.state_dict()
        checkpoint["0.weight"] = torch.zeros(3, 2)
        checkpoint["1.mask"] = torch.ones(3)
        return model, checkpoint

    def unexpected_reversed():
        checkpoint = nn.Linear(2, 2).state_dict()
        checkpoint["z_extra"] = torch.zeros(5)
        checkpoint["a_extra"] = torch.zeros(6)
        return nn.Linear(2, 2), checkpoint

    def empty_checkpoint_key():
        checkpoint = nn.Linear(2, 2).state_dict()
        checkpoint["0.scale"] = torch.zeros(5)
        checkpoint[""] = torch.zeros(6)
        return nn.Linear(2, 2), checkpoint

    def empty_model_key():
        model = nn.Sequential(nn.Linear(2, 2))
        model._parameters[""] = nn.Parameter(torch.zeros(3))  # register_parameter refuses the empty name
        return model, {}

    def all_kinds():
        model = nn.Sequential(
            nn.Linear(3, 4),
            nn.ModuleDict({"norm": leaf(("mean", (4,), "buffer"), ("count", (), "non-persistent buffer"))}),
            nn.Linear(4, 2),
        )
        checkpoint = OrderedDict()
        checkpoint["module.2.bias"] = torch.zeros(2)
        checkpoint["module.1.norm.count"] = torch.zeros(())
        checkpoint["module.1.norm.running_mean"] = torch.zeros(4)
        checkpoint["module.0.weight"] = torch.zeros(5, 3)
        checkpoint["module.zz"] = torch.zeros(7)
        return model, checkpoint

    def damaged():
        return mismatch_and_deleted()

    def with_buffer_saved():
        return saved_mask()

    def unsaved_buffer():
        return own(nn.Sequential(nn.Linear(2, 2), leaf(("count", (), "non-persistent buffer"))))

    return [
        fixed(1, "a Linear and its checkpoint saved through nn.DataParallel", view(wrapped_checkpoint)),
        fixed(1, "nn.DataParallel around a Sequential, and the Sequential's own checkpoint", view(wrapped_model)),
        fixed(
            1,
            "a checkpoint saved through nn.DataParallel, a model with a non-persistent buffer",
            view(wrapped_with_buffer),
        ),
        fixed(
            1,
            "only some checkpoint keys start with 'module.': no prefix, keys compared as spelled",
            view(partly_wrapped),
        ),
        fixed(1, "an empty checkpoint: no prefix", view(empty_checkpoint)),
        fixed(1, "a model without keys (nn.ReLU), a plain checkpoint: no prefix", view(keyless_model)),
        fixed(
            1,
            "a submodule named 'module' at '0.module', checkpoint saved through nn.DataParallel: only the leading "
            "'module.' goes",
            view(inner_module_wrapped_checkpoint),
        ),
        fixed(
            1,
            "nn.DataParallel around a model with a submodule named 'module', the model's own checkpoint",
            view(inner_module_wrapped_model),
        ),
        fixed(
            1,
            "a model without keys, a checkpoint saved through nn.DataParallel: no prefix",
            view(empty_model_wrapped_checkpoint),
        ),
        fixed(
            1,
            "nn.DataParallel around a Linear, an empty checkpoint: no prefix",
            view(wrapped_model_empty_checkpoint, ("module prefix",)),
        ),
        fixed(
            1,
            "children 'module' and 'head', a checkpoint without head.bias: some model keys start with 'module.', no "
            "prefix",
            view(child_named_module, ("module prefix",)),
        ),
        fixed(
            1,
            "children 'module_list' and 'head', a checkpoint of module_list alone: 'module' is no 'module.', no prefix",
            view(look_alike_checkpoint, ("module prefix",)),
        ),
        fixed(
            1,
            "nn.DataParallel model and checkpoint, one shape changed: no prefix, keys spelled with 'module.'",
            view(both_wrapped, ("module prefix", "shape mismatch")),
        ),
        fixed(
            1,
            "nn.DataParallel around a module with a non-persistent buffer saved in the checkpoint: a non-persistent "
            "key's name is without 'module.' too",
            prefixed_after_plain(3, masked, wrapped_model_flip, ("persistence flip", "unexpected")),
        ),
        fixed(
            1,
            "a checkpoint saved through nn.DataParallel with a renamed buffer: candidates compare names",
            prefixed_after_plain(4, renamed_mean, wrapped_renamed, ("renamed key",)),
        ),
        fixed(2, "a Linear(2, 3) and the checkpoint of a Linear(2, 4)", view(wider, ("shape mismatch",))),
        fixed(
            2,
            "a transposed weight, (2, 3) for (3, 2): the same size, another shape",
            view(transposed, ("shape mismatch",)),
        ),
        fixed(2, "num_batches_tracked saved with shape (1,) for ()", view(scalar_as_vector, ("shape mismatch",))),
        fixed(
            2,
            "a mismatch in a checkpoint saved through nn.DataParallel: keys as spelled",
            view(wrapped_mismatch, ("shape mismatch",)),
        ),
        fixed(3, "a non-persistent buffer 'mask' saved in the checkpoint", view(saved_mask, ("persistence flip",))),
        fixed(
            3,
            "a flip beside a missing key of its shape: still a flip",
            view(flip_beside_missing, ("persistence flip",)),
        ),
        fixed(3, "a nested non-persistent buffer '1.count' of shape ()", view(nested_count, ("persistence flip",))),
        fixed(
            3,
            "one tensor a non-persistent buffer 'mask' of two modules, saved under both keys: two flips",
            view(shared_non_persistent, ("persistence flip",)),
        ),
        fixed(
            3,
            "a flipped buffer saved with another shape: still a flip, both shapes",
            view(flip_other_shape, ("persistence flip",)),
        ),
        fixed(
            3,
            "a flipped buffer in a checkpoint saved through nn.DataParallel",
            view(wrapped_flip, ("persistence flip",)),
        ),
        fixed(
            3,
            "a non-persistent buffer that holds None has no key: its name in the checkpoint is unexpected",
            view(none_buffer, ("persistence flip", "unexpected")),
        ),
        fixed(
            3,
            "a checkpoint key 'x' that matches the model key 'module.x' by name and is a non-persistent key's name "
            "too: matched in step 2, no flip",
            after_prefix(name_of_both, ("persistence flip",)),
        ),
        fixed(4, "norm.running_mean saved for norm.mean", view(renamed_buffer, ("renamed key",))),
        fixed(4, "two top-level keys of one shape: beta saved for gamma", view(renamed_top_level, ("renamed key",))),
        fixed(4, "fc.weight for enc.proj.weight: another depth, no candidate", view(moved_deeper, ("renamed key",))),
        fixed(4, "a module renamed in place: enc.fc for enc.proj", view(renamed_module, ("renamed key",))),
        fixed(
            4,
            "two left-over keys of one shape on each side: ambiguous, no renamed key",
            view(ambiguous_two, ("renamed key",)),
        ),
        fixed(
            4,
            "one left-over checkpoint key, two model candidates: no renamed key",
            view(ambiguous_one_for_two, ("renamed key",)),
        ),
        fixed(
            4,
            "two left-over checkpoint keys, one model candidate: no renamed key",
            view(two_for_one, ("renamed key",)),
        ),
        fixed(4, "two top-level keys of different shapes are no candidates", view(other_shape, ("renamed key",))),
        fixed(5, "weight kept, bias missing, scale (1,) unexpected", view(other_shape, ("missing", "unexpected"))),
        fixed(
            5, "a key deleted in one module, a key added in another", view(deleted_and_added, ("missing", "unexpected"))
        ),
        fixed(
            5,
            "a shape mismatch and a deleted key: only the deleted key is missing",
            view(mismatch_and_deleted, ("missing", "unexpected")),
        ),
        fixed(5, "an empty checkpoint: every model key missing", view(empty_checkpoint, ("missing", "unexpected"))),
        fixed(
            5,
            "a model without keys: every checkpoint key unexpected",
            view(nothing_to_load_into, ("missing", "unexpected")),
        ),
        fixed(
            5,
            "tied weights (1.w is 0.w, 1.ema is 0.ema), a checkpoint without 1.w and 1.ema: every key of the model's "
            "state_dict() counts, both missing",
            view(tied, ("missing", "unexpected")),
        ),
        fixed(6, "an empty checkpoint for a Linear: bias before weight", ordered(empty_checkpoint)),
        fixed(6, "a shape mismatch found before a persistence flip", ordered(mismatch_before_flip)),
        fixed(6, "unexpected keys found as z_extra, a_extra", ordered(unexpected_reversed)),
        fixed(
            6,
            "unexpected keys '0.scale' and '': the empty key sorts as itself, first",
            ordered(empty_checkpoint_key),
        ),
        fixed(
            6,
            "missing keys '0.bias', '0.weight' and '': the empty key sorts as itself, first",
            ordered(empty_model_key),
        ),
        fixed(6, "every kind at once, in a checkpoint saved through nn.DataParallel", ordered(all_kinds)),
        fixed(7, "a damaged checkpoint: model and checkpoint unchanged, nothing loaded", reads_only(damaged)),
        fixed(7, "a checkpoint saved through nn.DataParallel: nothing loaded", reads_only(wrapped_checkpoint)),
        fixed(7, "a saved non-persistent buffer: nothing loaded", reads_only(with_buffer_saved)),
        fixed(
            8,
            "the model's own checkpoint: an empty list",
            shaped(lambda: own(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)))),
        ),
        fixed(
            8,
            "nn.DataParallel and its own checkpoint: an empty list",
            shaped(lambda: own(nn.DataParallel(nn.Linear(2, 2)))),
        ),
        fixed(8, "an empty Sequential and an empty checkpoint: an empty list", shaped(lambda: (nn.Sequential(), {}))),
        fixed(8, "a non-persistent buffer left out of the checkpoint: an empty list", shaped(unsaved_buffer)),
        fixed(8, "every kind at once: a list of plain dicts with the five fields", shaped(all_kinds)),
        fixed(8, "two calls that find nothing: two new lists", two_calls(unsaved_buffer)),
        fixed(8, "two calls that find the same: two new lists", two_calls(wider)),
    ]


def observe_explain_hidden(ns: dict) -> dict:
    explain_incompatibility = ns.get("explain_incompatibility")

    def first():
        return type(explain_incompatibility(nn.Linear(2, 2), nn.Linear(2, 2).state_dict())) is list

    def fixed_cases():
        return [
            *explain_fixed(explain_incompatibility),
            fixed(8, "a Linear and its own checkpoint: a list", first),
        ]

    def case(case):
        rng = random.Random(case["seed"])
        inner = explain_build(case["spec"])
        model = nn.DataParallel(inner) if case["wrapped_model"] else inner
        checkpoint = explain_build(case["spec"]).state_dict()
        for kind in case["damages"]:
            damage(rng, kind, inner, checkpoint)
        if case["wrapped_checkpoint"]:
            wrapped = OrderedDict(("module." + key, value) for key, value in checkpoint.items())
            wrapped._metadata = checkpoint._metadata
            checkpoint = wrapped
        if case["plain_dict"]:
            checkpoint = dict(checkpoint)
        prefixed = case["wrapped_model"] or case["wrapped_checkpoint"]
        return explained(explain_incompatibility, model, checkpoint, prefixed)

    def space():
        generated = [(point, "", (point,)) for point in explain_space()]
        return spanned(generated, lambda point: explained(explain_incompatibility, *explain_arguments(point)))

    rng = random.Random(EXPLAIN_SEED)
    cases = [*(explain_case(rng) for _ in range(EXPLAIN_CASES)), *explain_hand_made()]
    return smallest_first(cases, fixed_cases, case, space)


def explained(explain_incompatibility: object, model: nn.Module, checkpoint: object, prefixed: bool) -> dict:
    """Two calls of explain_incompatibility, each part under the rule that decides it: whether no module was loaded
    and the model and the checkpoint are as before (rule 7), the findings' form and order, and whether the second
    call returned a list of its own (rules 8 and 6) and the findings step by step (findings_by_step; `prefixed`: a
    module prefix is in play)."""
    model_before, checkpoint_before = model_snapshot(model), checkpoint_snapshot(checkpoint)
    originals = {id(module) for module in model.modules()}
    loaded = []

    def recorder(module, *args):
        if id(module) in originals:
            loaded.append(module)

    handles = [module.register_load_state_dict_pre_hook(recorder) for module in model.modules()]
    try:
        got = explain_incompatibility(model, checkpoint)
        again = explain_incompatibility(model, checkpoint)
    finally:
        for handle in handles:
            handle.remove()
    findings = {
        "rule 8: the form of each finding": other_forms(got),
        "rule 8: a second call returns another list": got is not again,
        "rule 6: the findings come in the contract's order": in_order(got),
        "the findings, step by step (rules 1 to 5, in order)": findings_by_step(got, prefixed),
    }
    return {  # what it returns first: a call that raises is charged to rule 8 (grader.rules)
        "what it returns": {"a list": findings} if type(got) is list else {"not a list": kind_of(got)},
        "rule 7: nothing is loaded": not loaded,
        "rule 7: the model is as before": model_snapshot(model) == model_before,
        "rule 7: the checkpoint is as before": checkpoint_snapshot(checkpoint) == checkpoint_before,
    }


# Part 2's input space: every damage the findings name (a "module." prefix on either side, a shape changed or
# transposed, a buffer saved while persistent, an entry or a module renamed, a key missing or unexpected, a rename
# with two candidates) and what decides a prefix (an empty checkpoint, a model without keys, a checkpoint of one
# child alone), alone and every two together, on a model of three Leaf modules; the single damages also in a plain
# dict, on a model with a None non-persistent buffer or with one tensor the non-persistent buffer of two modules
# (the flip saves both), and with a first child whose name looks like the wrapper's (module, module_list, module2:
# its keys start with "module." or "module"; modules cannot name a child, it is a method of nn.Module), and with
# tied tensors (a parameter and a buffer of one module also another's: no shared submodules, two keys each).
EXPLAIN_DAMAGES: dict[str, Callable[[dict], None]] = {
    "none": lambda checkpoint: None,
    "a shape mismatch": lambda checkpoint: checkpoint.update({"head.bias": torch.zeros(5)}),
    "a shape transposed": lambda checkpoint: checkpoint.update({"head.weight": torch.zeros(3, 2)}),
    "a persistence flip": lambda checkpoint: checkpoint.update({"enc.mask": torch.zeros(2)}),
    "an entry renamed": lambda checkpoint: renamed(checkpoint, {"enc.mean": "enc.running_mean"}),
    "a module renamed": lambda checkpoint: renamed(
        checkpoint, {"head.weight": "proj.weight", "head.bias": "proj.bias"}
    ),
    "a missing key": lambda checkpoint: checkpoint.pop("enc.bias"),
    "an unexpected key": lambda checkpoint: checkpoint.update({"enc.extra": torch.zeros(7)}),
    "a rename with two candidates": lambda checkpoint: renamed(
        checkpoint, {"norm.scale": "norm.a", "norm.shift": "norm.b"}
    ),
    "an empty checkpoint": lambda checkpoint: checkpoint.clear(),
    "a checkpoint of the first child alone": lambda checkpoint: [
        checkpoint.pop(key) for key in list(checkpoint) if not key.startswith("enc.")
    ],
    "a model without keys": lambda checkpoint: None,  # the model is an empty nn.Sequential
    "a module prefix on the checkpoint": lambda checkpoint: None,  # applied last, to every key
    "a module prefix on the model": lambda checkpoint: None,  # the model is wrapped in nn.DataParallel
}
EXPLAIN_SPACE = {
    "damage": list(EXPLAIN_DAMAGES),
    "second damage": ["none", *list(EXPLAIN_DAMAGES)[2:]],  # a damage after the first, in this order
    "checkpoint": ["an OrderedDict", "a dict"],
    "non-persistent buffers": ["enc.mask", "and one holding None", "enc.mask's tensor also head.mask"],
    "first child": ["enc", "module", "module_list", "module2"],
    "tied tensors": ["none", "norm.tied is enc.weight and norm.tied_mean enc.mean"],
}


def renamed(checkpoint: dict, names: dict) -> None:
    for old, new in names.items():
        if old in checkpoint:
            checkpoint[new] = checkpoint.pop(old)


def explain_space() -> list:
    """Part 2's generated points, smallest first: every damage alone (in both classes of checkpoint, with each set of
    non-persistent buffers, with each first child's name) and every two different damages together."""
    damages = list(EXPLAIN_DAMAGES)
    points = every(EXPLAIN_SPACE, most=2)
    return [
        point
        for point in points
        if (
            point["second damage"] == "none"
            or point["damage"] != "none"
            and damages.index(point["second damage"]) > damages.index(point["damage"])
        )
        and (
            point["second damage"] == "none"
            or point["checkpoint"] == "an OrderedDict"
            and point["non-persistent buffers"] == "enc.mask"
        )
    ]


def explain_arguments(point: dict) -> tuple:
    """A generated case's model, damaged checkpoint and whether a module prefix is in play."""
    enc = [("weight", (2, 3), "parameter"), ("bias", (3,), "parameter"), ("mean", (3,), "buffer")]
    enc.append(("mask", (2,), "non-persistent buffer"))
    head = [("weight", (2, 3), "parameter"), ("bias", (2,), "parameter")]  # a Linear's entries, made faster
    norm = [("scale", (4,), "parameter"), ("shift", (4,), "parameter")]
    spec = ("dict", [("enc", ("leaf", enc)), ("head", ("leaf", head)), ("norm", ("leaf", norm))])
    checkpoint = explain_build(spec).state_dict()
    damages = (point["damage"], point["second damage"])
    tied = point["tied tensors"] != "none"
    if tied:  # the model's state_dict() has both keys of a tied tensor
        checkpoint.update({"norm.tied": torch.zeros(2, 3), "norm.tied_mean": torch.zeros(3)})
    for damage_name in damages:
        EXPLAIN_DAMAGES[damage_name](checkpoint)
    first = point["first child"]  # the damages name it enc
    checkpoint = OrderedDict(
        (first + key[len("enc") :] if key.startswith("enc.") else key, value) for key, value in checkpoint.items()
    )
    inner = explain_build(("dict", [(first, spec[1][0][1]), *spec[1][1:]]))
    if point["non-persistent buffers"] == "and one holding None":
        inner[first].register_buffer("gone", None, persistent=False)
    if point["non-persistent buffers"] == "enc.mask's tensor also head.mask":  # one tensor, two keys
        inner["head"].register_buffer("mask", inner[first].mask, persistent=False)
        if "a persistence flip" in damages:  # saved under both keys
            checkpoint["head.mask"] = torch.zeros(2)
    if tied:
        inner["norm"].tied = inner[first].weight  # names no damage touches nor pairs: they differ only as keys
        inner["norm"].register_buffer("tied_mean", inner[first].mean)
    if "a model without keys" in damages:
        inner = nn.Sequential()
    if "a module prefix on the checkpoint" in damages:
        checkpoint = OrderedDict(("module." + key, value) for key, value in checkpoint.items())
    model = nn.DataParallel(inner) if "a module prefix on the model" in damages else inner
    # A key that starts with "module" on either side: rule 1 decides whether a prefix is there, and with it the names
    # every other finding is compared by.
    prefixed = any(key.startswith("module") for key in [*model.state_dict(), *checkpoint])
    return model, dict(checkpoint) if point["checkpoint"] == "a dict" else checkpoint, prefixed


# hidden test cell -> {dimension of its generated cases: the values they take, plainest first} (grader.coverage).
SPACES = {"test_migrate_hidden": MIGRATE_SPACE, "test_explain_hidden": EXPLAIN_SPACE}

OBSERVERS = {
    "test_migrate_hidden": observe_migrate_hidden,
    "test_explain_hidden": observe_explain_hidden,
}


# hidden test grade_id -> {number of a rule of its part's contract in the notebook: a short name of that rule}.
CLAUSES = {
    "test_migrate_hidden": {
        1: "running_mean renamed mean (version 1 or None, when present)",
        2: "steps dropped (versions 1, 2 or None)",
        3: "every other key kept with its value",
        4: "values are the very objects of state_dict",
        5: "state_dict left exactly as it was",
        6: "a new dict or OrderedDict, never state_dict itself",
    },
    "test_explain_hidden": {
        1: "module prefix, and names compared without it",
        2: "shape mismatch",
        3: "persistence flip",
        4: "renamed key, only for mutual only candidates",
        5: "missing and unexpected",
        6: "the order of the findings",
        7: "read, do not load",
        8: "a new list of plain finding dicts, empty exactly when nothing stands in the way",
    },
}
