"""A teaching assistant grading by hand in the Formgrader, as a second process on the same gradebook.

    python -m tests.manual_grading DB_URL ASSIGNMENT STOP_FILE RESULT_FILE STUDENT...

Round after round until STOP_FILE exists, it gives every graded cell of each student's submission a manual score
(the round number, capped at the cell's points) and a comment, one commit per cell, as the Formgrader saves each
field. After its first round it creates STOP_FILE.started, so the caller knows it is grading. Then it writes to
RESULT_FILE what it last wrote, per student and cell, and how many rounds it made.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nbgrader.api import Gradebook


def grade_by_hand(db_url: str, assignment: str, stop: Path, students: list[str]) -> dict:
    written: dict[str, dict[str, float]] = {}
    rounds = 0
    with Gradebook(db_url) as gradebook:
        while not stop.exists():
            rounds += 1
            for student in students:
                for notebook in gradebook.find_submission(assignment, student).notebooks:
                    for grade in notebook.grades:
                        grade.manual_score = min(float(rounds), float(grade.max_score))
                        gradebook.db.commit()
                        written.setdefault(student, {})[grade.name] = grade.manual_score
                    for comment in notebook.comments:
                        comment.manual_comment = f"round {rounds}"
                        gradebook.db.commit()
            stop.with_suffix(".started").touch()
    return {"rounds": rounds, "written": written}


if __name__ == "__main__":
    url, assignment, stop, result, *names = sys.argv[1:]
    Path(result).write_text(json.dumps(grade_by_hand(url, assignment, Path(stop), names)))
