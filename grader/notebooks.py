"""Reading course notebooks, with one clear error line for every kind of bad input."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from grader.course import CourseError, relative

HIDDEN_TESTS = "### BEGIN HIDDEN TESTS"


def read_notebook(path: Path) -> NotebookNode:
    """Parse an nbformat 4 notebook, or raise CourseError naming the file and what is wrong."""
    name = relative(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CourseError(f"{name}: not a notebook (the file is not UTF-8 text)") from None
    except OSError as error:
        raise CourseError(f"{name}: cannot be read ({error.strerror})") from None
    return parse_notebook(name, text)


def parse_notebook(name: str, text: str) -> NotebookNode:
    """Parse the text of an nbformat 4 notebook, or raise CourseError naming it (`name`) and what is wrong."""
    if not text.strip():
        raise CourseError(f"{name}: not a notebook (the file is empty)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CourseError(f"{name}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    if isinstance(data, dict) and isinstance(data.get("nbformat"), int) and data["nbformat"] != 4:
        raise CourseError(f"{name}: nbformat {data['nbformat']} notebook; nbformat 4 is required")
    if not isinstance(data, dict) or "cells" not in data:
        raise CourseError(f"{name}: not a notebook (JSON without a 'cells' list)")
    if data.get("nbformat") != 4:
        raise CourseError(f"{name}: nbformat {data.get('nbformat')} notebook; nbformat 4 is required")
    notebook = nbformat.reads(text, as_version=4)
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as error:
        raise CourseError(f"{name}: invalid notebook ({error.message})") from None
    return notebook


def assignment_notebooks(folder: Path) -> list[Path]:
    """The notebooks of one assignment folder; an assignment without one is an error."""
    notebooks = sorted(p for p in folder.glob("*.ipynb") if p.is_file())
    if not notebooks:
        raise CourseError(f"{relative(folder)}: assignment folder has no notebook")
    return notebooks


def nbgrader_cells(notebook: NotebookNode) -> Iterator[tuple[int, NotebookNode, dict]]:
    """(1-based cell number, cell, its nbgrader metadata) for every cell nbgrader knows about."""
    for number, cell in enumerate(notebook.cells, start=1):
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta:
            yield number, cell, meta


def in_parts(cells: list[NotebookNode]) -> Iterator[tuple[NotebookNode, str]]:
    """Every cell with the part it is in: the heading of the last locked markdown cell above it (or its own) that
    starts with one, without its points ('' before the first)."""
    part = ""
    for cell in cells:
        locked = (cell.metadata.get("nbgrader") or {}).get("locked")
        if cell.cell_type == "markdown" and locked and (found := heading(cell.source)):
            part = found
        yield cell, part


def heading(source: str) -> str:
    """The text of the first line of a markdown cell when it is a heading, without its points ('' otherwise)."""
    first = source.strip().splitlines()[0] if source.strip() else ""
    match = re.fullmatch(r"#{1,6}\s+(.*?)\s*#*\s*", first)
    return re.sub(r"\s*\(\d+(\.\d+)? points?\)$", "", match.group(1)) if match else ""


def hidden_test_ids(source: NotebookNode) -> set[str]:
    """The grade ids of a source notebook's test cells that hold a hidden-test block (stripped from the release)."""
    return {
        meta["grade_id"]
        for _, cell, meta in nbgrader_cells(source)
        if meta.get("grade") and "grade_id" in meta and HIDDEN_TESTS in cell.source
    }


def describe_cell(number: int, meta: dict | None) -> str:
    """'cell 7 (test_parts)' or 'cell 7'."""
    grade_id = (meta or {}).get("grade_id")
    return f"cell {number} ({grade_id})" if grade_id else f"cell {number}"


def check_source_notebook(path: Path) -> NotebookNode:
    """Read a source notebook and check the nbgrader metadata nbgrader itself trips over."""
    notebook = read_notebook(path)
    name = relative(path)
    seen: dict[str, int] = {}
    graded = 0
    for number, _cell, meta in nbgrader_cells(notebook):
        grade_id = meta.get("grade_id")
        if (meta.get("grade") or meta.get("solution") or meta.get("locked")) and not grade_id:
            raise CourseError(f"{name}: cell {number} has nbgrader metadata but no grade_id")
        if grade_id in seen:
            raise CourseError(f"{name}: grade_id '{grade_id}' is used by cells {seen[grade_id]} and {number}")
        seen[grade_id] = number
        if meta.get("grade"):
            graded += 1
            points = meta.get("points")
            if isinstance(points, bool) or not isinstance(points, int | float):
                raise CourseError(f"{name}: {describe_cell(number, meta)} is graded but has no points")
    if not graded:
        raise CourseError(f"{name}: no graded cell (nothing to grade)")
    return notebook
