"""Grading integrity: every attack of tests/integrity/vectors.py, graded in one batch beside honest students, earns
no undeserved point, gets a clear status, and costs no honest student its grade (see tests/integrity/suite.py).

The batch runs once per session (about two minutes on 2 cores); each vector is one test of its judgement. A vector
that exposes a known grader weakness is an expected failure, strict: once the grader is fixed it must be unmarked.
"""

from __future__ import annotations

import pytest

from tests.integrity import suite
from tests.integrity.conftest import TABLES
from tests.integrity.vectors import HONEST, VECTORS, Vector

KNOWN_BUGS = [vector for vector in VECTORS if vector.known_bug]


def _param(vector: Vector) -> pytest.param:
    marks = [pytest.mark.xfail(strict=True, reason=vector.known_bug)] if vector.known_bug else []
    return pytest.param(vector, id=vector.student, marks=marks)


@pytest.fixture(scope="module")
def result() -> suite.Result:
    why = suite.cannot_confine()
    if why:
        pytest.skip(why)
    ran = suite.run(echo=True)
    TABLES.append(ran.lines)
    return ran


@pytest.mark.parametrize("vector", [_param(vector) for vector in VECTORS])
def test_vector(result: suite.Result, vector: Vector) -> None:
    judgement = result.judgements[vector.student]
    assert judgement.ok, f"{vector.what}: {'; '.join(judgement.problems)} (status: {judgement.status})"


def test_the_batch_completes(result: suite.Result) -> None:
    assert not result.batch_problems


def test_honest_students_get_exactly_their_points(result: suite.Result) -> None:
    wrong = {student: judgement.problems for student, judgement in result.judgements.items() if student in HONEST}
    assert {student: problems for student, problems in wrong.items() if problems} == {}
    for student in HONEST:
        judgement = result.judgements[student]
        assert judgement.recorded == judgement.deserved and judgement.status == "ok"


def test_final_line(result: suite.Result) -> None:
    """The last line gives the real counts, and every undeserved point or lost grade in it is a known bug's."""
    known = {vector.student for vector in KNOWN_BUGS}
    quarantine_known = all(vector.known_bug for vector in VECTORS if vector.quarantine)
    excused = [
        judgement
        for judgement in result.judgements.values()
        if judgement.student in known or (judgement.role == "witness" and quarantine_known)
    ]
    undeserved, lost = sum(j.undeserved for j in excused), sum(j.lost for j in excused)
    assert (
        result.last_line == f"integrity: {len(VECTORS)} vectors, {undeserved:g} undeserved points, {lost} lost grades"
    )
