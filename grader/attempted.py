"""Which parts of a submission were not attempted: every solution cell of the part left as released (the stub,
`raise NotImplementedError()`). The class report counts them apart from mistakes (grader.common_mistakes)."""

from __future__ import annotations

from nbformat import NotebookNode

from grader.notebooks import in_parts, nbgrader_cells


def not_attempted(submitted: dict[str, NotebookNode], released: dict[str, NotebookNode]) -> list[str]:
    """The graded test cells (grade ids) of each part whose solution cells are all, but for the whitespace around
    them, as the released notebook of the same name has them. A part without a solution cell is never among them,
    nor one whose solution cell is missing (tampering says so)."""
    found = []
    for name, release in sorted(released.items()):
        if name not in submitted:
            continue
        answers = {
            meta["grade_id"]: cell.source
            for _, cell, meta in nbgrader_cells(submitted[name])
            if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str)  # whatever a submission holds there
        }
        stubs: dict[str, list[bool]] = {}  # part -> for each of its solution cells, whether it is still the stub
        tests: dict[str, list[str]] = {}
        for cell, part in in_parts(release.cells):
            meta = cell.metadata.get("nbgrader") or {}
            if meta.get("solution"):
                answer = answers.get(meta.get("grade_id"))
                stubs.setdefault(part, []).append(answer is not None and answer.strip() == cell.source.strip())
            elif meta.get("grade"):
                tests.setdefault(part, []).append(meta["grade_id"])
        found += [grade_id for part, cells in stubs.items() if all(cells) for grade_id in tests.get(part, [])]
    return found
