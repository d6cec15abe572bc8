"""A one-line progress bar for a grading run: done / total, rate, ETA, failures so far."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Redraws one line on a terminal; elsewhere (a log, CI) prints a line per finished submission."""

    def __init__(self, total: int, label: str = "", stream: TextIO | None = None, width: int = 30) -> None:
        self.total, self.label, self.width = total, label, width
        self.stream = stream or sys.stderr
        self.done = self.failures = 0
        self.started = time.monotonic()
        self.live = self.stream.isatty()

    def advance(self, failed: bool = False, note: str = "") -> None:
        self.done += 1
        self.failures += failed
        line = self.line()
        if self.live:
            end = "\n" if self.done == self.total else ""
            self.stream.write(f"\r{line}\033[K{end}")
        else:
            self.stream.write(f"{line}  {note}".rstrip() + "\n")
        self.stream.flush()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        remaining = (self.total - self.done) / rate if rate else float("inf")
        filled = round(self.width * self.done / self.total) if self.total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        eta = "--" if remaining == float("inf") else f"{remaining:.0f}s"
        return (
            f"{self.label}[{bar}] {self.done}/{self.total}  {rate:.2f}/s  ETA {eta}  failures {self.failures}".strip()
        )
