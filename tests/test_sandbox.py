"""The grading sandbox on its own: what a child can run, see and reach, and how the grader learns it ended."""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

from grader.course import solutions
from grader.notebooks import assignment_notebooks, read_notebook
from grader.sandbox import CellTimeout, ChildDied, Limits, Sandbox, bubblewrap_available, transformed_cells
from tests.integrity.vectors import PNG

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    with Sandbox(tmp_path_factory.mktemp("sandbox"), limits=Limits(cell_seconds=5, memory_mb=512)) as running:
        yield running


def run(sandbox: Sandbox, *sources: str) -> list[dict]:
    """Run cells in one fresh child; the replies."""
    with sandbox.child() as child:
        return [child.request({"op": "run", "source": source}) for source in sources]


def text(reply: dict) -> str:
    return "".join(o.get("text", "") + o.get("evalue", "") for o in reply["outputs"])


def test_bubblewrap_is_there_under_ci() -> None:
    if os.environ.get("CI") == "true":
        assert bubblewrap_available(), ".ci/run installs bubblewrap; without it grading would run unconfined"


def test_outputs_are_those_a_kernel_sends(sandbox: Sandbox) -> None:
    value, streams, error, shown = run(
        sandbox,
        "import torch\ntorch.ones(2)",
        "import sys\nprint('out')\nprint('err', file=sys.stderr)",
        "x = 1\n1 / x0",
        "from IPython.display import HTML, display\ndisplay(HTML('<b>b</b>'))",
    )
    assert value["outputs"] == [
        {
            "output_type": "execute_result",
            "data": {"text/plain": "tensor([1., 1.])"},
            "metadata": {},
            "execution_count": 1,
        }
    ]
    assert [(o["name"], o["text"]) for o in streams["outputs"]] == [("stdout", "out\n"), ("stderr", "err\n")]
    assert not error["success"] and error["outputs"][0]["ename"] == "NameError"
    assert shown["outputs"][0]["data"]["text/html"] == "<b>b</b>"


def test_images_are_sent_in_base64_as_a_kernel_sends_them(sandbox: Sandbox) -> None:
    """IPython Images, with and without a size, and a `_repr_png_` with metadata: shown (their PNG bytes in base64),
    not an UnsendableOutput in place of every output of the cell."""
    [reply] = run(
        sandbox,
        "import base64\nfrom IPython.display import Image, display\n"
        f"png = base64.b64decode({PNG!r})\n"
        "display(Image(png, width=40, height=30))\n"
        "display(Image(png))\n"
        "class Picture:\n    def _repr_png_(self):\n        return png, {'width': 3}\nPicture()",
    )
    shown = [
        (o["output_type"], o.get("data", {}).get("image/png", "")[:10], o.get("metadata")) for o in reply["outputs"]
    ]
    assert shown == [
        ("display_data", PNG[:10], {"image/png": {"width": 40, "height": 30}}),
        ("display_data", PNG[:10], {}),
        ("execute_result", PNG[:10], {"image/png": {"width": 3}}),
    ], reply["outputs"]


def test_each_child_starts_fresh(sandbox: Sandbox) -> None:
    [first] = run(sandbox, "import random\nsecret = 42\nrandom.random()")
    [second] = run(sandbox, "'secret' in globals()")
    [third] = run(sandbox, "import random\nrandom.random()")
    assert second["outputs"][0]["data"]["text/plain"] == "False"
    assert first["outputs"][0]["data"] != third["outputs"][0]["data"], "children must not share random state"


@pytest.mark.skipif(not bubblewrap_available(), reason="bubblewrap is not installed here")
def test_a_child_sees_neither_the_repository_nor_the_network(sandbox: Sandbox) -> None:
    replies = run(
        sandbox,
        f"open({str(REPO / 'README.md')!r})",
        f"import os\nos.listdir({str(REPO / 'solutions')!r})",
        "import socket\nsocket.create_connection(('127.0.0.1', 22), timeout=2)",
        "import os\nsorted(os.listdir('/'))",
    )
    assert [r["outputs"][0]["ename"] for r in replies[:2]] == ["FileNotFoundError", "FileNotFoundError"]
    # isolated children have a network namespace of their own, without even loopback
    assert replies[2]["outputs"][0]["ename"] in ("ConnectionRefusedError", "OSError")
    top = set(ast.literal_eval(replies[3]["outputs"][0]["data"]["text/plain"]))
    system = {"bin", "dev", "etc", "lib", "lib32", "lib64", "opt", "proc", "sbin", "scratch", "sys", "tmp", "usr"}
    python = {Path(prefix).parts[1] for prefix in (sys.prefix, sys.base_prefix)}  # where the venv is bound
    assert top <= system | python, f"unexpected top-level folders in the sandbox: {sorted(top - system - python)}"


@pytest.mark.skipif(not (bubblewrap_available() and os.geteuid() == 0), reason="needs bubblewrap run as root")
def test_children_cannot_reach_each_other(sandbox: Sandbox) -> None:
    with sandbox.child() as first:
        where = first.request({"op": "run", "source": "import os\nopen('note', 'w').write('x')\nos.getcwd()"})
        folder = where["outputs"][0]["data"]["text/plain"].strip("'")
        [other] = run(sandbox, f"import os\nos.listdir({folder!r})")
        # the same path is the other child's own (empty) home
        assert other["outputs"][0]["data"]["text/plain"] == "[]"


def test_a_dead_or_stuck_child_is_reported(sandbox: Sandbox) -> None:
    with pytest.raises(ChildDied, match="exited with status 3"):
        run(sandbox, "import os\nos._exit(3)")
    with pytest.raises(ChildDied, match="segmentation fault"):
        run(sandbox, "import ctypes\nctypes.string_at(0)")
    with pytest.raises(CellTimeout, match="time limit"):
        run(sandbox, "while True:\n    pass")


def test_limits_hold(sandbox: Sandbox) -> None:
    memory, flood = run(sandbox, "x = bytearray(1 << 30)", "for i in range(200_000):\n    print('line', i)")
    assert memory["outputs"][-1]["ename"] == "MemoryError"
    assert len(text(flood)) < 2 << 20 and text(flood).rstrip().endswith("[output truncated by the grader]")


def test_under_memory_pressure_a_childs_processes_are_killed_first(sandbox: Sandbox) -> None:
    """Limits are per process; if the machine runs short all the same, the kernel picks a student's process."""
    source = "import subprocess, sys\nprint(open('/proc/self/oom_score_adj').read().strip())\n"
    source += "print(subprocess.run([sys.executable, '-c', \"print(open('/proc/self/oom_score_adj').read())\"], "
    source += "capture_output=True, text=True).stdout.strip())"
    [reply] = run(sandbox, source)
    assert text(reply).split() == ["1000", "1000"]  # the child's own score, and that of a process it starts


@pytest.mark.skipif(not (bubblewrap_available() and os.geteuid() == 0), reason="needs bubblewrap run as root")
def test_a_child_cannot_lower_its_oom_score(sandbox: Sandbox) -> None:
    [reply] = run(sandbox, "open('/proc/self/oom_score_adj', 'w').write('0')")
    assert reply["outputs"][-1]["ename"] == "PermissionError"


def test_prepared_cells_still_meet_a_submissions_transformers(sandbox: Sandbox) -> None:
    sandbox.prepare(["value = 1\nvalue"])
    [plain] = run(sandbox, "value = 1\nvalue")
    _, rewritten = run(
        sandbox,
        "get_ipython().input_transformers_post.append(lambda lines: [l.replace('1', '2') for l in lines])",
        "value = 1\nvalue",
    )
    assert plain["outputs"][0]["data"]["text/plain"] == "1"
    assert rewritten["outputs"][0]["data"]["text/plain"] == "2", "a transformer must see prepared cells too"


def test_prepared_cells_are_transformed_as_the_shell_would(sandbox: Sandbox) -> None:
    """The grader's transformation of the course's cells is the one a child's own shell makes of them."""
    sources = [
        cell.source
        for folder in sorted(solutions().iterdir())
        for path in assignment_notebooks(folder)
        for cell in read_notebook(path).cells
        if cell.cell_type == "code"
    ]
    prepared = transformed_cells([*sources, "%time 1 + 1\nx = 2", "!ls\ny = 1"])
    assert len(prepared) > 30
    [reply] = run(sandbox, f"import json\njson.dumps([get_ipython().transform_cell(s) for s in {list(prepared)!r}])")
    by_the_shell = json.loads(ast.literal_eval(reply["outputs"][0]["data"]["text/plain"]))
    assert by_the_shell == list(prepared.values())


def test_a_notebooks_outputs_have_a_budget_of_their_own() -> None:
    from grader.sandboxed_execute import checked_outputs

    picture = {"output_type": "display_data", "data": {"image/png": "A" * 1000}, "metadata": {}}
    error = {"output_type": "error", "ename": "ValueError", "evalue": "wrong", "traceback": []}
    kept, used = checked_outputs([picture, picture, error], room=1500)
    assert [o["output_type"] for o in kept] == ["display_data", "error", "stream"]
    assert used < 1500 and "dropped 1 output(s)" in kept[-1]["text"]
    kept, used = checked_outputs([picture, error], room=10)  # no room left: the error still decides the cell
    assert [o["output_type"] for o in kept] == ["error", "stream"] and kept[0]["evalue"] == "wrong"
    assert used == 0 and "dropped 2 output(s)" in kept[-1]["text"]


def test_the_sandbox_refuses_a_python_it_would_hide(tmp_path: Path) -> None:
    from grader.sandbox import _check_visible_inside

    with pytest.raises(RuntimeError, match="mounts a folder of its own at /scratch"):
        _check_visible_inside(Path("/scratch/course/.venv"))  # bound there as named, even where it is a link
    _check_visible_inside(Path("/tmp/course/.venv"))  # the sandbox's /tmp stays: a clone may live there
    _check_visible_inside(Path(sys.prefix))


def test_the_trusted_check_refuses_a_solution_that_does_not_run(sandbox: Sandbox) -> None:
    """A reference whose cells fail (a sandbox that cannot import what they need, say) must stop the run, never
    make every failing submission look like the solution."""
    from grader.course import CourseError
    from grader.trusted import TrustedChecker

    checker = TrustedChecker("ex01_slots", sandbox)
    observations, problem, kind = checker.observe(["x = 1", "import no_such_module"], every_cell_runs=True)
    assert (
        observations == {} and problem == "code cell 2 failed (ModuleNotFoundError: No module named 'no_such_module')"
    )
    assert kind == "a cell of the solution failed"
    checker.source.cells.insert(0, nbformat.v4.new_code_cell("raise ImportError('hidden by the sandbox')"))
    with pytest.raises(CourseError, match="fails on the solution: code cell 1 failed"):
        checker.reference()


RNG_AND_MODULES = "import sys, torch\n(torch.get_rng_state().sum().item(), 'colorsys' in sys.modules)"
WARM_UP = (
    "def warm_up():\n    import colorsys, torch\n    torch.manual_seed(0)\n    torch.nn.LSTM(2, 2)(torch.rand(1, 2))\n"
)


def test_a_warm_up_runs_in_the_server_before_later_children_and_after_a_restart(tmp_path: Path) -> None:
    """What an exercise's warm_up readies is there in every child forked afterwards (a restarted server runs it
    again), and torch's generator starts every child as it did before (each child of a server starts from the same
    state); a failing warm_up says why."""
    from grader.sandbox import SandboxFailure

    with Sandbox(tmp_path) as running:
        [before] = run(running, RNG_AND_MODULES)  # also leaves a spare child forked before the warm-up
        running.warm_up(WARM_UP)
        [after] = run(running, RNG_AND_MODULES)
        running._process.kill()
        running._process.wait()
        running.restart(running.generation)
        [restarted] = run(running, RNG_AND_MODULES)
        with pytest.raises(SandboxFailure, match="NameError: name 'undefined' is not defined"):
            running.warm_up("def warm_up():\n    undefined\n")
        assert running.warm_ups == [WARM_UP]
    before, after, restarted = (
        ast.literal_eval(r["outputs"][-1]["data"]["text/plain"]) for r in (before, after, restarted)
    )
    assert before[1] is False and after == (before[0], True), "the warm-up drew from the generator children start with"
    assert restarted[1] is True  # a new server, whose generator starts from a seed of its own


def test_an_exercises_warm_up_is_its_own_function_alone() -> None:
    """The server is sent the checks' warm_up function and nothing else of them; a failing one names the checks."""
    from grader.course import CourseError
    from grader.trusted import TrustedChecker, warm_up_source

    checks = (REPO / "solutions" / "ex05_hooks" / "checks.py").read_text(encoding="utf-8")
    source = warm_up_source(checks)
    assert source.startswith("def warm_up() -> None:") and "observe" not in source
    assert warm_up_source("import torch\nLOG = []\n") == ""

    class Failing:
        def warm_up(self, source: str) -> None:
            from grader.sandbox import SandboxFailure

            raise SandboxFailure("the sandbox's server failed: ZeroDivisionError: division by zero", 1)

    checker = TrustedChecker("ex05_hooks", Failing())  # type: ignore[arg-type]
    with pytest.raises(CourseError, match=r"solutions/ex05_hooks/checks.py: its warm_up failed .*ZeroDivisionError"):
        checker.warm_sandbox()


SAME_MODULES = """
import inspect, sys, json
def frame_here():
    return sys._getframe()
try:
    1 / 0
except ZeroDivisionError as error:
    traceback = error.__traceback__
objects = [frame_here(), traceback, frame_here.__code__, json.dumps, json, inspect.Signature, 3]
first = [inspect.getmodule(o) is inspect.getmodule.__wrapped__(o) for o in objects]
first += [inspect.getmodule(o) is inspect.getmodule.__wrapped__(o) for o in objects]  # remembered this time
import colorsys  # sys.modules changes: what was remembered is asked again
second = [inspect.getmodule(o) is inspect.getmodule.__wrapped__(o) for o in objects] * 2
(first, second, inspect.getmodule(frame_here()), inspect.getmodule(json.dumps).__name__)
"""


def test_a_childs_inspect_getmodule_answers_as_the_standard_one(sandbox: Sandbox) -> None:
    """The child remembers which files are no module's (grader.inside_sandbox.cell_runner): the same answers."""
    [reply] = run(sandbox, SAME_MODULES)
    first, second, frame_module, json_module = ast.literal_eval(reply["outputs"][-1]["data"]["text/plain"])
    assert first == second == [True] * 14
    assert (frame_module, json_module) == (None, "json")
