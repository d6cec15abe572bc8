"""Typical answers to exercise 5 and the points each graded cell must give them (grader/scripted.py)."""

from grader.scripted import Solution

# The students' points are given for the notebook's graded test cells, in this order.
SOLUTION = Solution(
    __file__,
    points_of=(
        "test_record_activations_visible",
        "test_record_activations_hidden",
        "test_strip_hooks_visible",
        "test_strip_hooks_hidden",
        "test_grad_norm_monitor_visible",
        "test_grad_norm_monitor_hidden",
    ),
)

# ---------------------------------------------------------------------------------------------------------
# Part 1: record_activations
# ---------------------------------------------------------------------------------------------------------

# Right in every respect: the text the record_activations mistakes below change (each says how), not a student's.
_RECORD_RIGHT = '''@contextlib.contextmanager
def record_activations(model, names):
    """Give a dict {canonical name: list of outputs}; while the block runs, every forward of a named
    submodule appends its detached output. All the hooks are removed when the block ends."""
    every_path = dict(model.named_modules(remove_duplicate=False))
    for name in names:
        if name not in every_path:
            raise KeyError(name)
    canonical = {id(module): name for name, module in model.named_modules()}
    chosen = {}
    for name in names:
        chosen.setdefault(canonical[id(every_path[name])], every_path[name])
    records = {name: [] for name in chosen}

    def safe(value):
        if isinstance(value, torch.Tensor):
            return value.detach()
        if isinstance(value, (tuple, list)):
            return tuple(safe(item) for item in value)
        return value

    handles = []
    try:
        for name, module in chosen.items():
            store = records[name]
            handles.append(module.register_forward_hook(
                lambda module, args, output, store=store: store.append(safe(output))
            ))
        yield records
    finally:
        for handle in handles:
            handle.remove()
'''

# Right in every respect but one: the hooks are removed after the yield, outside a finally clause, so an
# exception raised in the body (or in a forward pass) leaves every hook registered.
RECORD_NO_FINALLY = SOLUTION.edited_answer(
    _RECORD_RIGHT,
    """
-    try:
-        for name, module in chosen.items():
-            store = records[name]
-            handles.append(module.register_forward_hook(
-                lambda module, args, output, store=store: store.append(safe(output))
-            ))
-        yield records
-    finally:
-        for handle in handles:
-            handle.remove()
+    for name, module in chosen.items():
+        store = records[name]
+        handles.append(module.register_forward_hook(
+            lambda module, args, output, store=store: store.append(safe(output))
+        ))
+    yield records
+    for handle in handles:
+        handle.remove()
""",
)

# Keeps the outputs themselves: each stored tensor still requires grad and holds its grad_fn (and with it
# the whole graph of the forward pass).
RECORD_NO_DETACH = SOLUTION.edited_answer(
    _RECORD_RIGHT,
    """
-    def safe(value):
-        if isinstance(value, torch.Tensor):
-            return value.detach()
+    def keep(value):
@@
-            return tuple(safe(item) for item in value)
+            return tuple(keep(item) for item in value)
@@
-                lambda module, args, output, store=store: store.append(safe(output))
+                lambda module, args, output, store=store: store.append(keep(output))
""",
)

# One hook per requested name instead of one per module: a shared submodule asked for as "0" and "2"
# gets two hooks and is recorded under both names, each call twice over.
RECORD_HOOK_PER_NAME = SOLUTION.edited_answer(
    _RECORD_RIGHT,
    """
-    every_path = dict(model.named_modules(remove_duplicate=False))
+    modules = dict(model.named_modules(remove_duplicate=False))
@@
-        if name not in every_path:
+        if name not in modules:
@@
-    canonical = {id(module): name for name, module in model.named_modules()}
-    chosen = {}
-    for name in names:
-        chosen.setdefault(canonical[id(every_path[name])], every_path[name])
-    records = {name: [] for name in chosen}
+    records = {name: [] for name in names}
@@
-        for name, module in chosen.items():
-            store = records[name]
-            handles.append(module.register_forward_hook(
-                lambda module, args, output, store=store: store.append(safe(output))
-            ))
+        for name in records:
+            def hook(module, args, output, store=records[name]):
+                store.append(safe(output))
+
+            handles.append(modules[name].register_forward_hook(hook))
""",
)

# Looks each name up while registering: an invalid name that comes after a valid one raises KeyError
# with the earlier hooks already in place, and the try/finally that would remove them is not entered yet.
RECORD_VALIDATES_LATE = SOLUTION.edited_answer(
    _RECORD_RIGHT,
    """
-    for name in names:
-        if name not in every_path:
-            raise KeyError(name)
@@
-    chosen = {}
-    for name in names:
-        chosen.setdefault(canonical[id(every_path[name])], every_path[name])
-    records = {name: [] for name in chosen}
@@
-    handles = []
+    records, handles = {}, []
+    for name in names:
+        module = every_path[name]
+        key = canonical[id(module)]
+        if key in records:
+            continue
+        records[key] = []
+        handles.append(module.register_forward_hook(
+            lambda module, args, output, store=records[key]: store.append(safe(output))
+        ))
@@
-        for name, module in chosen.items():
-            store = records[name]
-            handles.append(module.register_forward_hook(
-                lambda module, args, output, store=store: store.append(safe(output))
-            ))
""",
)

# The hook returns the detached output: a forward hook's return value replaces the module's output, so
# the rest of the model computes on a tensor cut from the graph, and the parameters get no gradient.
RECORD_HOOK_RETURNS_OUTPUT = SOLUTION.edited_answer(
    _RECORD_RIGHT,
    """
         return value

+    def make_hook(store):
+        def hook(module, args, output):
+            output = safe(output)
+            store.append(output)
+            return output
+
+        return hook
+
@@
-            store = records[name]
-            handles.append(module.register_forward_hook(
-                lambda module, args, output, store=store: store.append(safe(output))
-            ))
+            handles.append(module.register_forward_hook(make_hook(records[name])))
""",
)

# Registers its hook with prepend=True "to record first": it then sees the module's output before the module's
# own forward hooks change it, not the output the rest of the model receives.
RECORD_PREPENDS = SOLUTION.edited_answer(
    _RECORD_RIGHT,
    """
-                lambda module, args, output, store=store: store.append(safe(output))
+                lambda module, args, output, store=store: store.append(safe(output)), prepend=True
""",
)

# Converts a tuple or list output one level deep only: the (h, c) inside an LSTM's (output, (h, c)) stays a tuple
# of tensors still attached to the graph, and a list inside a tuple stays a list.
RECORD_DETACHES_FIRST_LEVEL = SOLUTION.edited_answer(
    _RECORD_RIGHT,
    """
-            return tuple(safe(item) for item in value)
+            return tuple(item.detach() if isinstance(item, torch.Tensor) else item for item in value)
""",
)

# A correct part 1 written as a class with __enter__ and __exit__ instead of contextlib.
RECORD_CORRECT_CLASS = '''class record_activations:
    """Give a dict {canonical name: list of outputs}; while the block runs, every forward of a named
    submodule appends its detached output. All the hooks are removed when the block ends."""

    def __init__(self, model, names):
        paths = dict(model.named_modules(remove_duplicate=False))
        missing = [name for name in names if name not in paths]
        if missing:
            raise KeyError(f"unknown module names: {missing}")
        first_name = {}
        for name, module in model.named_modules():
            first_name[id(module)] = name
        self.targets = {}
        for name in names:
            self.targets.setdefault(first_name[id(paths[name])], paths[name])
        self.handles = []

    @staticmethod
    def detached(value):
        if isinstance(value, torch.Tensor):
            return value.detach()
        if isinstance(value, (tuple, list)):
            return tuple(record_activations.detached(item) for item in value)
        return value

    def __enter__(self):
        self.records = {name: [] for name in self.targets}
        for name, module in self.targets.items():
            store = self.records[name]
            self.handles.append(module.register_forward_hook(
                lambda module, args, output, store=store: store.append(self.detached(output)) and None
            ))
        return self.records

    def __exit__(self, *exc_info):
        while self.handles:
            self.handles.pop().remove()
        return False
'''

# ---------------------------------------------------------------------------------------------------------
# Part 2: strip_hooks
# ---------------------------------------------------------------------------------------------------------

# Right in every respect: the text the strip_hooks mistakes below change (each says how), not a student's.
_STRIP_RIGHT = '''def strip_hooks(model):
    """Return a deep copy of model with no hook in any of its modules; model itself is not changed."""
    clean = copy.deepcopy(model)
    for module in clean.modules():
        for table in HOOK_TABLES + FLAG_TABLES:
            getattr(module, table).clear()
        module._is_full_backward_hook = None
    return clean
'''

# A deep copy carries every hook along (the lambdas shared with the original), and pickle fails on them.
STRIP_DEEPCOPY_ONLY = '''def strip_hooks(model):
    """Return a deep copy of model with no hook in any of its modules; model itself is not changed."""
    return copy.deepcopy(model)
'''

# Empties the original's tables, then copies: the copy is clean, but the model has lost its hooks.
STRIP_CLEARS_ORIGINAL = SOLUTION.edited_answer(
    _STRIP_RIGHT,
    """
-    clean = copy.deepcopy(model)
-    for module in clean.modules():
+    for module in model.modules():
@@
-    return clean
+    return copy.deepcopy(model)
""",
)

SOLUTION.student(
    "strip_clears_original",
    {"strip_hooks": STRIP_CLEARS_ORIGINAL},
    (0, 0, 0, 2.67, 0, 0),
    breaks={"test_strip_hooks_hidden": 3},
)

# A correct part 2, the straightforward way: deep copy, then empty every table of every module of the copy (rule 2 puts
# hooks that copy.deepcopy refuses, such as a bound method of an object holding a Lock, out of scope; a review).
STRIP_CORRECT_DEEPCOPY_THEN_CLEAR = '''def strip_hooks(model):
    """Return a deep copy of model with no hook in any of its modules; model itself is not changed."""
    clean = copy.deepcopy(model)
    for module in clean.modules():
        for name in HOOK_TABLES + FLAG_TABLES:
            vars(module)[name].clear()
        vars(module)["_is_full_backward_hook"] = None
    return clean
'''

# Empties the eight hook tables of the copy and resets the flag, but leaves the three flag tables
# holding the ids of hooks that are gone (with_kwargs=True, always_call=True).
STRIP_FORGETS_FLAG_TABLES = SOLUTION.edited_answer(
    _STRIP_RIGHT,
    """
-        for table in HOOK_TABLES + FLAG_TABLES:
+        for table in HOOK_TABLES:
""",
)

# Empties all eleven tables of the copy, but leaves _is_full_backward_hook as it was (True or False).
STRIP_FORGETS_BACKWARD_FLAG = SOLUTION.edited_answer(
    _STRIP_RIGHT,
    """
-        module._is_full_backward_hook = None
""",
)

# children() instead of modules(): the root and its direct children are cleaned, grandchildren keep
# their hooks.
STRIP_CHILDREN_ONLY = SOLUTION.edited_answer(
    _STRIP_RIGHT,
    """
-    for module in clean.modules():
+    for module in [clean, *clean.children()]:
""",
)

SOLUTION.student(
    "record_validates_late",
    {"record_activations": RECORD_VALIDATES_LATE, "strip_hooks": STRIP_CHILDREN_ONLY},
    (2, 3.2, 2, 2.67, 0, 0),
    breaks={"test_record_activations_hidden": 1},
)

# Cleans the copy right, then puts it in the root's mode with clean.train(model.training): train() recurses, so a
# submodule that was in another mode than the root loses its own flag.
STRIP_TRAIN_LIKE_ROOT = SOLUTION.edited_answer(
    _STRIP_RIGHT,
    """
-    return clean
+    return clean.train(model.training)
""",
)

SOLUTION.student(
    "record_no_detach",
    {"record_activations": RECORD_NO_DETACH, "strip_hooks": STRIP_CORRECT_DEEPCOPY_THEN_CLEAR},
    (0, 3.2, 2, 4, 0, 0),
)

# ---------------------------------------------------------------------------------------------------------
# Part 3: GradNormMonitor
# ---------------------------------------------------------------------------------------------------------

MONITOR_TEMPLATE = '''class GradNormMonitor:
    """Record the L2 norm of the gradient that reaches the output of each named submodule."""

    def __init__(self, model, names):
        """Check names, then register one full backward hook per distinct module; fill self.norms."""
        every_path = dict(model.named_modules(remove_duplicate=False))
        for name in names:
            if name not in every_path:
                raise KeyError(name)
        canonical = {{id(module): name for name, module in model.named_modules()}}
        chosen = {{}}
        for name in names:
            chosen.setdefault(canonical[id(every_path[name])], every_path[name])
        self.norms = {{name: [] for name in chosen}}
        self._flags = [(module, module._is_full_backward_hook) for module in chosen.values()]
        self._handles = []
        for name, module in chosen.items():
            store = self.norms[name]
            self._handles.append(module.register_full_backward_hook(
                lambda module, grad_input, grad_output, store=store: store.append({record})
            ))

    def remove(self):
        """Remove every hook of this monitor and put back the flags; calling it again does nothing."""
        for handle in self._handles:
            handle.remove()
{restore}        self._handles = []

    def __enter__(self):
        """Give the monitor itself to the with statement."""
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        """Remove the hooks when the block ends; return None, so that an exception propagates."""
{exit}'''

RESTORE = """        for module, flag in self._flags:
            module._is_full_backward_hook = flag
        self._flags = []
"""
NORM = "0.0 if grad_output[0] is None else float(grad_output[0].norm())"
EXIT = "        self.remove()\n"

# Relies on handle.remove() alone: the hooks are gone, but _is_full_backward_hook stays True, so the
# modules refuse an old-style backward hook afterwards.
MONITOR_FLAG_LEFT_SET = MONITOR_TEMPLATE.format(record=NORM, restore="", exit=EXIT)

SOLUTION.student(
    "strip_forgets_flag_tables",
    {"strip_hooks": STRIP_FORGETS_FLAG_TABLES, "grad_norm_monitor": MONITOR_FLAG_LEFT_SET},
    (0, 0, 2, 2.67, 2, 3.2),
    breaks={"test_strip_hooks_hidden": 2, "test_grad_norm_monitor_hidden": 4},
)

# Resets the flag to None instead of putting back the value it had: on a module that had its own full
# backward hook, that hook stops firing (torch reads a None flag as "no full backward hooks").
MONITOR_RESETS_FLAG_TO_NONE = MONITOR_TEMPLATE.format(
    record=NORM,
    restore="        for module, _ in self._flags:\n            module._is_full_backward_hook = None\n",
    exit=EXIT,
)

SOLUTION.student(
    "monitor_resets_flag_to_none", {"grad_norm_monitor": MONITOR_RESETS_FLAG_TO_NONE}, (0, 0, 0, 0, 2, 2.4)
)

# Leaving the with block does nothing: the hooks stay registered and keep recording.
MONITOR_NEVER_REMOVES = MONITOR_TEMPLATE.format(record=NORM, restore=RESTORE, exit="        pass\n")

SOLUTION.student(
    "strip_deepcopy_only",
    {
        "record_activations": RECORD_CORRECT_CLASS,
        "strip_hooks": STRIP_DEEPCOPY_ONLY,
        "grad_norm_monitor": MONITOR_NEVER_REMOVES,
    },
    (2, 4, 0, 2.67, 0, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 5},
)

# Measures grad_input[0], the gradient with respect to the module's input, instead of grad_output[0].
MONITOR_GRAD_INPUT = MONITOR_TEMPLATE.format(
    record="(0.0 if grad_output[0] is None else float(grad_output[0].norm())) if grad_input[0] is None"
    " else float(grad_input[0].norm())",
    restore=RESTORE,
    exit=EXIT,
)

SOLUTION.student(
    "record_hook_returns_output",
    {"record_activations": RECORD_HOOK_RETURNS_OUTPUT, "grad_norm_monitor": MONITOR_GRAD_INPUT},
    (0, 3.2, 0, 0, 0, 3.2),
    breaks={"test_record_activations_hidden": 4},
)

# Stores the 0-dimensional tensors that .norm() returns instead of Python floats.
MONITOR_TENSOR_NORMS = MONITOR_TEMPLATE.format(
    record="torch.zeros(()) if grad_output[0] is None else grad_output[0].norm()", restore=RESTORE, exit=EXIT
)

SOLUTION.student(
    "record_no_finally",
    {"record_activations": RECORD_NO_FINALLY, "grad_norm_monitor": MONITOR_TENSOR_NORMS},
    (2, 3.2, 0, 0, 0, 3.2),
    breaks={"test_record_activations_hidden": 5},
)

# Forgets that grad_output[0] is None when the loss does not use the module's first output: the hook raises
# AttributeError in the middle of backward instead of recording 0.0.
MONITOR_NONE_FAILS = MONITOR_TEMPLATE.format(record="float(grad_output[0].norm())", restore=RESTORE, exit=EXIT)

SOLUTION.student(
    "record_prepends",
    {
        "record_activations": RECORD_PREPENDS,
        "strip_hooks": STRIP_TRAIN_LIKE_ROOT,
        "grad_norm_monitor": MONITOR_NONE_FAILS,
    },
    (2, 3.2, 2, 2.67, 2, 3.2),
    breaks={"test_record_activations_hidden": 2, "test_strip_hooks_hidden": 1, "test_grad_norm_monitor_hidden": 2},
)

# Records through a list comprehension over grad_output[:1], which the lambda returns: [None]. torch takes that
# list as the new grad_input, so the gradient stops at the module (nothing upstream of it gets one).
MONITOR_HOOK_RETURNS_LIST = MONITOR_TEMPLATE.format(record=NORM, restore=RESTORE, exit=EXIT).replace(
    f"store.append({NORM})",
    "[store.append(0.0 if gradient is None else float(gradient.norm())) for gradient in grad_output[:1]]",
)

SOLUTION.student(
    "record_detaches_first_level",
    {"record_activations": RECORD_DETACHES_FIRST_LEVEL, "grad_norm_monitor": MONITOR_HOOK_RETURNS_LIST},
    (2, 3.2, 0, 0, 0, 3.2),
    breaks={"test_record_activations_hidden": 3, "test_grad_norm_monitor_hidden": 3},
)

# The hook hands grad_input back: the gradients stay as they were, but rule 3 asks the hook to return None (a review).
MONITOR_RETURNS_GRAD_INPUT = MONITOR_TEMPLATE.format(record=NORM, restore=RESTORE, exit=EXIT).replace(
    f"store.append({NORM})", f"(store.append({NORM}), grad_input)[1]"
)

SOLUTION.student(
    "monitor_returns_grad_input",
    {"grad_norm_monitor": MONITOR_RETURNS_GRAD_INPUT},
    (0, 0, 0, 0, 2, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 3},
)

# Rounds each norm to 6 decimals: a vanishing gradient's norm (1e-8) is recorded as 0.0 (a review).
MONITOR_ROUNDS_NORMS = MONITOR_TEMPLATE.format(
    record="0.0 if grad_output[0] is None else round(float(grad_output[0].norm()), 6)", restore=RESTORE, exit=EXIT
)

SOLUTION.student(
    "monitor_rounds_norms",
    {"grad_norm_monitor": MONITOR_ROUNDS_NORMS},
    (0, 0, 0, 0, 2, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 2},
)

# Computes the norm in float32: inf for a float64 gradient of size 1e30 (a review).
MONITOR_FLOAT32_NORMS = MONITOR_TEMPLATE.format(
    record="0.0 if grad_output[0] is None else float(grad_output[0].float().norm())", restore=RESTORE, exit=EXIT
)

SOLUTION.student(
    "monitor_float32_norms",
    {"grad_norm_monitor": MONITOR_FLOAT32_NORMS},
    (0, 0, 0, 0, 2, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 2},
)

# One hook per requested name, keyed by the requested name: a shared submodule gets two hooks.
MONITOR_HOOK_PER_NAME = '''class GradNormMonitor:
    """Record the L2 norm of the gradient that reaches the output of each named submodule."""

    def __init__(self, model, names):
        """Check names, then register one full backward hook per distinct module; fill self.norms."""
        modules = dict(model.named_modules(remove_duplicate=False))
        for name in names:
            if name not in modules:
                raise KeyError(name)
        self.norms = {name: [] for name in names}
        self._flags = [(modules[name], modules[name]._is_full_backward_hook) for name in self.norms]
        self._handles = []
        for name in self.norms:
            store = self.norms[name]
            self._handles.append(modules[name].register_full_backward_hook(
                lambda module, grad_input, grad_output, store=store: store.append(
                    0.0 if grad_output[0] is None else float(grad_output[0].norm())
                )
            ))

    def remove(self):
        """Remove every hook of this monitor and put back the flags; calling it again does nothing."""
        for handle in self._handles:
            handle.remove()
        for module, flag in reversed(self._flags):
            module._is_full_backward_hook = flag
        self._handles, self._flags = [], []

    def __enter__(self):
        """Give the monitor itself to the with statement."""
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        """Remove the hooks when the block ends; return None, so that an exception propagates."""
        self.remove()
'''

SOLUTION.student(
    "hook_per_name",
    {"record_activations": RECORD_HOOK_PER_NAME, "grad_norm_monitor": MONITOR_HOOK_PER_NAME},
    (2, 0.8, 0, 0, 2, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 1},
)

# A correct part 3 written differently: torch.linalg.vector_norm, handles kept per module, and the flag
# put back to None only where it was None before.
MONITOR_CORRECT_ALTERNATIVE = '''class GradNormMonitor:
    """Record the L2 norm of the gradient that reaches the output of each named submodule."""

    def __init__(self, model, names):
        """Check names, then register one full backward hook per distinct module; fill self.norms."""
        by_path = dict(model.named_modules(remove_duplicate=False))
        unknown = [name for name in names if name not in by_path]
        if unknown:
            raise KeyError(f"not a submodule: {unknown[0]!r}")
        first = {}
        for name, module in model.named_modules():
            first.setdefault(id(module), name)
        self.norms = {}
        self._hooked = []  # (module, handle, flag before)
        targets = {}
        for name in names:
            targets.setdefault(first[id(by_path[name])], by_path[name])
        for name, module in targets.items():
            self.norms[name] = []
        for name, module in targets.items():
            flag = module._is_full_backward_hook
            handle = module.register_full_backward_hook(self._recorder(name))
            self._hooked.append((module, handle, flag))

    def _recorder(self, name):
        def hook(module, grad_input, grad_output):
            gradient = grad_output[0]
            self.norms[name].append(0.0 if gradient is None else torch.linalg.vector_norm(gradient).item())

        return hook

    def remove(self):
        """Remove every hook of this monitor and put back the flags; calling it again does nothing."""
        while self._hooked:
            module, handle, flag = self._hooked.pop()
            handle.remove()
            if flag is None:
                module._is_full_backward_hook = None

    def __enter__(self):
        """Give the monitor itself to the with statement."""
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        """Remove the hooks when the block ends; return None, so that an exception propagates."""
        self.remove()
'''

SOLUTION.student(
    "strip_forgets_backward_flag",
    {"strip_hooks": STRIP_FORGETS_BACKWARD_FLAG, "grad_norm_monitor": MONITOR_CORRECT_ALTERNATIVE},
    (0, 0, 2, 2.67, 2, 4),
)
SOLUTION.control(
    "alternative_correct",
    {
        "record_activations": RECORD_CORRECT_CLASS,
        "strip_hooks": STRIP_CORRECT_DEEPCOPY_THEN_CLEAR,
        "grad_norm_monitor": MONITOR_CORRECT_ALTERNATIVE,
    },
)


# ---------------------------------------------------------------------------------------------------------
# Issue 28: answers an independent review wrote from the released notebook that once earned full marks. Each is the
# solution with one change; the other parts are the solution's.
# ---------------------------------------------------------------------------------------------------------


def _with_solution(**answers: str) -> dict:
    """The solution's cells, with these answers in place of theirs."""
    return {**SOLUTION.cells, **answers}


# Also converts a dict output, detaching the tensors in a new dict: rule 3 stores anything but a tensor, a tuple or a
# list as it is (only a generated case's module returns a dict).
SOLUTION.student(
    "record_detaches_dict_values",
    _with_solution(
        record_activations=SOLUTION.edited(
            "record_activations",
            """
-        return value  # None, an int, ...: kept as it is
+        if isinstance(value, dict):
+            return {key: safe(item) for key, item in value.items()}
+        return value
""",
        )
    ),
    (2, 3.2, 2, 4, 2, 4),
    breaks={"test_record_activations_hidden": 3},
    generated_only=("test_record_activations_hidden",),
)

# Removes its hooks in `except Exception:` and after a normal exit: a KeyboardInterrupt in the body (a BaseException)
# leaves them registered (only a generated case interrupts the body).
SOLUTION.student(
    "record_removes_on_exception_only",
    _with_solution(
        record_activations=SOLUTION.edited(
            "record_activations",
            """
-    finally:  # runs when the block ends, whether the body returned or raised
-        for handle in handles:  # remove() also clears the flag tables
-            handle.remove()
+    except Exception:
+        for handle in handles:
+            handle.remove()
+        raise
+    for handle in handles:
+        handle.remove()
""",
        )
    ),
    (2, 3.2, 2, 4, 2, 4),
    breaks={"test_record_activations_hidden": 5},
    generated_only=("test_record_activations_hidden",),
)

# The hook returns the output it was given, unchanged: torch then "replaces" the output by the same object, so nothing
# the model computes changes, but rule 4 asks for None (a fixed case calls the hook itself).
SOLUTION.student(
    "record_hook_returns_same_output",
    _with_solution(
        record_activations=SOLUTION.edited(
            "record_activations",
            """
-            store.append(safe(output))  # returns None: the output is left as it is
+            store.append(safe(output))
+            return output
""",
        )
    ),
    (2, 3.2, 2, 4, 2, 4),
    breaks={"test_record_activations_hidden": 4},
)

# Stores output.detach().clone(): the same values, but a copy in memory of its own, where rule 3 asks for
# output.detach() (no copy).
SOLUTION.student(
    "record_detach_clone",
    _with_solution(
        record_activations=SOLUTION.edited(
            "record_activations",
            """
-            return value.detach()  # same values, out of the graph
+            return value.detach().clone()
""",
        )
    ),
    (2, 3.2, 2, 4, 2, 4),
    breaks={"test_record_activations_hidden": 3},
)

# Copies with a pickle round trip while the tables are swapped out for empty ones: a model that holds anything pickle
# refuses besides its hooks (a lambda in a plain attribute) cannot be copied at all.
SOLUTION.student(
    "strip_pickle_round_trip",
    _with_solution(
        strip_hooks=SOLUTION.edited(
            "strip_hooks",
            """
-    clean = copy.deepcopy(model, memo)
+    import pickle
+
+    saved = [(module, table, vars(module)[table]) for module in model.modules() for table in HOOK_TABLES + FLAG_TABLES]
+    try:
+        for module, table, _ in saved:
+            vars(module)[table] = OrderedDict()
+        clean = pickle.loads(pickle.dumps(model))
+    finally:
+        for module, table, value in saved:
+            vars(module)[table] = value
""",
        )
    ),
    (2, 4, 2, 2.67, 2, 4),
    breaks={"test_strip_hooks_hidden": 1},
)

# Maps every table to one shared empty OrderedDict: all the copy's tables are one object, so a hook registered on the
# copy later lands in every table of every module (only the generated cases look at the tables' identity).
SOLUTION.student(
    "strip_one_shared_table",
    _with_solution(
        strip_hooks=SOLUTION.edited(
            "strip_hooks",
            """
-    memo = {}
+    memo, empty = {}, OrderedDict()
@@
-            memo[id(vars(module)[table])] = OrderedDict()
+            memo[id(vars(module)[table])] = empty
""",
        )
    ),
    (2, 4, 2, 2.67, 2, 4),
    breaks={"test_strip_hooks_hidden": 2},
    generated_only=("test_strip_hooks_hidden",),
)

# remove() resets the flag to None where no backward hook is left instead of putting back the value it had: a module
# whose own full backward hook was removed before (flag True) ends with None.
SOLUTION.student(
    "monitor_flag_none_if_no_hook_left",
    _with_solution(
        grad_norm_monitor=SOLUTION.edited(
            "grad_norm_monitor",
            """
-            module._is_full_backward_hook = flag
+            if not module._backward_hooks:
+                module._is_full_backward_hook = None
""",
        )
    ),
    (2, 4, 2, 4, 2, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 4},
)

# remove() keeps the saved flags: a second call puts them back again, over a full backward hook registered between
# the two calls, which then never fires.
SOLUTION.student(
    "monitor_second_remove_restores_again",
    _with_solution(
        grad_norm_monitor=SOLUTION.edited(
            "grad_norm_monitor",
            """
-        self._handles, self._flags = [], []
+        self._handles = []
""",
        )
    ),
    (2, 4, 2, 4, 2, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 4},
)

# The norm by hand, as the square root of a sum of squares in the gradient's own dtype: in float16 the squares
# overflow to inf where Tensor.norm() gives the norm.
SOLUTION.student(
    "monitor_sum_of_squares",
    _with_solution(
        grad_norm_monitor=SOLUTION.edited(
            "grad_norm_monitor",
            """
-                store.append(0.0 if gradient is None else float(gradient.norm()))  # returns None: nothing replaced
+                store.append(0.0 if gradient is None else float(gradient.pow(2).sum()) ** 0.5)
""",
        )
    ),
    (2, 4, 2, 4, 2, 3.2),
    breaks={"test_grad_norm_monitor_hidden": 2},
)

# Keeps a collections.namedtuple (or typing.NamedTuple) output as its own class, rebuilt from its converted items:
# rule 3 turns every tuple subclass into a plain tuple (torch.return_types.topk, which has no _fields, alike).
SOLUTION.student(
    "record_keeps_namedtuple_class",
    _with_solution(
        record_activations=SOLUTION.edited(
            "record_activations",
            """
-            return tuple(safe(item) for item in value)
+            items = [safe(item) for item in value]
+            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
""",
        )
    ),
    (2, 3.2, 2, 4, 2, 4),
    breaks={"test_record_activations_hidden": 3},
)

# Detaches only an output that requires grad: after a forward under torch.no_grad() the entry is the output object
# itself, where rule 3 asks for output.detach() (a new tensor object) always.
SOLUTION.student(
    "record_skips_detach_without_grad",
    _with_solution(
        record_activations=SOLUTION.edited(
            "record_activations",
            """
-            return value.detach()  # same values, out of the graph
+            return value.detach() if value.requires_grad else value
""",
        )
    ),
    (2, 3.2, 2, 4, 2, 4),
    breaks={"test_record_activations_hidden": 3},
)

# Stores output.data: the same values in the same memory, out of the graph, but with a version counter of its own
# (an in-place change of the output later leaves the entry's _version behind), where rule 3 asks for output.detach().
SOLUTION.student(
    "record_data_not_detach",
    _with_solution(
        record_activations=SOLUTION.edited(
            "record_activations",
            """
-            return value.detach()  # same values, out of the graph
+            return value.data
""",
        )
    ),
    (2, 3.2, 2, 4, 2, 4),
    breaks={"test_record_activations_hidden": 3},
)

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
GENERATED_ONLY = SOLUTION.generated_only
