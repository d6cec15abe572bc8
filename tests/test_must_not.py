"""The tools of a contract's "must not" rules (grader/observing.py): what a submission holds of nn.Module's
machinery by reference, and what of it runs, however it was reached."""

from __future__ import annotations

import threading

from torch import nn

from grader.observing import borrowed_machinery, code_that_runs

SOURCE = """
import functools
from torch import nn

CAPTURED = nn.Module.state_dict


def uses_global(m):
    return CAPTURED(m)


def uses_default(m, save=nn.Module.state_dict):
    return save(m)


def make_closure(save):
    def inner(m):
        return save(m)
    return inner


uses_closure = make_closure(nn.Module.train)


class Derived(nn.Module):
    pass


class Holder:
    kept = functools.partial(nn.Module.eval)


class Honest:
    def method(self, value):
        return isinstance(value, nn.Module), isinstance(value, nn.Parameter)
"""


def namespace() -> dict:
    ns: dict = {"__name__": "__main__"}
    exec(compile(SOURCE, "submission", "exec"), ns)
    return ns


def test_every_way_of_holding_nn_modules_machinery_is_found_and_an_honest_class_is_not() -> None:
    ns = namespace()
    for name in ("uses_global", "uses_default", "uses_closure", "Derived", "Holder"):
        found = borrowed_machinery({name: ns[name]}, ns)
        assert found and all(item.startswith(name) for item in found), (name, found)
    assert borrowed_machinery({"Honest": ns["Honest"]}, ns, allow=(nn.Module,)) == []
    assert borrowed_machinery({"Honest": ns["Honest"]}, ns) != [], "naming nn.Module is a find unless allowed"


def test_code_that_runs_sees_a_captured_reference_and_a_thread() -> None:
    watched = {nn.Module.train.__code__: "nn.Module.train"}
    captured = nn.Module.train
    assert code_that_runs(lambda: captured(nn.Linear(1, 1)), watched) == ["nn.Module.train"]

    def in_thread() -> None:
        worker = threading.Thread(target=nn.Linear(1, 1).train)
        worker.start()
        worker.join()

    assert code_that_runs(in_thread, watched) == ["nn.Module.train"]
    assert code_that_runs(lambda: nn.Linear(1, 1).weight.sum(), watched) == []
