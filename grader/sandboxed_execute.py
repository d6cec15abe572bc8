"""nbgrader's Execute step, run cell by cell in a sandboxed child forked from the grading run's warm server.

The child answers each cell with its outputs as JSON; they are checked here, field by field, before they become
nbformat outputs, since the child runs the submission's code and may send anything. If the child dies or runs past
a limit, that cell gets an error output naming what happened, and so does every later code cell: a graded cell
that never ran cannot look like one that passed. If the sandbox itself fails, the notebook is not graded at all:
the SandboxFailure is recorded in the submission's CellRun and raised, for the caller to grade it again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute

from grader.hidden_tests import runnable
from grader.inside_sandbox.framing import ITEM_LIMIT, TOTAL_LIMIT
from grader.sandbox import CellTimeout, Child, ChildDied, Sandbox, SandboxFailure

GRADING_ENV = {"NBGRADER_EXECUTION": "autograde"}  # as nbgrader's Execute sets it while it autogrades
MIME_TEXT = ("text/", "image/svg+xml")
NOTEBOOK_LIMIT = 32 << 20  # characters of output kept per notebook (each cell has its own limits too)


@dataclass
class CellRun:
    """One submission's run of its cells, passed to the execute step: the sandbox, whether the hidden-test blocks
    run elsewhere (the trusted check runs them; the notebook's child runs only the visible lines of those cells),
    and what went wrong: the submission's problem ('' when none) and its kind (the same for every submission with
    it, e.g. "the child died"), a failure of the sandbox (None when none)."""

    sandbox: Sandbox
    hidden_elsewhere: bool = False
    problem: str = ""
    problem_kind: str = ""
    failure: SandboxFailure | None = None


class SandboxedExecute(Execute):
    """Execute every code cell in one fresh sandboxed child; record a dead or stopped child in the CellRun."""

    def __init__(self, cell_run: CellRun, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.cell_run = cell_run

    def preprocess(self, nb: NotebookNode, resources: dict, retries: int | None = None):
        self.cell_run.problem, self.cell_run.problem_kind, self.cell_run.failure = "", "", None
        try:
            return self._run(nb, resources)
        except SandboxFailure as failure:
            self.cell_run.failure = failure
            raise

    def _run(self, nb: NotebookNode, resources: dict):
        with self.cell_run.sandbox.child(env=GRADING_ENV) as child:
            failure = self._run_cells(nb, child)
            self.after_cells(child, failure, resources)
        return nb, resources

    def after_cells(self, child: Child, failure: str, resources: dict) -> None:
        """Called in the same child once every cell ran (`failure`: '' or why later cells did not run)."""

    def _run_cells(self, nb: NotebookNode, child: Child) -> str:
        """Run the notebook's code cells in the child, their outputs checked; '' or why later cells did not run."""
        failure, room = "", NOTEBOOK_LIMIT
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if failure:
                cell.outputs = [_error("NotRun", f"not run: {failure}")]
                cell.execution_count = None
                continue
            try:
                reply = child.run(runnable(cell, self.cell_run.hidden_elsewhere))
            except (ChildDied, CellTimeout) as error:
                failure = f"cell {index + 1}: {error}"
                self.cell_run.problem, self.cell_run.problem_kind = failure, error.kind
                cell.outputs = [_error(type(error).__name__, str(error))]
                cell.execution_count = None
                continue
            cell.outputs, used = checked_outputs(reply.get("outputs"), room)
            room -= used
            count = reply.get("execution_count")
            cell.execution_count = count if type(count) is int else None
        return failure


def checked_outputs(raw: object, room: int = NOTEBOOK_LIMIT) -> tuple[list[NotebookNode], int]:
    """The child's outputs as valid nbformat outputs, within the per-cell limits and the `room` left in the
    notebook's (the child may send anything); and how much of that room they take.

    An output that is malformed, or that nbformat rejects, is replaced by a note saying so, and so are outputs past
    the limits: a note is a stream, so it costs no points a test cell earned.
    """
    if type(raw) is not list:
        return [_error("InvalidOutput", "the kernel sent no list of outputs")], 0
    outputs, size, dropped, malformed = [], 0, 0, ""
    limit = min(2 * TOTAL_LIMIT, room)  # the child counts characters, this JSON
    for item in raw:
        try:
            output = _checked(item)
        except Exception as error:  # noqa: BLE001 - nbformat's validation errors included: a bad output is a note
            malformed = malformed or _brief(error)
            dropped += 1
            continue
        length = len(json.dumps(output, ensure_ascii=False))
        if len(outputs) < ITEM_LIMIT and size + length <= limit:
            outputs.append(output)
            size += length
            continue
        dropped += 1
        if output.output_type == "error" and not any(o.output_type == "error" for o in outputs):
            outputs.append(_error(output.ename[:200], output.evalue[:2000]))  # it decides whether the cell passed
    if dropped:
        why = f"; the first was not a valid output ({malformed})" if malformed else ""
        outputs.append(_note(f"[the grader dropped {dropped} output(s) of this cell{why}]"))
    return outputs, size


def _brief(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"


def _note(text: str) -> NotebookNode:
    return new_output("stream", name="stderr", text=text + "\n")


def _checked(item: object) -> NotebookNode:
    if type(item) is not dict:
        raise TypeError("not an object")
    kind = item["output_type"]
    if kind == "stream":
        if item["name"] not in ("stdout", "stderr") or type(item["text"]) is not str:
            raise ValueError("bad stream")
        return new_output("stream", name=item["name"], text=item["text"])
    if kind == "error":
        traceback = item.get("traceback")
        if type(traceback) is not list or not all(type(line) is str for line in traceback):
            traceback = []
        return new_output("error", ename=_text(item["ename"]), evalue=_text(item["evalue"]), traceback=traceback)
    if kind in ("execute_result", "display_data"):
        data, metadata = item["data"], item.get("metadata") or {}
        if type(data) is not dict or type(metadata) is not dict:
            raise TypeError("data and metadata must be objects")
        for mime, value in data.items():
            textual = type(mime) is str and (mime.startswith(MIME_TEXT) or not mime.endswith("json"))
            if type(mime) is not str or (textual and type(value) is not str):
                raise TypeError(f"bad value for {mime!r}")
        json.dumps([data, metadata])  # RecursionError for data nested deeper than the notebook writer can take
        fields = {"data": data, "metadata": metadata}
        if kind == "execute_result":
            count = item.get("execution_count")
            fields["execution_count"] = count if type(count) is int else None
        return new_output(kind, **fields)  # nbformat validates it
    raise ValueError(f"unknown output type {kind!r}")


def _text(value: object) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def _error(ename: str, evalue: str) -> NotebookNode:
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])
