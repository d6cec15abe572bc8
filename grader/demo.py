"""`python -m grader demo`: a sample class graded end to end in work/demo/ (autograde, feedback, report)."""

from __future__ import annotations

import shutil

from grader.autograde import autograde, outcome_table, plan
from grader.course import default_db_url, relative, work
from grader.feedback import feedback
from grader.intake import take_in
from grader.nbgrader_setup import close_gradebooks
from grader.progress import Progress
from grader.report import report
from grader.sample_class import scripted_assignments, write_class
from grader.sandbox import start_sandbox, worker_count
from grader.showcase import write_showcase


def demo(workers: int | None = None) -> None:
    """Build a sample class from every assignment's scripted students (grader.showcase's three more in the first),
    then grade it like a real one."""
    work_dir = work() / "demo"
    if work_dir.exists():
        shutil.rmtree(work_dir)
    incoming = work_dir / "incoming"
    assignments = scripted_assignments()
    for assignment in assignments:
        write_class(assignment, incoming)
    write_showcase(assignments[0], incoming)
    count = sum(1 for _ in incoming.glob("*/*/*.ipynb"))
    print(
        f"sample class: {count} submissions in {relative(incoming)} (full solutions, blanks, typical mistakes; in "
        f"{assignments[0]} also a partial answer with a pasted image and two cheats)"
    )
    intake = take_in(incoming, None, work_dir / "submitted")
    outcomes = []
    workers = worker_count(workers)
    with start_sandbox(work_dir, workers) as sandbox:
        for assignment in intake.assignments:
            todo = plan(assignment, work_dir)
            progress = Progress(len(todo.pending), label=f"{assignment} ")
            outcomes += autograde(
                todo,
                work_dir,
                workers=workers,
                on_outcome=lambda o, p=progress: p.advance(failed=o.status != "ok"),
                sandbox=sandbox,
            )
    db_url = default_db_url(work_dir)
    print(outcome_table(outcomes, db_url))
    pages = feedback(work_dir, db_url).pages
    print(f"feedback: {len(pages)} HTML page(s) under {relative(work_dir / 'feedback')}")
    for path in report(work_dir, db_url, work_dir):
        print(f"report:   {relative(path)}")
    close_gradebooks()  # the gradebook alone, without SQLite's -wal and -shm files
    print(f"gradebook: {relative(work_dir / 'gradebook.db')}")
    print(f"formgrader: make lab WORK={relative(work_dir)}")
