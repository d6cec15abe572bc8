"""Every chapter follows the course template, and its outputs were produced by the pinned torch.

The header states the torch version the outputs came from; if the installed torch differs (an upgrade), this fails
until every chapter is re-run (`make outputs`) and its prose re-read, so stale claims cannot slip through.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from IPython.core.inputtransformer2 import TransformerManager

from scripts.hide_answers import ANSWER, PREDICTION

CHAPTERS = sorted((Path(__file__).resolve().parent.parent / "chapters").glob("[0-9][0-9]_*.ipynb"))
INSTALLED = torch.__version__.split("+")[0]


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_there_are_chapters() -> None:
    assert [p.name[:2] for p in CHAPTERS] == [f"{n:02d}" for n in range(1, len(CHAPTERS) + 1)]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_header_states_the_installed_torch(path: Path) -> None:
    header = _read(path).cells[0]
    assert header.cell_type == "markdown" and header.source.startswith(f"# Chapter {int(path.name[:2])}:")
    assert "What you will learn" in header.source
    stated = re.findall(r"Run on torch (\d+\.\d+\.\d+)", header.source)
    assert stated == [INSTALLED], f"{path.name} says it was run on torch {stated}; installed is {INSTALLED}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_stored_outputs_come_from_the_installed_torch(path: Path) -> None:
    first_code = next(cell for cell in _read(path).cells if cell.cell_type == "code")
    printed = "".join(output.get("text", "") for output in first_code.outputs).split()
    assert "torch.__version__" in first_code.source
    assert torch.__version__ in printed, f"{path.name}'s stored outputs were made with torch {printed}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_ends_with_key_points_and_its_exercise(path: Path) -> None:
    cells = _read(path).cells
    tail = "\n".join(cell.source for cell in cells[-3:] if cell.cell_type == "markdown")
    assert "Key points" in tail
    number = path.name[:2]
    # The student's copy in workspace/ (filled from exercises/ by `make lab`), never the tracked release.
    exercise = re.search(rf"workspace/(ex{number}_\w+/ex{number}_\w+\.ipynb)", tail)
    assert exercise, f"{path.name} does not point to its exercise in workspace/"
    released = path.parent.parent / "exercises" / exercise.group(1)
    assert released.is_file(), f"{path.name} points to {exercise.group()}, but there is no {released.name} released"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_outputs_are_clean(path: Path) -> None:
    for number, cell in enumerate(_read(path).cells, start=1):
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        for output in cell.outputs:
            if output.output_type == "error":
                assert "raises-exception" in tags, f"{path.name} cell {number} raises without the tag"
            text = output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
            assert not re.search(r" at 0x[0-9a-f]{6,}", text), f"{path.name} cell {number} prints a memory address"
        assert cell.execution_count is not None, f"{path.name} cell {number} was not executed"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_prediction_answers_stay_hidden_until_asked_for(path: Path) -> None:
    """Each "Before running:" question ends with the closed "Show the answer" (scripts/hide_answers.py), and the code
    cell after it has outputs (the answer, compared by strict nbval); no other cell carries it, no output is
    collapsed by JupyterLab's metadata (a collapsed output reopens on every run)."""
    cells = _read(path).cells
    asked = [number for number, cell in enumerate(cells) if cell.cell_type == "markdown" and PREDICTION in cell.source]
    assert asked, f"{path.name} asks no prediction"
    for number, cell in enumerate(cells):
        where = f"{path.name} cell {number + 1}"
        if number in asked:
            assert cell.source.endswith(f"\n\n{ANSWER}"), f"{where} asks a prediction: run scripts/hide_answers.py"
            after = cells[number + 1]
            assert after.cell_type == "code" and after.outputs, f"{where}: a prediction must be followed by code output"
        else:
            assert ANSWER not in cell.source and 'class="answer"' not in cell.source, f"{where} hides no prediction"
        collapsed = cell.metadata.get("collapsed") or cell.metadata.get("jupyter", {}).get("outputs_hidden")
        assert not collapsed, f"{where} collapses its outputs: run scripts/hide_answers.py"


# Reading torch's source by hand: what a cell gets from these, it must not split into lines or walk line by line.
SOURCE_READERS = {"getsource", "getsourcelines", "getdoc", "__doc__"}


def _reads_source(node: ast.AST, bound: set[str]) -> bool:
    """Whether the expression holds torch's source (or a docstring), directly or through a name bound to it."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute | ast.Name):
            if (sub.func.attr if isinstance(sub.func, ast.Attribute) else sub.func.id) in SOURCE_READERS:
                return True
        if isinstance(sub, ast.Attribute) and sub.attr == "__doc__":
            return True
        if isinstance(sub, ast.Name) and sub.id in bound:
            return True
    return False


def _bind(statement: ast.stmt, bound: set[str]) -> None:
    """Track the names that hold the source after `statement`: assigned from it, or functions that read it."""
    holds, other = set(), set()
    for node in ast.walk(statement):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _reads_source(node, bound):
            holds.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
            (holds if _reads_source(node.value, bound | holds) else other).update(names)
    bound -= other - holds
    bound |= holds


def source_parsed_by_hand(code: str, bound: set[str] | None = None) -> list[int]:
    """The lines of a code cell that split source (or a docstring) into lines, walk it, or ask for it as lines.

    `bound` carries, from cell to cell of a chapter, the names that hold source (or a function returning it).
    Counting its lines, `len(...splitlines())`, is not showing them and is allowed.
    """
    bound = set() if bound is None else bound
    found = set()
    for statement in ast.parse(TransformerManager().transform_cell(code)).body:
        _bind(statement, bound)
        counted = {
            id(node.args[0])
            for node in ast.walk(statement)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and node.args
        }
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "getsourcelines":
                    found.add(node.lineno)
                elif node.func.attr in ("splitlines", "split") and id(node) not in counted:
                    if _reads_source(node.func.value, bound):
                        found.add(node.lineno)
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and _reads_source(node.iter, bound):
                found.add(node.iter.lineno)
    return sorted(found)


@pytest.mark.parametrize(
    "code",
    [
        'lines = inspect.getsource(nn.Module.train).splitlines()\nprint([l for l in lines if "mode" in l])',
        'source = inspect.getsource(nn.Module.train)\nprint([l for l in source.splitlines() if "mode" in l])',
        'for line in inspect.getsource(nn.Module.eval).split("\\n"):\n    print(line)',
        "text = getsource(f)\nfor character in text:\n    pass",
        "lines, start = inspect.getsourcelines(nn.Module.eval)",
        'print([line for line in nn.Module.eval.__doc__.splitlines() if "mode" in line])',
        "%time x = 1\nsource = inspect.getsource(f)\nkept = [l for l in source.splitlines() if l]",
        "def body(f):\n    return inspect.getsource(f)\n\n\nprint(body(nn.Module.eval).splitlines()[1:])",
    ],
)
def test_the_hand_parser_check_catches(code: str) -> None:
    assert source_parsed_by_hand(code)


@pytest.mark.parametrize(
    "code",
    [
        'show_source(nn.Module._apply, "param.data = param_applied")',
        'print("lines:", len(inspect.getsource(nn.Module._call_impl).splitlines()))',
        "n = sum(len(inspect.getsource(f).splitlines()) for f in functions)\nprint(n)",
        'print(inspect.signature(nn.Module.register_forward_hook).parameters["prepend"].kind)',
        'for line in "a\\nb".splitlines():\n    print(line)',
        'source = inspect.getsource(f)\nsource = "a\\nb"\nprint(source.splitlines())',
        'print("add_module" in inspect.getsource(nn.Module.__setattr__))',
    ],
)
def test_the_hand_parser_check_lets_through(code: str) -> None:
    assert source_parsed_by_hand(code) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_source_lines_are_shown_with_the_helper(path: Path) -> None:
    """A chapter shows lines of torch's source with show_source (chapters/source_lines.py), not a parser of its own."""
    bound: set[str] = set()  # a name bound to the source in one cell may be split in a later one
    for number, cell in enumerate(_read(path).cells, start=1):
        if cell.cell_type == "code":
            lines = source_parsed_by_hand(cell.source, bound)
            assert not lines, (
                f"{path.name} cell {number} (lines {lines}) splits torch's source into lines by hand: "
                "use show_source(obj, *needles, numbers=..., after=..., indent=...) from source_lines"
            )


def _sample_source() -> None:
    if True:
        first = 1
        second = first + 1
    print(second)


def test_show_source_options(capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(CHAPTERS[0].parent))
    try:
        from source_lines import show_source
    finally:
        sys.path.remove(str(CHAPTERS[0].parent))
    show_source(_sample_source, "first", "print(")
    assert capsys.readouterr().out == "first = 1\nsecond = first + 1\nprint(second)\n"
    show_source(_sample_source, "if True:", after=1, indent=True, numbers=True)
    assert capsys.readouterr().out == "  1 if True:\n  2     first = 1\n"
    show_source(_sample_source, "first = 1", "second =", after=1)  # overlapping blocks: each line once
    assert capsys.readouterr().out == "first = 1\nsecond = first + 1\nprint(second)\n"


# The answers the chapters' predictions ask for, chapter by chapter. None may stand where the learner reads it before
# predicting: in the heading of the prediction's section, in the prediction's own paragraph, or in the chapter's
# "What you will learn" list (objectives are skills or questions, never outcomes). Matched without regard to case.
ANSWER_WORDS = {
    "01": ["is not empty", "map a handle id", "trap", "no hooks at all", "shares its registries"],
    "02": ["checked first", "travels with", "wrong device", "wrong-device", "five destinations", "fates"],
    "03": [
        "ordinary attribute",
        "ordinary `bool`",
        "walk the children",
        "root only",
        "registered children only",
        "wants a real",
        "is not `no_grad()`",
        "last call wins",
        "breaks every",
    ],
    "04": ["stay out of the checkpoint", "stays out of", "but not copies", "stop loading", "breaks old checkpoints"],
    "05": [
        "do not fire",
        "fires no hook",
        "global, prepend, registration",
        "global hooks, then",
        "weak reference",
        "not part of",
        "with a twist",
        "vanished",
        "silently disappears",
        "exclude each other",
    ],
    "06": ["a parameter first", "recurses until", "removes duplicates there"],
    "07": ["new class", "generated subclass", "property of", "materialized by", "swapped by", "without a shape"],
    "08": [
        "every module on the slow path",
        "gets the restoring wrong",
        "silent no-op",
        "once per parent",
        "puts the originals back",
        "ignored without",
    ],
}


def objectives(header: str) -> str:
    """The "What you will learn" list of a chapter's first cell, up to the next bold paragraph."""
    start = header.find("What you will learn")
    end = header.find("**", start + len("What you will learn") + 2)
    return header[start : end if end >= 0 else None]


def prediction_contexts(cells: list) -> list[tuple[str, str]]:
    """(the heading of its section, its paragraph to the end of its cell) for every "Before running:" prompt."""
    heading, found = "", []
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        paragraphs = re.split(r"\n\s*\n", cell.source)
        for number, paragraph in enumerate(paragraphs):
            headings = [line for line in paragraph.splitlines() if line.startswith("#")]
            heading = headings[-1] if headings else heading
            if PREDICTION in paragraph:
                found.append((heading, "\n\n".join(paragraphs[number:])))
    return found


def giveaways(cells: list, words: list[str]) -> list[str]:
    """Where an answer word is read before its prediction: the objectives, a prediction's heading or paragraph."""

    def hits(text: str) -> list[str]:
        return [word for word in words if word.lower() in text.lower()]

    found = [f"objectives: {word!r}" for word in hits(objectives(cells[0].source))]
    for heading, prompt in prediction_contexts(cells):
        found += [f"{heading!r}: {word!r}" for word in hits(heading)]
        found += [f"the prediction {prompt[:60]!r}...: {word!r}" for word in hits(prompt)]
    return found


def test_every_chapter_guards_its_answers() -> None:
    assert sorted(ANSWER_WORDS) == [path.name[:2] for path in CHAPTERS]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_predictions_are_not_answered_before_they_are_asked(path: Path) -> None:
    found = giveaways(_read(path).cells, ANSWER_WORDS[path.name[:2]])
    assert not found, f"{path.name} states an answer before its prediction: {found}"


def _cells(*sources: str) -> list:
    return [nbformat.v4.new_markdown_cell(source) for source in sources]


HEADER = "# Chapter 9: Test\n\n**What you will learn**\n\n- {}\n\n**Prerequisites:** none."


@pytest.mark.parametrize(
    "cells",
    [
        _cells(HEADER.format("why a parametrization gives the module a new class"), "## 1. Registering"),
        _cells(HEADER.format("what changes"), "## 1. A new class\n\n**Before running:** is `type(lin)` the same?"),
        _cells(HEADER.format("what changes"), "## 1. A new class", "Text.\n\n**Before running:** the same class?"),
        _cells(HEADER.format("what changes"), "## 1. Registering\n\n**Before running:** it gets a new class. Why?"),
    ],
    ids=["objectives", "heading in the cell", "heading in an earlier cell", "the prompt itself"],
)
def test_the_giveaway_check_catches(cells: list) -> None:
    assert giveaways(cells, ["new class"])


def test_the_giveaway_check_lets_through() -> None:
    cells = _cells(
        HEADER.format("what `register_parametrization` changes about a module"),
        "## 1. Registering\n\n**Before running:** is `type(lin)` the same?",
        "It got a new class.\n\n## 2. Lookup\n\nNo prediction under this heading, which may say: a new class.",
    )
    assert giveaways(cells, ["new class"]) == []


# The core path of a chapter (everything outside its deep dives) fits one sitting: no longer than the longest core
# path of the second edition (chapter 2: 35 code cells, about 4,200 words of prose), with a little room.
CORE_PATH_LIMITS = {"code cells": 36, "words of prose": 4500}


def core_path(cells: list) -> dict[str, int]:
    """Code cells and prose words outside the sections headed "Deep dive (optional): ..." (to the next heading of
    the same or a higher level). A prediction's "Show the answer" is no prose."""
    size = dict.fromkeys(CORE_PATH_LIMITS, 0)
    deep_level = None
    for cell in cells:
        if cell.cell_type == "markdown":
            for line in cell.source.replace(ANSWER, "").splitlines():
                level = len(line) - len(line.lstrip("#"))
                if level and line[level : level + 1] == " ":
                    if deep_level is not None and level <= deep_level:
                        deep_level = None
                    if deep_level is None and "Deep dive (optional):" in line:
                        deep_level = level
                if deep_level is None:
                    size["words of prose"] += len(line.split())
        elif cell.cell_type == "code" and deep_level is None:
            size["code cells"] += 1
    return size


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_core_path_fits_one_sitting(path: Path) -> None:
    size = core_path(_read(path).cells)
    over = {key: value for key, value in size.items() if value > CORE_PATH_LIMITS[key]}
    assert not over, f"{path.name}'s core path is {size}, over {CORE_PATH_LIMITS}: move a section to a deep dive"


def test_core_path_leaves_out_deep_dives() -> None:
    cells = [
        *_cells("# Chapter 9: Test\n\nOne two three."),
        nbformat.v4.new_code_cell("core = 1"),
        *_cells("## Deep dive (optional): more\n\nfour five"),
        nbformat.v4.new_code_cell("deep = 1"),
        *_cells("### Still deep\n\nsix"),
        nbformat.v4.new_code_cell("deep = 2"),
        *_cells("## 2. Back\n\nseven"),
        nbformat.v4.new_code_cell("core = 2"),
    ]
    assert core_path(cells) == {"code cells": 2, "words of prose": 11}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_has_a_diagram(path: Path) -> None:
    diagrams = [cell for cell in _read(path).cells if cell.cell_type == "markdown" and "```mermaid\n" in cell.source]
    assert diagrams, f"{path.name} has no mermaid diagram"
