"""Show the integrity suite's table at the end of a pytest run (its own output is captured while it runs)."""

from __future__ import annotations

import pytest

TABLES: list[list[str]] = []  # filled by test_integrity's fixture


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for lines in TABLES:
        terminalreporter.section("grading integrity")
        for line in lines:
            terminalreporter.write_line(line)
