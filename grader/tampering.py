"""What a submission changed that a student may not change: the graded test cells and nbgrader's cell metadata.

nbgrader puts the instructor's version of every locked cell back before grading, so these edits earn nothing;
they are reported so that the instructor sees them (the submission is flagged).
"""

from __future__ import annotations

from collections import Counter

from nbformat import NotebookNode

from grader.notebooks import nbgrader_cells


def tampering(submitted: NotebookNode, release: NotebookNode) -> list[str]:
    """One line per forbidden change, compared with the released notebook; empty for an honest submission."""
    released = {meta["grade_id"]: (cell, meta) for _, cell, meta in nbgrader_cells(release) if "grade_id" in meta}
    found = Counter()
    problems = []
    for number, cell, meta in nbgrader_cells(submitted):
        if not isinstance(meta, dict):
            problems.append(f"cell {number} has nbgrader metadata that is not an object")
            continue
        grade_id = meta.get("grade_id")
        found[grade_id] += 1
        if grade_id not in released:
            problems.append(f"cell {grade_id!r} is not in the released notebook")
            continue
        original, original_meta = released[grade_id]
        if meta != original_meta:
            changed = sorted(key for key in set(meta) | set(original_meta) if meta.get(key) != original_meta.get(key))
            problems.append(f"nbgrader metadata of cell {grade_id!r} changed ({', '.join(changed)})")
        is_test = original_meta.get("grade") and not original_meta.get("solution")
        if is_test and found[grade_id] == 1 and cell.source != original.source:
            problems.append(f"test cell {grade_id!r} was edited")
    for grade_id in released:
        if found[grade_id] == 0:
            problems.append(f"cell {grade_id!r} was deleted")
        elif found[grade_id] > 1:
            problems.append(f"cell {grade_id!r} appears {found[grade_id]} times")
    return problems
