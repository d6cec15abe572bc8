"""A sandboxed child's work: run notebook cells in an IPython shell and answer each with its outputs as JSON.

Requests (grader.inside_sandbox.framing messages) are {"op": "run", "source": ...}, answered with
{"outputs": [nbformat outputs], "execution_count": n, "success": bool}, and {"op": "observe", ...}, answered with
{"observations": {grade_id: data}} from a trusted check's observers (see grader.trusted). Outputs follow what
ipykernel sends: streams, execute_result, display_data and error, so nbgrader grades them as it grades a kernel's.
"""

from __future__ import annotations

import base64
import functools
import inspect
import io
import socket
import sys
import types

import framing
import guard
from framing import ITEM_LIMIT, TOTAL_LIMIT
from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

STREAM_LIMIT = 1 << 20  # characters of stdout and stderr kept per cell
ERROR_LIMIT = 64 << 10  # characters of an exception's message kept, and of its traceback


class Outputs:
    """The outputs of the cell being run, with the limits applied: what is dropped is counted and noted at the end."""

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.stream_chars = self.chars = self.dropped = 0

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        room = min(STREAM_LIMIT - self.stream_chars, TOTAL_LIMIT - self.chars)
        if room <= 0:
            self.dropped += self.stream_chars < STREAM_LIMIT  # past the stream limit, the truncation says it
            return
        if len(text) > room:
            text = text[:room] + "\n[output truncated by the grader]\n"
        last = self.items[-1] if self.items else None
        if not (last and last["output_type"] == "stream" and last["name"] == name):
            if len(self.items) >= ITEM_LIMIT:
                self.dropped += 1
                return
            self.items.append({"output_type": "stream", "name": name, "text": []})
        self.items[-1]["text"].append(text)  # joined by finished(): repeated str += would be quadratic
        self.stream_chars += len(text)
        self.chars += len(text)

    def rich(self, output: dict) -> None:
        if self._room_for(sum(len(str(value)) for value in output.get("data", {}).values())):
            self.items.append(output)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        evalue = _shortened(evalue, ERROR_LIMIT)
        kept, size = [], len(ename) + len(evalue)
        for line in traceback:
            if size + len(line) > ERROR_LIMIT:
                kept.append("[the rest of the traceback was dropped by the grader]")
                break
            kept.append(line)
            size += len(line)
        if self._room_for(size):  # run_cell adds an error of its own if the cell failed and none was kept
            self.items.append(_error(ename, evalue, kept))

    def clear(self) -> None:
        self.items.clear()
        self.stream_chars = self.chars = 0

    def _room_for(self, size: int) -> bool:
        if len(self.items) >= ITEM_LIMIT or self.chars + size > TOTAL_LIMIT:
            self.dropped += 1
            return False
        self.chars += size
        return True

    def finished(self) -> list[dict]:
        for item in self.items:
            if item["output_type"] == "stream":
                item["text"] = "".join(item["text"])
        if self.dropped:
            note = f"[the grader dropped {self.dropped} output(s) of this cell: it keeps {ITEM_LIMIT} outputs and "
            note += f"{TOTAL_LIMIT >> 20} MiB per cell, {STREAM_LIMIT >> 20} MiB of it printed text]\n"
            self.items.append({"output_type": "stream", "name": "stderr", "text": note})
        return self.items


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [shortened by the grader]"


class CapturedStream(io.TextIOBase):
    """sys.stdout or sys.stderr: what is written goes to the outputs of the shell's cell being run."""

    def __init__(self, name: str, shell: CellShell) -> None:
        self.name, self.shell = name, shell

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.shell.outputs.stream(self.name, str(text))
        return len(text)


class ResultHook(DisplayHook):
    """Records a cell's value as an execute_result, as ipykernel's display hook sends it."""

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict: dict, md_dict: dict | None = None) -> None:
        self.shell.outputs.rich(
            {
                "output_type": "execute_result",
                "data": _encoded(format_dict),
                "metadata": md_dict or {},
                "execution_count": self.prompt_count,
            }
        )


class DisplayRecorder(DisplayPublisher):
    """Records display() calls as display_data outputs."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        self.shell.outputs.rich({"output_type": "display_data", "data": _encoded(data), "metadata": metadata or {}})

    def clear_output(self, wait: bool = False) -> None:
        self.shell.outputs.clear()


class CellShell(InteractiveShell):
    """An IPython shell whose outputs are recorded per cell instead of printed: `outputs`, the cell's being run."""

    displayhook_class = ResultHook
    display_pub_class = DisplayRecorder
    pristine: tuple = ()  # the input transformers of a fresh shell
    offered: tuple[str, str] | None = None  # (cell, its transformation made by the grader) for the cell being run
    outputs: Outputs = Outputs()  # replaced for each cell (run_cell) and each observation (observe)

    def transform_cell(self, raw_cell: str) -> str:
        # The grader transforms the course's cells once per run. A submission may add its own input transformers:
        # then every cell goes through them, as in a kernel.
        offered = self.offered
        if offered is not None and offered[0] == raw_cell and self._input_transformers() == self.pristine:
            return offered[1]
        return super().transform_cell(raw_cell)

    def _input_transformers(self) -> tuple:
        manager = self.input_transformer_manager
        return (
            manager,
            tuple(manager.cleanup_transforms),
            tuple(manager.line_transforms),
            tuple(manager.token_transformers),
            tuple(self.input_transformers_post),
        )

    def _showtraceback(self, etype, evalue, stb) -> None:
        self.outputs.error(etype.__name__, str(evalue), list(stb))


def _encoded(data: object) -> object:
    """A bundle's binary values (an Image's or a figure's PNG) in base64, as ipykernel sends them."""
    if not isinstance(data, dict):
        return data
    return {
        kind: base64.b64encode(value).decode() if isinstance(value, bytes) else value for kind, value in data.items()
    }


def _error(ename: str, evalue: str, traceback: list[str]) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}


def remember_files_of_no_module() -> None:
    """Make inspect.getmodule remember, per file, that a frame's, traceback's or code object's file is no module's.

    For such a file (a cell's) it scans all of sys.modules (1,200 with torch: about 1 ms) every time, and IPython
    asks several times for each frame of every traceback it formats: a blank submission's tracebacks cost it 0.1 s
    of its 0.25. The answer is the same, recomputed whenever sys.modules changes size (for these objects it depends
    on nothing else: they have neither __module__ nor __name__).
    """
    scan = inspect.getmodule
    no_module: dict[str, int] = {}  # file -> the size of sys.modules when no module was found for it

    @functools.wraps(scan)
    def getmodule(object, _filename=None):  # noqa: A002 - inspect's own signature
        code = object.tb_frame.f_code if inspect.istraceback(object) else getattr(object, "f_code", object)
        if not inspect.iscode(code):
            return scan(object, _filename)
        file = _filename or code.co_filename
        if no_module.get(file) == len(sys.modules):
            return None
        found = scan(object, _filename)
        if found is None:
            no_module[file] = len(sys.modules)
        return found

    inspect.getmodule = getmodule


def new_shell() -> CellShell:
    """A shell as a fresh kernel has it: no history file, nothing run yet."""
    from traitlets.config import Config

    remember_files_of_no_module()
    config = Config()
    config.HistoryManager.enabled = False
    shell = CellShell.instance(config=config)
    shell.colors = "nocolor"  # tracebacks keep their context lines; syntax colouring would triple their cost
    shell.run_cell("1 / 0", silent=True)  # formats one traceback: its lazy imports happen once, here
    shell.outputs = Outputs()
    shell.execution_count = 1
    shell.pristine = shell._input_transformers()
    return shell


def run_cell(shell: CellShell, source: str, transformed: str | None = None) -> dict:
    shell.outputs = Outputs()
    shell.offered = (source, transformed) if type(transformed) is str else None
    result = shell.run_cell(source, store_history=True)
    shell.offered = None
    sys.stdout.flush()
    outputs = shell.outputs.finished()
    failure = result.error_before_exec or result.error_in_exec
    if failure is not None and not any(o["output_type"] == "error" for o in outputs):
        # The traceback display was replaced (nbgrader's Execute records the error from the reply all the same).
        name, message = type(failure).__name__, _shortened(str(failure), ERROR_LIMIT)
        outputs.append(_error(name, message, ["ERROR: showtraceback was disabled"]))
    return {"outputs": outputs, "execution_count": shell.execution_count - 1, "success": failure is None}


def observe(shell: CellShell, request: dict) -> dict:
    """Run a trusted check's observers, and its replay of the visible test cells, on the namespace the cells ran
    in."""
    shell.outputs = Outputs()  # what the submission prints while observed is dropped
    if request.get("single_process") and guard.GUARD is not None:
        guard.GUARD.refuse_processes()  # a part with a "must not" rule: its hidden tests run in this process alone
    helpers = types.ModuleType("grader.observing")
    exec(compile(request["helpers"], "grader/observing.py", "exec"), helpers.__dict__)
    check = helpers.load_checks(helpers, request["module"], request["name"])
    try:
        observations = helpers.replay(request["replay"], shell.user_ns)  # the visible test cells
    except BaseException as error:  # noqa: BLE001 - e.g. a KeyboardInterrupt the submission raises
        failed = ["observer failed", type(error).__name__]
        observations = {step["grade_id"]: failed for step in request["replay"] if "grade_id" in step}
    for grade_id, observer in check.OBSERVERS.items():
        try:
            observations[grade_id] = observer(shell.user_ns)
        except Exception as error:  # noqa: BLE001 - reported to the parent, which then awards nothing
            observations[grade_id] = ["observer failed", type(error).__name__]
    return {"observations": observations}


def serve(connection: socket.socket, shell: CellShell) -> None:
    """Answer requests until the grader closes the connection."""
    sys.stdout, sys.stderr = CapturedStream("stdout", shell), CapturedStream("stderr", shell)
    handlers = {
        "run": lambda shell, request: run_cell(shell, request["source"], request.get("transformed")),
        "observe": observe,
    }
    while True:
        request = framing.receive(connection)
        if request is None:
            return
        reply = handlers[request["op"]](shell, request)
        try:
            framing.send(connection, reply)
        except (TypeError, ValueError) as error:  # an output that is not JSON: replaced, like a failed display
            framing.send(connection, {**reply, "outputs": [_error("UnsendableOutput", str(error), [])]})
