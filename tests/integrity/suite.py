"""Grade every attack of tests/integrity/vectors.py in ONE batch beside honest students, then judge each submission.

    .venv/bin/python -m tests.integrity.suite [--keep]   (from the repository root)

Builds the class in a temporary folder, runs `python -m grader autograde ... --workers 2 --timeout 10` as a
subprocess (a crash cannot take the judge down), then `python -m grader report`, and judges every submission:
- undeserved points: a graded cell recorded above what the student deserves (gradebook, grades.csv or ledger);
- lost grades: an honest student not at exactly its expected points with status "ok", or any submission without a
  ledger record or a grades.csv row;
- the status: its kind ("ok", "error", "flagged") among those the vector allows, its reason naming the problem;
- what a vector's own check finds in the evidence (probe reports, processes left behind, files written).
Prints a table, vector by vector, and as its last line `integrity: N vectors, U undeserved points, L lost grades`.
Exit status 1 if anything is wrong.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from grader.autograde import Ledger, fingerprint
from grader.course import default_db_url
from grader.gradebook import cell_scores
from tests.integrity.vectors import (
    ASSIGNMENT,
    DAEMON_MARKER,
    HONEST,
    HOPPER_MARKER,
    NOTEBOOK,
    REPO,
    VECTORS,
    WITNESSES,
    Context,
    Course,
    Evidence,
    Vector,
    write_honest,
)

WORKERS, CELL_TIMEOUT = 2, 10
BATCH_LIMIT = 900  # seconds: a batch that runs longer than this has hung


@dataclass
class Judgement:
    student: str
    vector: Vector | None  # None: an honest student
    deserved: dict[str, float]
    role: str = "honest"  # "vector", "honest", or "witness" (an honest student beside quarantined vectors)
    recorded: dict[str, float] = field(default_factory=dict)
    status: str | None = None
    undeserved: float = 0.0
    lost: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def row(self) -> tuple[str, str, str, str, str]:
        label = f"{self.vector.key} {self.vector.name}" if self.vector else self.role
        got, due = sum(self.recorded.values()), sum(self.deserved.values())
        status = " ".join((self.status if self.status is not None else "(no ledger record)").split())
        if len(status) > 90:
            status = status[:87] + "..."
        verdict = "ok" if self.ok else "; ".join(self.problems)
        if self.vector and self.vector.known_bug:
            verdict += " [known bug]"
        student = self.student if len(self.student) <= 40 else f"{self.student[:30]}...({len(self.student)})"
        return label, student, f"{got:g}/{due:g}", status, verdict


@dataclass
class Result:
    judgements: dict[str, Judgement]
    lines: list[str]
    batch_problems: list[str]
    seconds: dict[str, float]
    root: Path

    @property
    def undeserved(self) -> float:
        return sum(j.undeserved for j in self.judgements.values())

    @property
    def lost(self) -> int:
        return sum(j.lost for j in self.judgements.values())

    @property
    def last_line(self) -> str:
        return self.lines[-1]

    @property
    def ok(self) -> bool:
        return not self.batch_problems and all(j.ok for j in self.judgements.values())


class ProcessWatch(threading.Thread):
    """Every quarter second, note the processes whose command line or name carries a marker (DAEMON_MARKER,
    HOPPER_MARKER); what is noted of each is its name, then its command line."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sightings: list[tuple[float, int, str]] = []
        self.done = threading.Event()

    def run(self) -> None:
        markers = [marker.encode() for marker in (DAEMON_MARKER, HOPPER_MARKER)]
        while not self.done.wait(0.25):
            now = time.time()
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    cmdline = Path(entry.path, "cmdline").read_bytes()
                    comm = Path(entry.path, "comm").read_bytes().strip()
                except OSError:
                    continue
                if any(marker in cmdline or comm == marker[:15] for marker in markers):
                    seen = (comm + b" " + cmdline).decode(errors="replace")
                    self.sightings.append((now, int(entry.name), seen[:20] + seen[-60:]))

    def stop(self) -> None:
        self.done.set()
        self.join()


@dataclass
class Batch:
    """One grading run: its folders, its submissions' judgements, and what went wrong with the run itself."""

    name: str
    root: Path
    judgements: dict[str, Judgement]
    problems: list[str] = field(default_factory=list)
    sightings: list[tuple[float, int, str]] = field(default_factory=list)

    @property
    def submissions(self) -> Path:
        return self.root / "submissions"

    @property
    def work_dir(self) -> Path:
        return self.root / "work"

    @property
    def grades_csv(self) -> Path:
        return self.root / "report" / "grades.csv"


def build(course: Course, batch: Batch, vectors: list[Vector], honest: dict[str, str], role: str) -> None:
    for vector in vectors:
        folder = batch.submissions / vector.student / ASSIGNMENT
        folder.mkdir(parents=True)
        vector.build(Context(course, folder, batch.work_dir.resolve(), REPO, vector.student))
        batch.judgements[vector.student] = Judgement(vector.student, vector, course.deserved(vector.deserved), "vector")
    for student, spec in honest.items():
        folder = batch.submissions / student / ASSIGNMENT
        folder.mkdir(parents=True)
        write_honest(course, folder, spec)
        batch.judgements[student] = Judgement(student, None, course.deserved(spec), role)


def taken_in_fingerprint(folder: Path) -> str:
    """The fingerprint of what intake takes in of a submission folder: its notebooks that are regular files."""
    with tempfile.TemporaryDirectory() as scratch:
        for path in folder.glob("*.ipynb"):
            if path.is_file() and not path.is_symlink() and not folder.is_symlink():
                shutil.copyfile(path, Path(scratch) / path.name)
        return fingerprint(Path(scratch))


def grader_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "grader", *args]


def grade(batch: Batch, *options: str) -> None:
    """`python -m grader autograde` on the batch's submissions (with these further options, e.g. a --scheduler),
    then `python -m grader report`."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("GRADER_COURSE_ROOT", None)
    watch = ProcessWatch()
    watch.start()
    command = grader_command("autograde", str(batch.submissions), "--assignment", ASSIGNMENT)
    command += ["--work", str(batch.work_dir), "--workers", str(WORKERS), "--timeout", str(CELL_TIMEOUT), *options]
    log = batch.root / "batch.log"
    try:
        with log.open("w") as output:
            done = subprocess.run(
                command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT, timeout=BATCH_LIMIT
            )
        if done.returncode != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-3:]
            batch.problems.append(f"the {batch.name} batch ended with status {done.returncode}: {' | '.join(tail)}")
    except subprocess.TimeoutExpired:
        batch.problems.append(f"the {batch.name} batch did not finish within {BATCH_LIMIT} s")
    finally:
        time.sleep(1.0)  # one more look for processes left behind
        watch.stop()
        batch.sightings = watch.sightings
    report = subprocess.run(
        grader_command("report", "--work", str(batch.work_dir), "--out", str(batch.grades_csv.parent)),
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if report.returncode != 0:
        batch.problems.append(
            f"the {batch.name} report ended with status {report.returncode}: {report.stderr.strip()[-300:]}"
        )


def cannot_confine() -> str:
    """Why the attacks must not run here ('' when the sandbox confines them: bubblewrap, and root for own uids)."""
    from grader.sandbox import bubblewrap_available

    if not bubblewrap_available():
        return (
            "bubblewrap cannot make a sandbox here (install the Debian package bubblewrap): the attacks would run free"
        )
    if os.geteuid() != 0:
        return "not root: sandboxed children would share one uid with no process limit, and the fork bomb would be real"
    return ""


def run(root: Path | None = None, keep: bool = False, echo: bool = True) -> Result:
    """Build, grade and judge the whole class; print the table (when `echo`) and return the judgement."""
    why = cannot_confine()
    if why:
        raise RuntimeError(why)
    root = Path(root or tempfile.mkdtemp(prefix="integrity-"))
    try:
        return _run(root, echo)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def _run(root: Path, echo: bool) -> Result:
    started = time.monotonic()
    seconds: dict[str, float] = {}
    course = Course.load()
    main = Batch("main", root / "main", {})
    build(course, main, [v for v in VECTORS if not v.quarantine], HONEST, "honest")
    batches = [main]
    quarantined = [v for v in VECTORS if v.quarantine]
    if quarantined:
        batches.append(Batch("quarantine", root / "quarantine", {}))
        build(course, batches[1], quarantined, WITNESSES, "witness")
    sent = {
        student: taken_in_fingerprint(batch.submissions / student / ASSIGNMENT)
        for batch in batches
        for student in batch.judgements
    }
    seconds["build"] = time.monotonic() - started
    for batch in batches:
        mark = time.monotonic()
        grade(batch)
        seconds[f"{batch.name} batch"] = time.monotonic() - mark
    mark = time.monotonic()
    for batch in batches:
        judge(batch, course, root, sent)
    seconds["judge"] = time.monotonic() - mark
    seconds["total"] = time.monotonic() - started

    judgements = {student: j for batch in batches for student, j in batch.judgements.items()}
    batch_problems = main.problems
    for batch in batches[1:]:  # a quarantined batch's failure belongs to its vectors
        for judgement in batch.judgements.values():
            if judgement.vector is not None:
                judgement.problems += batch.problems
                judgement.problems += [
                    f"witness {w.student}: {'; '.join(w.problems)}"
                    for w in batch.judgements.values()
                    if w.role == "witness" and w.problems
                ]
    lines = table(judgements, batch_problems, seconds)
    if echo:
        print("\n".join(lines), flush=True)
    return Result(judgements, lines, batch_problems, seconds, root)


def judge(batch: Batch, course: Course, root: Path, sent: dict[str, str]) -> None:
    judgements, work_dir, grades_csv = batch.judgements, batch.work_dir, batch.grades_csv
    try:
        scores = cell_scores(default_db_url(work_dir))
    except Exception as error:  # noqa: BLE001 - a broken gradebook loses every grade, reported per student
        scores = {}
        for judgement in judgements.values():
            judgement.problems.append(f"the gradebook cannot be read ({type(error).__name__})")
    rows = {}
    if grades_csv.is_file():
        with grades_csv.open(newline="", encoding="utf-8") as handle:
            rows = {row["student"]: row for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT}
    ledgers = work_dir / "grading_status" / ASSIGNMENT
    for student, judgement in judgements.items():
        cells = scores.get(student, {}).get(ASSIGNMENT, {})
        judgement.recorded = {grade_id: cells.get(grade_id, 0.0) for grade_id in course.points}
        due = judgement.deserved
        over = sum(max(0.0, judgement.recorded[g] - due[g]) for g in course.points)
        over += sum(score for grade_id, score in cells.items() if grade_id not in course.points)
        totals = {}
        ledger_path = Ledger(ledgers).path(student)
        try:
            ledger = json.loads(ledger_path.read_text(encoding="utf-8"))
            judgement.status = str(ledger["status"])
            totals["ledger"] = float(ledger["score"])
        except (OSError, ValueError, KeyError, TypeError):
            ledger = None
        row = rows.get(student)
        if row is not None:
            totals["grades.csv"] = float(row["score"] or 0)
            over = max([over] + [float(row[g] or 0) - due[g] for g in course.points if g in row])
        for total in totals.values():
            over = max(over, total - sum(due.values()))
        judgement.undeserved = round(max(0.0, over), 6)
        if judgement.undeserved:
            judgement.problems.append(f"{judgement.undeserved:g} undeserved point(s)")
        if ledger is None or row is None:
            judgement.lost = True
            judgement.problems.append("no ledger record" if ledger is None else "no grades.csv row")
        elif row["status"] != judgement.status:
            judgement.problems.append(f"grades.csv says {row['status']!r}")
        refused = str(judgement.status).startswith("error: the upload could not be taken in")
        if ledger is not None and ledger.get("fingerprint") != sent[student] and not refused:
            judgement.problems.append("graded files differ from the submitted ones")
        submitted = work_dir / "submitted" / student / ASSIGNMENT
        if submitted.is_dir() and fingerprint(submitted) != sent[student]:
            judgement.problems.append("its submission folder was changed during the batch")
        if judgement.vector is None:
            judge_honest(judgement)
        else:
            judge_vector(judgement, course, root, work_dir, ledger_path, batch.sightings)


def judge_honest(judgement: Judgement) -> None:
    wrong = {g: (judgement.recorded[g], due) for g, due in judgement.deserved.items() if judgement.recorded[g] != due}
    if wrong or (judgement.status is not None and judgement.status != "ok"):
        judgement.lost = True
        if wrong:
            judgement.problems.append(
                "cells " + ", ".join(f"{g} {got:g} instead of {due:g}" for g, (got, due) in wrong.items())
            )
        if judgement.status != "ok":
            judgement.problems.append("an honest student's status is not ok")


def judge_vector(
    judgement: Judgement,
    course: Course,
    root: Path,
    work_dir: Path,
    ledger_path: Path,
    sightings: list[tuple[float, int, str]],
) -> None:
    vector = judgement.vector
    assert vector is not None
    status = judgement.status
    if status is not None:
        kind, _, reason = status.partition(":")
        if kind not in vector.kinds:
            judgement.problems.append(f"status {kind!r}, expected {' or '.join(vector.kinds)}")
        else:
            phrases = (vector.reason,) if isinstance(vector.reason, str) else vector.reason
            said = " ".join(reason.split()).lower()
            if kind != "ok" and not any(phrase.lower() in said for phrase in phrases):
                judgement.problems.append(f"the reason does not mention {' or '.join(map(repr, phrases))}")
    if vector.check is not None:
        autograded = work_dir / "autograded" / judgement.student / ASSIGNMENT / NOTEBOOK
        try:
            notebook = nbformat.read(autograded, as_version=4)
        except Exception:  # noqa: BLE001 - no autograded notebook is evidence too (the probe never printed)
            notebook = None
        graded_at = ledger_path.stat().st_mtime if ledger_path.is_file() else None
        evidence = Evidence(notebook, root, sightings, graded_at)
        judgement.problems += vector.check(evidence, course)


def table(judgements: dict[str, Judgement], batch_problems: list[str], seconds: dict[str, float]) -> list[str]:
    rows = [("vector", "student", "points", "status", "verdict")]
    rows += [j.row() for j in judgements.values()]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths) + "  -------")
    lines += batch_problems
    lines.append("timings: " + ", ".join(f"{name} {value:.0f} s" for name, value in seconds.items()))
    vectors = sum(j.vector is not None for j in judgements.values())
    undeserved = sum(j.undeserved for j in judgements.values())
    lost = sum(j.lost for j in judgements.values())
    lines.append(f"integrity: {vectors} vectors, {undeserved:g} undeserved points, {lost} lost grades")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = parser.parse_args(argv)
    why = cannot_confine()
    if why:
        print(f"integrity: not run: {why}", file=sys.stderr)
        return 2
    result = run(keep=args.keep)
    if args.keep:
        print(f"kept {result.root}", file=sys.stderr)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
