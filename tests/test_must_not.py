"""The tools of a contract's "must not" rules (grader/observing.py): what a submission holds of nn.Module's
machinery by reference, and what of it runs, however it was reached."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from torch import nn

from grader import observing
from grader.observing import borrowed_machinery, code_that_runs
from grader.sandbox import start_sandbox

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


# In a sandboxed child, with the guard (grader/inside_sandbox/guard.py) installed before the cells run: what the
# cells make at run time, and what code_that_runs sees of each way out of its watch.
MADE_IN_A_CELL = """
import collections, dataclasses, json, statistics, sys, types
import guard

def written_in_a_cell():
    return 1

exec("def from_exec():\\n    return 2")
cloned = types.FunctionType(written_in_a_cell.__code__.replace(co_name="cloned"), {})
get_ipython().run_cell("def from_a_nested_cell():\\n    return 3")
with open("written.py", "w") as module:
    module.write("def from_a_written_module():\\n    return 4\\n")
sys.path.insert(0, ".")
from written import from_a_written_module

@dataclasses.dataclass
class Generated:
    a: int

Pair = collections.namedtuple("Pair", "a b")
made = guard.GUARD.made_at_run_time
print(json.dumps({
    function.__name__: made(function.__code__)
    for function in (written_in_a_cell, from_exec, cloned, from_a_nested_cell, from_a_written_module,
                     Generated.__init__, Pair.__new__, statistics.mean)
}))
"""

ESCAPES = """
import _thread, json, os, sys
from torch import nn

def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

def raw_thread():
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(lambda: (nn.Linear(1, 1).train(), done.release()), ())
    done.acquire()

def profiler_off():
    profile = sys.getprofile()
    sys.setprofile(None)
    nn.Linear(1, 1).train()
    sys.setprofile(profile)

exec("def from_source():\\n    return nn.Linear(1, 1).training")

def honest():
    return nn.Linear(1, 1).weight.sum()

watched = {nn.Module.train.__code__: "nn.Module.train"}
print(json.dumps({
    action.__name__: code_that_runs(action, watched)
    for action in (fork, raw_thread, profiler_off, from_source, honest)
}))
"""


def test_the_guard_tells_code_made_at_run_time_from_the_cells_and_the_libraries(tmp_path) -> None:
    with start_sandbox(tmp_path, 1) as sandbox, sandbox.child() as child:
        reply = child.run(MADE_IN_A_CELL)
    assert json.loads(_printed(reply)) == {
        "written_in_a_cell": False,
        "from_exec": True,
        "cloned": True,
        "from_a_nested_cell": True,
        "from_a_written_module": True,
        "__init__": False,  # dataclasses' and namedtuple's code for a class, and a library's, are not the cells'
        "__new__": False,
        "mean": False,
    }


def test_code_that_runs_in_the_sandbox_sees_each_way_out_of_its_watch_and_processes_can_be_refused(tmp_path) -> None:
    helpers = Path(observing.__file__).read_text(encoding="utf-8")
    with start_sandbox(tmp_path, 1) as sandbox, sandbox.child() as child:
        reply = child.run(f"exec({helpers!r})\n{ESCAPES}")
        refused = child.run("import guard, os\nguard.GUARD.refuse_processes()  # as the trusted check does\nos.fork()")
        own_pid_namespace = sandbox.own_uids
    seen = json.loads(_printed(reply))
    assert seen["fork"] == ["a new process (os.fork)", *STARTED * own_pid_namespace]
    # _thread raises no audit event: only a PID namespace of the child's own (run as root) shows the thread
    assert seen["raw_thread"] == [*STARTED * own_pid_namespace]
    assert seen["profiler_off"] == ["the profiler replaced or removed (sys.setprofile)"]
    assert seen["from_source"] == ["code made at run time ran (from_source)"]
    assert seen["honest"] == []
    assert refused["outputs"][-1]["ename"] == "PermissionError"


STARTED = ["a new process or thread (the kernel counted it)"]


def _printed(reply: dict) -> str:
    return "".join(output.get("text", "") for output in reply["outputs"] if output.get("name") == "stdout")
