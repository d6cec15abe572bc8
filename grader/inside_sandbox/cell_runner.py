"""A sandboxed child's work: run notebook cells in an IPython shell and answer each with its outputs as JSON.

Requests (grader.inside_sandbox.framing messages) are {"op": "run", "source": ...}, answered with
{"outputs": [nbformat outputs], "execution_count": n, "success": bool}, and {"op": "observe", ...}, answered with
{"observations": {grade_id: data}} from a trusted check's observers (see grader.trusted). Outputs follow what
ipykernel sends: streams, execute_result, display_data and error, so nbgrader grades them as it grades a kernel's.
"""

from __future__ import annotations

import io
import socket
import sys
import types

import framing
from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

STREAM_LIMIT = 1 << 20  # characters of stdout or stderr kept per cell
DATA_LIMIT = 8 << 20  # characters of rich output kept per cell


class Outputs:
    """The outputs of the cell being run, with the size limits applied."""

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.stream_chars = self.data_chars = 0

    def stream(self, name: str, text: str) -> None:
        room = STREAM_LIMIT - self.stream_chars
        if room <= 0 or not text:
            return
        if len(text) > room:
            text = text[:room] + "\n[output truncated by the grader]\n"
        self.stream_chars += len(text)
        last = self.items[-1] if self.items else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            last["text"].append(text)  # joined by finished(): repeated str += would be quadratic
        else:
            self.items.append({"output_type": "stream", "name": name, "text": [text]})

    def finished(self) -> list[dict]:
        for item in self.items:
            if item["output_type"] == "stream":
                item["text"] = "".join(item["text"])
        return self.items

    def rich(self, output: dict) -> None:
        size = sum(len(str(value)) for value in output.get("data", {}).values())
        if self.data_chars + size > DATA_LIMIT:
            self.stream("stderr", "[a display output larger than the grader keeps was dropped]\n")
            return
        self.data_chars += size
        self.items.append(output)


CURRENT = Outputs()


class CapturedStream(io.TextIOBase):
    def __init__(self, name: str) -> None:
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        CURRENT.stream(self.name, str(text))
        return len(text)


class ResultHook(DisplayHook):
    """Records a cell's value as an execute_result, as ipykernel's display hook sends it."""

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict: dict, md_dict: dict | None = None) -> None:
        CURRENT.rich(
            {
                "output_type": "execute_result",
                "data": format_dict,
                "metadata": md_dict or {},
                "execution_count": self.prompt_count,
            }
        )


class DisplayRecorder(DisplayPublisher):
    """Records display() calls as display_data outputs."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        CURRENT.rich({"output_type": "display_data", "data": data, "metadata": metadata or {}})

    def clear_output(self, wait: bool = False) -> None:
        CURRENT.items.clear()


class CellShell(InteractiveShell):
    """An IPython shell whose outputs are recorded per cell instead of printed."""

    displayhook_class = ResultHook
    display_pub_class = DisplayRecorder
    transformed: dict[str, str] = {}  # cell source -> IPython's transformation of it, made in the warm server
    pristine: tuple = ()  # the input transformers those were made with

    def remember(self, sources: list[str]) -> None:
        """Transform these cells now (the course's own cells, the same in every submission), once for all children."""
        self.pristine = self._input_transformers()
        self.transformed = dict(self.transformed)  # the instance's own, not the class default
        for source in sources:
            self.transformed[source] = InteractiveShell.transform_cell(self, source)

    def transform_cell(self, raw_cell: str) -> str:
        # A submission may add its own input transformers: then every cell goes through them, as in a kernel.
        if raw_cell in self.transformed and self._input_transformers() == self.pristine:
            return self.transformed[raw_cell]
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
        CURRENT.items.append(_error(etype.__name__, str(evalue), list(stb)))


def _error(ename: str, evalue: str, traceback: list[str]) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}


def new_shell() -> CellShell:
    """A shell as a fresh kernel has it: no history file, nothing run yet."""
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = CellShell.instance(config=config)
    shell.colors = "nocolor"  # tracebacks keep their context lines; syntax colouring would triple their cost
    shell.run_cell("1 / 0", silent=True)  # formats one traceback: its lazy imports happen once, here
    CURRENT.items.clear()
    shell.execution_count = 1
    return shell


def run_cell(shell: CellShell, source: str) -> dict:
    global CURRENT
    CURRENT = Outputs()
    result = shell.run_cell(source, store_history=True)
    sys.stdout.flush()
    outputs = CURRENT.finished()
    failure = result.error_before_exec or result.error_in_exec
    if failure is not None and not any(o["output_type"] == "error" for o in outputs):
        # The traceback display was replaced (nbgrader's Execute records the error from the reply all the same).
        outputs.append(_error(type(failure).__name__, str(failure), ["ERROR: showtraceback was disabled"]))
    return {"outputs": outputs, "execution_count": shell.execution_count - 1, "success": failure is None}


def observe(shell: CellShell, request: dict) -> dict:
    """Run a trusted check's observers on the namespace the cells ran in."""
    global CURRENT
    CURRENT = Outputs()  # what the submission prints while observed is dropped
    common = types.ModuleType("grader.trusted_checks.common")
    exec(compile(request["common"], "grader/trusted_checks/common.py", "exec"), common.__dict__)
    for name in ("grader", "grader.trusted_checks"):
        sys.modules[name] = types.ModuleType(name)
    sys.modules["grader.trusted_checks.common"] = common
    check = types.ModuleType("trusted_check")
    exec(compile(request["module"], request["name"], "exec"), check.__dict__)
    observations = {}
    for grade_id, observer in check.OBSERVERS.items():
        try:
            observations[grade_id] = observer(shell.user_ns)
        except Exception as error:  # noqa: BLE001 - reported to the parent, which then awards nothing
            observations[grade_id] = ["observer failed", type(error).__name__]
    return {"observations": observations}


def serve(connection: socket.socket, shell: CellShell) -> None:
    """Answer requests until the grader closes the connection."""
    sys.stdout, sys.stderr = CapturedStream("stdout"), CapturedStream("stderr")
    handlers = {"run": lambda shell, request: run_cell(shell, request["source"]), "observe": observe}
    while True:
        request = framing.receive(connection)
        if request is None:
            return
        reply = handlers[request["op"]](shell, request)
        try:
            framing.send(connection, reply)
        except (TypeError, ValueError) as error:  # an output that is not JSON: replaced, like a failed display
            framing.send(connection, {**reply, "outputs": [_error("UnsendableOutput", str(error), [])]})
