"""Trusted checks: one module per assignment, named after it, that observes a submission's functions.

A module defines OBSERVERS, {graded test cell's grade_id: observe(ns)}, with an entry for every graded test cell
of the assignment. `grader.trusted` runs the submission's non-test cells in a fresh sandboxed child, calls each
observer there with the namespace they ran in, and receives the observations as JSON. Only the trusted parent
compares them, with the observations of the instructor's solution: equal earns the cell's points, anything else
earns none. The modules run inside the sandbox, so they import only the standard library, torch and
grader.trusted_checks.common (which the child provides); they never contain an expected answer.
"""
