"""Helpers for observers: turn whatever a submission returns into plain JSON data, and call it case by case.

Runs inside the sandboxed child. Nothing here is a security boundary (the submission shares the process and can
change anything in it); it only makes honest observations comparable. The comparison happens in the parent.
"""

from __future__ import annotations

import math

SCALARS = (str, int, bool, type(None))


def plain(value: object, depth: int = 0) -> object:
    """`value` as JSON data, judged by exact type: a subclass of str, dict, list... is reported, not converted.

    Tensors (and Parameters) become {"tensor": nested lists}; anything else becomes {"type": its class name}.
    """
    kind = type(value)
    if depth > 20:
        return {"type": "too deep"}
    if kind in SCALARS:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind in (list, tuple):
        return [plain(item, depth + 1) for item in value]
    if kind is dict:
        if all(type(key) is str for key in value):
            return {key: plain(item, depth + 1) for key, item in value.items()}
        return {"dict items": [[plain(k, depth + 1), plain(v, depth + 1)] for k, v in value.items()]}
    if kind.__name__ in ("Tensor", "Parameter") and kind.__module__.startswith("torch"):
        return {kind.__name__: value.detach().tolist()}
    return {"type": kind.__name__}


def approx(value: object, rel_tol: float = 0.0, abs_tol: float = 0.0) -> object:
    """A number the grader compares with a tolerance, as math.isclose does; the solution's tolerances are the ones used.

    Anything but a plain int or float is reported by type.
    """
    if type(value) in (int, float) and math.isfinite(value):
        return {"approx": value, "rel_tol": rel_tol, "abs_tol": abs_tol}
    return {"type": type(value).__name__}


def attempt(function: object, *args: object, **kwargs: object) -> object:
    """Call function(*args, **kwargs): ["returns", plain result] or ["raises", exception class name]."""
    if not callable(function):
        return ["missing", type(function).__name__]
    try:
        return ["returns", plain(function(*args, **kwargs))]
    except Exception as error:  # noqa: BLE001 - any failure of the submission is an observation
        return ["raises", type(error).__name__]
