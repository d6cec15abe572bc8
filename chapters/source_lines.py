"""The one helper the chapters use to show a few lines of torch's installed source."""

import inspect


def show_source(obj, *needles, numbers=False):
    """Print each line of obj's source that contains one of the needles, stripped of its indentation.

    With numbers=True each line is preceded by its line number inside obj (the `def` line is 0).
    """
    for number, line in enumerate(inspect.getsource(obj).splitlines()):
        if any(needle in line for needle in needles):
            print(f"{number:3} {line.strip()}" if numbers else line.strip())
