"""Typical answers to exercise 8 and the points each graded cell must give them (grader/scripted.py)."""

from grader.scripted import Solution

# The students' points are given for the notebook's graded test cells, in this order.
SOLUTION = Solution(
    __file__,
    points_of=("test_call_with_visible", "test_call_with_hidden", "test_apply_once_visible", "test_apply_once_hidden"),
)

# ---------------------------------------------------------------------------------------------------------
# Part 1: call_with
# ---------------------------------------------------------------------------------------------------------

# Right in every respect: the text the call_with mistakes below change (each says how), not a student's.
_CALL_RIGHT = '''def call_with(module, tensors, *args):
    """Call module(*args) with the named parameters and buffers replaced by the given tensors; restore them after."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    for name in tensors:
        if name not in named:
            raise KeyError(name)
    replacement = {id(named[name]): tensor for name, tensor in tensors.items()}
    entries = [(registry, key, value) for owner in module.modules()
               for registry in (owner._parameters, owner._buffers)
               for key, value in registry.items() if value is not None and id(value) in replacement]
    for registry, key, value in entries:
        registry[key] = replacement[id(value)]
    try:
        return module(*args)
    finally:
        for registry, key, value in entries:
            registry[key] = value
'''

# Swaps and restores, but without a finally: a call that raises leaves the given tensors in the module.
CALL_NO_FINALLY = SOLUTION.edited_answer(
    _CALL_RIGHT,
    """
-    try:
-        return module(*args)
-    finally:
-        for registry, key, value in entries:
-            registry[key] = value
+    out = module(*args)
+    for registry, key, value in entries:
+        registry[key] = value
+    return out
""",
)

SOLUTION.student("call_no_finally", {"call_with": CALL_NO_FINALLY}, (0, 3.2, 0, 0), breaks={"test_call_with_hidden": 5})

# Goes through setattr, wrapping each tensor in a new Parameter where a Parameter was (a plain tensor would be
# refused there): the module computes with a copy of the given tensor's role, and gradients stop at the wrapper.
CALL_WRAPS_IN_PARAMETER = '''def call_with(module, tensors, *args):
    """Call module(*args) with the named parameters and buffers replaced by the given tensors; restore them after."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    for name in tensors:
        if name not in named:
            raise KeyError(name)
    saved = []
    try:
        for name, tensor in tensors.items():
            owner_name, _, key = name.rpartition(".")
            owner = module.get_submodule(owner_name)
            old = getattr(owner, key)
            saved.append((owner, key, old))
            setattr(owner, key, nn.Parameter(tensor) if isinstance(old, nn.Parameter) else tensor)
        return module(*args)
    finally:
        for owner, key, old in reversed(saved):
            setattr(owner, key, old)
'''

SOLUTION.student("call_wraps_in_parameter", {"call_with": CALL_WRAPS_IN_PARAMETER}, (0, 3.2, 0, 0))

# Copies the values into the module's own tensors and back: the registries never change, and nothing reaches the
# given tensors (no gradient, no in-place update).
CALL_COPIES_VALUES = '''def call_with(module, tensors, *args):
    """Call module(*args) with the named parameters and buffers replaced by the given tensors; restore them after."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    for name in tensors:
        if name not in named:
            raise KeyError(name)
    saved = [(named[name], named[name].detach().clone()) for name in tensors]
    try:
        with torch.no_grad():
            for name, tensor in tensors.items():
                named[name].copy_(tensor)
        return module(*args)
    finally:
        with torch.no_grad():
            for own, value in saved:
                own.copy_(value)
'''

SOLUTION.student("call_copies_values", {"call_with": CALL_COPIES_VALUES}, (0, 3.2, 0, 0))

# Delegates to functional_call after checking the names: a module registered under several names keeps the
# given tensor after the call (functional_call's restore swaps the same slot twice).
CALL_DELEGATES = '''def call_with(module, tensors, *args):
    """Call module(*args) with the named parameters and buffers replaced by the given tensors; restore them after."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    for name in tensors:
        if name not in named:
            raise KeyError(f"unknown name {name!r}")
    return functional_call(module, tensors, args)
'''

SOLUTION.student("call_delegates", {"call_with": CALL_DELEGATES}, (0, 3.2, 0, 0))

# Replaces only the entry the name points to: a weight tied to another module's keeps its old value there.
CALL_NAMED_ENTRY_ONLY = SOLUTION.edited_answer(
    CALL_WRAPS_IN_PARAMETER,
    """
-            old = getattr(owner, key)
-            saved.append((owner, key, old))
-            setattr(owner, key, nn.Parameter(tensor) if isinstance(old, nn.Parameter) else tensor)
+            registry = owner._parameters if key in owner._parameters else owner._buffers
+            saved.append((registry, key, registry[key]))
+            registry[key] = tensor
@@
-        for owner, key, old in reversed(saved):
-            setattr(owner, key, old)
+        for registry, key, value in reversed(saved):
+            registry[key] = value
""",
)

SOLUTION.student(
    "call_named_entry_only", {"call_with": CALL_NAMED_ENTRY_ONLY}, (2, 3.2, 0, 0), breaks={"test_call_with_hidden": 3}
)

# Checks each name while swapping: a bad name after good ones raises with the good ones still swapped in.
CALL_CHECKS_WHILE_SWAPPING = '''def call_with(module, tensors, *args):
    """Call module(*args) with the named parameters and buffers replaced by the given tensors; restore them after."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    entries = []
    for name, tensor in tensors.items():
        if name not in named:
            raise KeyError(name)
        old = named[name]
        for owner in module.modules():
            for registry in (owner._parameters, owner._buffers):
                for key, value in list(registry.items()):
                    if value is old:
                        entries.append((registry, key, value))
                        registry[key] = tensor
    try:
        return module(*args)
    finally:
        for registry, key, value in reversed(entries):
            registry[key] = value
'''

# A correct part 1 written differently: the entries found by walking vars() of every module, restored in reverse.
CALL_CORRECT_BY_VARS = '''def call_with(module, tensors, *args):
    """Call module(*args) with the named parameters and buffers replaced by the given tensors; restore them after."""
    valid = {name: value for name, value in module.named_parameters(remove_duplicate=False)}
    valid.update(module.named_buffers(remove_duplicate=False))
    unknown = [name for name in tensors if name not in valid]
    if unknown:
        raise KeyError(f"no parameter or buffer named {unknown[0]!r}")
    swaps = []
    for name, tensor in tensors.items():
        for owner in module.modules():
            for registry_name in ("_parameters", "_buffers"):
                registry = vars(owner)[registry_name]
                for key in registry:
                    if registry[key] is valid[name]:
                        swaps.append((registry, key, registry[key], tensor))
    try:
        for registry, key, _, tensor in swaps:
            registry[key] = tensor
        return module(*args)
    finally:
        for registry, key, old, _ in reversed(swaps):
            registry[key] = old
'''

# named_parameters() and named_buffers() with their defaults: a shared module's or a tied weight's second name is
# not among them, so it is refused as unknown.
CALL_DEDUPLICATED_NAMES = SOLUTION.edited_answer(
    CALL_CORRECT_BY_VARS,
    """
-    valid = {name: value for name, value in module.named_parameters(remove_duplicate=False)}
-    valid.update(module.named_buffers(remove_duplicate=False))
+    valid = {name: value for name, value in module.named_parameters()}
+    valid.update(module.named_buffers())
""",
)

# The call inside try has no return: the swaps and the restore are right, but call_with returns None.
CALL_FORGETS_RETURN = SOLUTION.edited_answer(
    CALL_CORRECT_BY_VARS,
    """
-        return module(*args)
+        module(*args)
""",
)

SOLUTION.student(
    "call_forgets_return", {"call_with": CALL_FORGETS_RETURN}, (0, 0, 0, 0), breaks={"test_call_with_hidden": 4}
)

# Takes the valid names from state_dict(): every name but those of non-persistent buffers, which it refuses with
# a KeyError (issue 28).
CALL_STATE_DICT_NAMES = SOLUTION.edited(
    "call_with",
    """
-        if name not in named:
+        if name not in module.state_dict(keep_vars=True):
""",
)

SOLUTION.student(
    "call_state_dict_names",
    {"call_with": CALL_STATE_DICT_NAMES},
    (2, 3.2, 0, 0),
    generated_only=("test_call_with_hidden",),
)

# Restores the entries in `except Exception:` and after a return: a call interrupted by what is no Exception
# (KeyboardInterrupt, SystemExit) leaves the given tensors in the module (issue 28).
CALL_RESTORES_ON_EXCEPTION_ONLY = SOLUTION.edited(
    "call_with",
    """
-        return module(*args)
-    finally:
-        for registry, key, value in entries:
-            registry[key] = value
+        result = module(*args)
+    except Exception:
+        for registry, key, value in entries:
+            registry[key] = value
+        raise
+    for registry, key, value in entries:
+        registry[key] = value
+    return result
""",
)

SOLUTION.student(
    "call_restores_on_exception_only",
    {"call_with": CALL_RESTORES_ON_EXCEPTION_ONLY},
    (2, 3.2, 0, 0),
    breaks={"test_call_with_hidden": 5},
)

# Puts a buffer back with register_buffer(key, old), whose default is persistent=True: a non-persistent buffer
# given to the call comes back persistent, in state_dict() (issue 28).
CALL_RESTORES_WITH_REGISTER_BUFFER = SOLUTION.edited(
    "call_with",
    """
-        (registry, key, value)
+        (owner, registry, key, value)
@@
-        for registry, key, value in entries:
-            registry[key] = replacement[id(value)]
+        for _, registry, key, value in entries:
+            registry[key] = replacement[id(value)]
@@
-    finally:
-        for registry, key, value in entries:
-            registry[key] = value
+    finally:
+        for owner, registry, key, value in entries:
+            if registry is owner._buffers:
+                owner.register_buffer(key, value)
+            else:
+                registry[key] = value
""",
)

SOLUTION.student(
    "call_restores_with_register_buffer",
    {"call_with": CALL_RESTORES_WITH_REGISTER_BUFFER},
    (2, 3.2, 0, 0),
    breaks={"test_call_with_hidden": 5},
)

# Puts each entry back by popping the given tensor and inserting its own object again: the right objects, but each
# given entry moves to the end of its registry, so named_parameters() and state_dict() list the names in another
# order afterwards (a review).
CALL_RESTORES_TO_THE_END = SOLUTION.edited(
    "call_with",
    """
     finally:
         for registry, key, value in entries:
-            registry[key] = value
+            registry.pop(key)
+            registry[key] = value
""",
)

SOLUTION.student(
    "call_restores_to_the_end",
    {"call_with": CALL_RESTORES_TO_THE_END},
    (2, 3.2, 0, 0),
    breaks={"test_call_with_hidden": 5},
)

# Hands back a tuple as a plain tuple: the very object for a tuple, a copy of another class for a named tuple
# (a review).
CALL_PLAIN_TUPLE = SOLUTION.edited(
    "call_with",
    """
-        return module(*args)
+        result = module(*args)
+        return tuple(result) if isinstance(result, tuple) else result
""",
)

SOLUTION.student(
    "call_plain_tuple", {"call_with": CALL_PLAIN_TUPLE}, (2, 3.2, 0, 0), breaks={"test_call_with_hidden": 4}
)

# Takes a name as valid when its owner has a tensor attribute of that name, and swaps only the registered ones: a
# plain tensor attribute, or a parametrized weight's own name, is accepted (issue 28).
CALL_ACCEPTS_TENSOR_ATTRIBUTES = SOLUTION.edited(
    "call_with",
    """
     for name in tensors:
-        if name not in named:
+        prefix, _, key = name.rpartition(".")
+        try:
+            owner = module.get_submodule(prefix)
+        except AttributeError:
+            owner = None
+        if not isinstance(getattr(owner, key, None), torch.Tensor):
             raise KeyError(f"{name!r} is not the name of a parameter or buffer of the module")
-    replacement = {id(named[name]): tensor for name, tensor in tensors.items()}
+    replacement = {id(named[name]): tensor for name, tensor in tensors.items() if name in named}
""",
)

SOLUTION.student(
    "call_accepts_tensor_attributes",
    {"call_with": CALL_ACCEPTS_TENSOR_ATTRIBUTES},
    (2, 3.2, 0, 0),
    breaks={"test_call_with_hidden": 2},
)

# Writes the quotes around the name by hand: the same as repr for most names, not for a name holding a quote
# (issue 28).
CALL_QUOTES_BY_HAND = SOLUTION.edited(
    "call_with",
    """
-            raise KeyError(f"{name!r} is not the name of a parameter or buffer of the module")
+            raise KeyError(f"'{name}' is not the name of a parameter or buffer of the module")
""",
)

SOLUTION.student(
    "call_quotes_by_hand", {"call_with": CALL_QUOTES_BY_HAND}, (2, 3.2, 0, 0), breaks={"test_call_with_hidden": 2}
)


# ---------------------------------------------------------------------------------------------------------
# Part 2: apply_once
# ---------------------------------------------------------------------------------------------------------

# Calls apply(): a module registered under two parents is visited twice.
APPLY_DIRECT = '''def apply_once(model, fn):
    """Call fn on every module of model once, in the order apply() first reaches it; return model."""
    return model.apply(fn)
'''

SOLUTION.student("apply_direct", {"apply_once": APPLY_DIRECT}, (0, 0, 0, 0))  # breaks rules 1 and 5

# Walks modules(): each module once, but parents before children.
APPLY_PREORDER = SOLUTION.edited_answer(
    APPLY_DIRECT,
    """
-    return model.apply(fn)
+    for module in model.modules():
+        fn(module)
+    return model
""",
)

SOLUTION.student("apply_preorder", {"apply_once": APPLY_PREORDER}, (0, 0, 0, 3.2), breaks={"test_apply_once_hidden": 2})

# Keeps the last visit of a shared module instead of the first.
APPLY_LAST_VISIT = '''def apply_once(model, fn):
    """Call fn on every module of model once, in the order apply() first reaches it; return model."""
    visits = []
    model.apply(visits.append)
    last = {id(module): index for index, module in enumerate(visits)}
    for index, module in enumerate(visits):
        if last[id(module)] == index:
            fn(module)
    return model
'''

SOLUTION.student("apply_last_visit", {"apply_once": APPLY_LAST_VISIT}, (0, 0, 0, 0))

# Walks _modules itself and forgets that a child can be None.
APPLY_NONE_CHILD = SOLUTION.edited(
    "apply_once",
    """
-    visited = set()
+    seen = set()
@@
-        for child in module.children():  # children() skips None, as apply() does
+        for child in module._modules.values():
@@
-        if id(module) not in visited:  # the first time apply() would call fn on it
-            visited.add(id(module))
+        if id(module) not in seen:
+            seen.add(id(module))
""",
)

SOLUTION.student(
    "apply_none_child",
    {"call_with": CALL_CORRECT_BY_VARS, "apply_once": APPLY_NONE_CHILD},
    (2, 4, 2, 3.2),
    breaks={"test_apply_once_hidden": 3},
)

# A correct part 2 written differently: an explicit stack instead of recursion.
APPLY_CORRECT_STACK = '''def apply_once(model, fn):
    """Call fn on every module of model once, in the order apply() first reaches it; return model."""
    done = set()
    stack = [(model, False)]
    while stack:
        module, expanded = stack.pop()
        if expanded:
            if id(module) not in done:
                done.add(id(module))
                fn(module)
            continue
        stack.append((module, True))
        for child in reversed(list(module.children())):
            stack.append((child, False))
    return model
'''

SOLUTION.student(
    "call_checks_while_swapping",
    {"call_with": CALL_CHECKS_WHILE_SWAPPING, "apply_once": APPLY_CORRECT_STACK},
    (2, 3.2, 2, 4),
    breaks={"test_call_with_hidden": 2},
)
SOLUTION.student(
    "call_deduplicated_names",
    {"call_with": CALL_DEDUPLICATED_NAMES, "apply_once": APPLY_CORRECT_STACK},
    (2, 3.2, 2, 4),
    breaks={"test_call_with_hidden": 1},
)
SOLUTION.control("alternative_correct", {"call_with": CALL_CORRECT_BY_VARS, "apply_once": APPLY_CORRECT_STACK})

# The right visits in the right order, but the model is not returned (fn's results were the point).
APPLY_RETURNS_NONE = SOLUTION.edited_answer(
    APPLY_CORRECT_STACK,
    """
-    return model
""",
)

SOLUTION.student(
    "apply_returns_none",
    {"call_with": CALL_CORRECT_BY_VARS, "apply_once": APPLY_RETURNS_NONE},
    (2, 4, 0, 0),
    breaks={"test_apply_once_hidden": 4},
)

# The shortcut rule 5 forbids: apply does the walk, a set of the modules already seen drops the repeats. Its
# visits are exactly right; the understanding of apply's order is never needed.
APPLY_DEDUPLICATED_APPLY = '''def apply_once(model, fn):
    """Call fn on every module of model once, in the order apply() first reaches it; return model."""
    seen = set()

    def first_time(module):
        if id(module) not in seen:
            seen.add(id(module))
            fn(module)

    model.apply(first_time)
    return model
'''

SOLUTION.student(
    "apply_deduplicated_apply",
    {"call_with": CALL_CORRECT_BY_VARS, "apply_once": APPLY_DEDUPLICATED_APPLY},
    (2, 4, 0, 0),
    breaks={"test_apply_once_hidden": 5},
)

# A walk of its own, in apply's order, but without memory: what apply itself does, a module under two parents
# visited twice.
APPLY_OWN_WALK_TWICE = '''def apply_once(model, fn):
    """Call fn on every module of model once, in the order apply() first reaches it; return model."""
    for child in model.children():
        apply_once(child, fn)
    fn(model)
    return model
'''

SOLUTION.student(
    "apply_own_walk_twice", {"apply_once": APPLY_OWN_WALK_TWICE}, (0, 0, 0, 3.2), breaks={"test_apply_once_hidden": 1}
)

# A reviewer's answer (issue 25): the same shortcut, apply run in another thread so that a profile of the calling
# thread alone would not see it.
APPLY_IN_THREAD = SOLUTION.edited_answer(
    APPLY_DEDUPLICATED_APPLY,
    """
-    model.apply(first_time)
+    import threading
+
+    worker = threading.Thread(target=model.apply, args=(first_time,))
+    worker.start()
+    worker.join()
""",
)

SOLUTION.student("apply_in_thread", {"call_with": CALL_CORRECT_BY_VARS, "apply_once": APPLY_IN_THREAD}, (2, 4, 0, 0))

# The same shortcut, apply run where a profile of this process does not reach: in a thread that _thread starts (no
# threading, no profile), in a child process while a profiler watches, with the profiler switched off for the call,
# or as a copy of apply compiled from its source. The grading sandbox's guard sees each (rule 5).
APPLY_IN_RAW_THREAD = SOLUTION.edited_answer(
    APPLY_DEDUPLICATED_APPLY,
    """
-    model.apply(first_time)
+    import _thread
+
+    done = _thread.allocate_lock()
+    done.acquire()
+    _thread.start_new_thread(lambda: (model.apply(first_time), done.release()), ())
+    done.acquire()
""",
)

APPLY_IN_FORK_WHEN_WATCHED = '''def apply_once(model, fn):
    """Call fn on every module of model once, in the order apply() first reaches it; return model."""
    import os
    import sys

    modules, order = list(model.modules()), []
    if sys.getprofile() is None:
        model.apply(lambda module: order.append(modules.index(module)))
    else:  # watched: apply walks in a child process, which sends the order of its visits back
        reading, writing = os.pipe()
        if os.fork() == 0:
            model.apply(lambda module: order.append(modules.index(module)))
            os.write(writing, bytes(order))
            os._exit(0)
        os.close(writing)
        while chunk := os.read(reading, 4096):
            order += chunk
        os.close(reading)
        os.wait()
    for index in dict.fromkeys(order):
        fn(modules[index])
    return model
'''

APPLY_WITH_PROFILER_OFF = SOLUTION.edited_answer(
    APPLY_DEDUPLICATED_APPLY,
    """
-    model.apply(first_time)
+    import sys
+
+    profile = sys.getprofile()
+    sys.setprofile(None)
+    try:
+        model.apply(first_time)
+    finally:
+        sys.setprofile(profile)
""",
)

APPLY_FROM_SOURCE = SOLUTION.edited_answer(
    APPLY_DEDUPLICATED_APPLY,
    """
-    model.apply(first_time)
+    import inspect
+    import textwrap
+
+    source = textwrap.dedent(inspect.getsource(nn.Module.apply)).replace("module.apply(fn)", "walk(module, fn)")
+    copied = {}
+    exec("from __future__ import annotations\\n" + source.replace("def apply(", "def walk("), copied)
+    copied["walk"](model, first_time)
""",
)

for _student, _answer in (
    ("apply_in_raw_thread", APPLY_IN_RAW_THREAD),
    ("apply_in_fork_when_watched", APPLY_IN_FORK_WHEN_WATCHED),
    ("apply_with_profiler_off", APPLY_WITH_PROFILER_OFF),
    ("apply_from_source", APPLY_FROM_SOURCE),
):
    SOLUTION.student(
        _student,
        {"call_with": CALL_CORRECT_BY_VARS, "apply_once": _answer},
        (2, 4, 0, 0),
        breaks={"test_apply_once_hidden": 5},
    )

# Returns what the walk returns: the model for a model with children, but fn's result for a model without any (an
# nn.init function returns its tensor) (issue 28).
APPLY_RETURNS_FN_RESULT_FOR_LEAF = SOLUTION.edited(
    "apply_once",
    """
-            fn(module)
+            return fn(module)
@@
-    visit(model)
-    return model
+    returned = visit(model)
+    return model if list(model.children()) or returned is None else returned
""",
)

SOLUTION.student(
    "apply_returns_fn_result_for_leaf",
    {"apply_once": APPLY_RETURNS_FN_RESULT_FOR_LEAF},
    (0, 0, 2, 3.2),
    breaks={"test_apply_once_hidden": 4},
)

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
GENERATED_ONLY = SOLUTION.generated_only
