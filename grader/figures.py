"""matplotlib for the grader's figures: drawn without a display, saved as PNG, closed once saved."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from matplotlib.figure import Figure


def pyplot() -> ModuleType:
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(figure: Figure, path: Path, dpi: int = 100) -> None:
    """Write `figure` to `path` as PNG (its folder made if need be) and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    pyplot().close(figure)
