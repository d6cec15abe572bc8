"""Run every chapter's code cells top to bottom with plain Python, on whatever device torch finds, and report.

    python3 scripts/chapters_on_device.py chapters/*.ipynb

For the machines where the course has no Jupyter (a lent GPU machine): the chapters pick `cuda` when
torch.cuda.is_available(), so there this shows that their device examples run on CUDA. Each cell must behave as
its tags say: a cell tagged raises-exception must raise, any other must not. Prints one line per cell that raised
or printed a device, and a verdict per chapter; exit status 1 if any cell misbehaved.
"""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import os
import sys
import traceback
import types


def run_chapter(path: str) -> bool:
    cells = [c for c in json.load(open(path, encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:  # the chapters import their helper (source_lines.py) from their own folder
        sys.path.insert(0, folder)
    main_module = types.ModuleType("__main__")  # pickling looks classes up in sys.modules["__main__"]
    sys.modules["__main__"] = main_module
    namespace = main_module.__dict__
    good = True
    for number, cell in enumerate(cells, start=1):
        source = "".join(cell["source"])
        expected = "raises-exception" in cell.get("metadata", {}).get("tags", [])
        printed = io.StringIO()
        filename = f"{path}:cell{number}"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for inspect, as IPython
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(source, filename, "exec"), namespace)
            raised = None
        except Exception as error:  # noqa: BLE001 - every failure is reported
            raised = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            if not expected:
                traceback.print_exc()
        ok = (raised is not None) == expected
        good &= ok
        devices = [line for line in printed.getvalue().splitlines() if "cuda" in line or "device" in line]
        if raised or devices or not ok:
            print(f"  cell {number:3} {'ok ' if ok else 'BAD'} raised={raised!r} {' | '.join(devices)[:200]}")
    return good


def main(paths: list[str]) -> int:
    import torch

    print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}")
    verdicts = {}
    for path in paths:
        print(path)
        verdicts[path] = run_chapter(path)
    for path, good in verdicts.items():
        print(f"{'ok ' if good else 'BAD'} {path}")
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
