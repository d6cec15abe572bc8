"""The one helper the chapters use to show a few lines of torch's installed source."""

import inspect


def show_source(obj, *needles, numbers=False, after=0, indent=False):
    """Print each line of obj's source that contains one of the needles, stripped of its indentation.

    With numbers=True each line is preceded by its line number inside obj (the `def` line is 0).
    With after=N each matching line is followed by the N lines after it (a line is printed once, in source order).
    With indent=True the lines keep their indentation, less the part they all share, so that nesting stays visible.
    """
    lines = inspect.getsource(obj).splitlines()
    matches = [number for number, line in enumerate(lines) if any(needle in line for needle in needles)]
    shown = sorted({number for match in matches for number in range(match, min(match + after + 1, len(lines)))})
    margin = min((len(lines[n]) - len(lines[n].lstrip()) for n in shown if lines[n].strip()), default=0)
    for number in shown:
        line = lines[number][margin:].rstrip() if indent else lines[number].strip()
        print(f"{number:3} {line}" if numbers else line)
