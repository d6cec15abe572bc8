"""Instructor tooling for the course: release, validate and autograde the exercises with nbgrader.

Data flows solutions/ -> exercises/ -> work/submitted/ -> work/autograded/ -> grades.
"""
