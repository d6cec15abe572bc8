"""Typical answers to exercise 7 and the points each graded cell must give them (grader/scripted.py)."""

from grader.scripted import Solution

# The students' points are given for the notebook's graded test cells, in this order.
SOLUTION = Solution(
    __file__,
    points_of=("test_export_visible", "test_export_hidden", "test_materialize_visible", "test_materialize_hidden"),
)

# ---------------------------------------------------------------------------------------------------------
# Part 1: export_plain_state_dict
# ---------------------------------------------------------------------------------------------------------

# Renames the keys but keeps the stored originals: the values are not the ones the model uses.
EXPORT_ORIGINAL_VALUES = '''def export_plain_state_dict(model):
    """Return model's state_dict with every parametrized tensor under its plain key, holding its computed value."""
    return {key.replace("parametrizations.", "").replace(".original", ""): value
            for key, value in model.state_dict().items()}
'''

SOLUTION.student("export_original_values", {"export_plain_state_dict": EXPORT_ORIGINAL_VALUES}, (0, 2, 0, 0))

# Removes the parametrizations from the model itself: right keys and values, and the model is changed for good.
EXPORT_REMOVES_ON_MODEL = '''def export_plain_state_dict(model):
    """Return model's state_dict with every parametrized tensor under its plain key, holding its computed value."""
    for module in model.modules():
        while parametrize.is_parametrized(module):
            name = next(iter(module.parametrizations))
            parametrize.remove_parametrizations(module, name, leave_parametrized=True)
    return dict(model.state_dict())
'''

# It also drops a parametrization's own parameters, which removing the parametrization takes away (rules 2 and 3).
SOLUTION.student("export_removes_on_model", {"export_plain_state_dict": EXPORT_REMOVES_ON_MODEL}, (0, 1, 0, 0))

# Removes them from a deep copy: the copy shares its generated class with the model, so removing the property
# from the copy's class breaks the model (and the key order follows the copy, not the model).
EXPORT_DEEPCOPY_REMOVE = SOLUTION.edited_answer(
    EXPORT_REMOVES_ON_MODEL,
    """
-    for module in model.modules():
+    import copy
+
+    plain = copy.deepcopy(model)
+    for module in plain.modules():
@@
-    return dict(model.state_dict())
+    return dict(plain.state_dict())
""",
)

SOLUTION.student("export_deepcopy_remove", {"export_plain_state_dict": EXPORT_DEEPCOPY_REMOVE}, (0, 0, 0, 0))

# Computes the values with autograd on and never detaches: every renamed value requires grad.
EXPORT_KEEPS_GRAPH = '''def export_plain_state_dict(model):
    """Return model's state_dict with every parametrized tensor under its plain key, holding its computed value."""
    stored = {}
    for prefix, module in model.named_modules(remove_duplicate=False):
        if parametrize.is_parametrized(module):
            dotted = f"{prefix}." if prefix else ""
            for name in module.parametrizations:
                stored[f"{dotted}parametrizations.{name}.original"] = (f"{dotted}{name}", module, name)
    plain = {}
    for key, value in model.state_dict().items():
        if key in stored:
            plain_key, module, name = stored[key]
            plain[plain_key] = getattr(module, name)
        else:
            plain[key] = value
    return plain
'''

SOLUTION.student("export_keeps_graph", {"export_plain_state_dict": EXPORT_KEEPS_GRAPH}, (0, 3, 0, 0))

# Walks named_modules() with its default de-duplication: a shared module's second prefix keeps its old key.
EXPORT_FIRST_NAME_ONLY = SOLUTION.edited(
    "export_plain_state_dict",
    """
-    for prefix, module in model.named_modules(remove_duplicate=False):
+    for prefix, module in model.named_modules():
""",
)

SOLUTION.student("export_first_name_only", {"export_plain_state_dict": EXPORT_FIRST_NAME_ONLY}, (2, 2, 0, 0))

# A correct part 1 written differently: parses each key, resolves its module by path and asks whether that module
# holds a parametrization of that name (a plain submodule named "parametrizations" holds none).
EXPORT_CORRECT_BY_KEY = '''def export_plain_state_dict(model):
    """Return model's state_dict with every parametrized tensor under its plain key, holding its computed value."""
    plain = {}
    with torch.no_grad():
        for key, value in model.state_dict().items():
            head, marker, tail = key.rpartition("parametrizations.")
            name = tail.removesuffix(".original")
            holder = model.get_submodule(head[:-1]) if marker else None
            if holder is not None and tail != name and parametrize.is_parametrized(holder, name):
                value = getattr(holder, name).detach()
                key = head + name
            plain[key] = value
    return plain
'''

# Applies only the first parametrization of each name: right for one, wrong when two are stacked.
EXPORT_FIRST_PARAMETRIZATION_ONLY = SOLUTION.edited_answer(
    EXPORT_CORRECT_BY_KEY,
    """
-                value = getattr(holder, name).detach()
-                key = head + name
-            plain[key] = value
+                plain[head + name] = holder.parametrizations[name][0](value).detach()
+            else:
+                plain[key] = value
""",
)

SOLUTION.student(
    "export_first_parametrization_only",
    {"export_plain_state_dict": EXPORT_FIRST_PARAMETRIZATION_ONLY},
    (2, 3, 0, 0),
    breaks={"test_export_hidden": 3},
)

# Puts the plain entries first and the computed ones at the end: right keys and values, wrong order.
EXPORT_APPENDS_AT_END = SOLUTION.edited_answer(
    EXPORT_FIRST_PARAMETRIZATION_ONLY,
    """
-    plain = {}
+    plain, computed = {}, {}
@@
-                plain[head + name] = holder.parametrizations[name][0](value).detach()
+                computed[head + name] = getattr(holder, name).detach()
@@
-    return plain
+    return {**plain, **computed}
""",
)

SOLUTION.student(
    "export_appends_at_end",
    {"export_plain_state_dict": EXPORT_APPENDS_AT_END},
    (0, 3, 0, 0),
    breaks={"test_export_hidden": 2},
)

# Casts every floating value to float32 "for portability": right for float32 models only (review 28b,
# e7_p1_float_cast; rule 3: each value is the tensor state_dict() or the parametrization gives, dtype included).
EXPORT_FLOAT_CAST = SOLUTION.edited(
    "export_plain_state_dict",
    """
-    return plain
+    return {key: value.float() if value.is_floating_point() else value for key, value in plain.items()}
""",
)

SOLUTION.student("export_float_cast", {"export_plain_state_dict": EXPORT_FLOAT_CAST}, (2, 3.0, 0, 0))

# Builds the result as state_dict() does, in an OrderedDict: right keys and values, but not exactly a dict.
EXPORT_ORDERED_DICT = SOLUTION.edited(
    "export_plain_state_dict",
    '''
     """Return model's state_dict with every parametrized tensor under its plain key, holding its computed value."""
+    from collections import OrderedDict
+
@@
-    plain = {}
+    plain = OrderedDict()
''',
)

# Notes the keys first, then removes every parametrization from the model itself (leave_parametrized=True) and reads
# the plain values back in the noted order: the model is changed for good (rule 4), and the noted keys come from a
# pattern, so a plain submodule named "parametrizations" is renamed too (rule 2).
EXPORT_REMOVES_KEEPING_ORDER = SOLUTION.edited_answer(
    EXPORT_REMOVES_ON_MODEL,
    '''
     """Return model's state_dict with every parametrized tensor under its plain key, holding its computed value."""
+    import re
+
+    keys = [re.sub(r"parametrizations\\.(\\w+)\\.original$", r"\\1", key) for key in model.state_dict()]
@@
-    return dict(model.state_dict())
+    state = model.state_dict()
+    return {key: state[key] for key in keys}
''',
)

SOLUTION.student(
    "export_removes_keeping_order", {"export_plain_state_dict": EXPORT_REMOVES_KEEPING_ORDER}, (0, 2, 0, 0)
)

# Finds the stored originals among the parameters: a parametrization registered on a buffer keeps its
# parametrizations.<name>.original key and its stored value, and the parameter "original" of a plain submodule
# named "parametrizations" is renamed (issue 28).
EXPORT_PARAMETERS_ONLY = SOLUTION.edited(
    "export_plain_state_dict",
    """
-    for prefix, module in model.named_modules(remove_duplicate=False):
-        if parametrize.is_parametrized(module):
-            dotted = f"{prefix}." if prefix else ""
-            for name in module.parametrizations:
-                stored[f"{dotted}parametrizations.{name}.original"] = (f"{dotted}{name}", module, name)
+    for key, _ in model.named_parameters(remove_duplicate=False):  # where the originals are stored
+        if key.endswith(".original"):
+            path, _, name = key.removesuffix(".original").rpartition(".")
+            prefix = path.removesuffix("parametrizations")
+            stored[key] = (f"{prefix}{name}", model.get_submodule(prefix.removesuffix(".")), name)
""",
)

SOLUTION.student("export_parameters_only", {"export_plain_state_dict": EXPORT_PARAMETERS_ONLY}, (2, 2.0, 0, 0))

# Drops every other key under "parametrizations." (a parametrization's own parameters), since a plain model would not
# accept them (nor the key of a plain submodule named "parametrizations"): rule 2 keeps every other key as it is, and
# rule 3 every other value (issue 28).
EXPORT_DROPS_PARAMETRIZATION_STATE = SOLUTION.edited(
    "export_plain_state_dict",
    """
                 plain[plain_key] = getattr(module, name).detach()  # detach: a parametrization may return original
+            elif ".parametrizations." in f".{key}":
+                continue
""",
)

SOLUTION.student(
    "export_drops_parametrization_state",
    {"export_plain_state_dict": EXPORT_DROPS_PARAMETRIZATION_STATE},
    (2, 2.0, 0, 0),
)

# Turns requires_grad off on the whole model so that the computed values need no detach, and never back on: the
# model is changed (issue 28).
EXPORT_MODEL_REQUIRES_GRAD_OFF = SOLUTION.edited(
    "export_plain_state_dict",
    """
     plain = {}
+    model.requires_grad_(False)
""",
)

SOLUTION.student(
    "export_model_requires_grad_off",
    {"export_plain_state_dict": EXPORT_MODEL_REQUIRES_GRAD_OFF},
    (2, 3, 0, 0),
    breaks={"test_export_hidden": 4},
)

# Renames every key shaped '<prefix>parametrizations.<name>.original' by its text alone: the key of a plain submodule
# named "parametrizations" is renamed too (issue 28).
EXPORT_RENAMES_BY_TEXT = SOLUTION.edited(
    "export_plain_state_dict",
    """
-            if key in stored:
-                plain_key, module, name = stored[key]
-                plain[plain_key] = getattr(module, name).detach()  # detach: a parametrization may return original
+            parts = key.split(".")
+            if len(parts) >= 3 and parts[-3] == "parametrizations" and parts[-1] == "original":
+                prefix = ".".join(parts[:-3])
+                computed = getattr(model.get_submodule(prefix), parts[-2], None)
+                plain_key = f"{prefix}.{parts[-2]}" if prefix else parts[-2]
+                plain[plain_key] = computed.detach() if isinstance(computed, torch.Tensor) else value
""",
)

SOLUTION.student(
    "export_renames_by_text",
    {"export_plain_state_dict": EXPORT_RENAMES_BY_TEXT},
    (2, 3, 0, 0),
    breaks={"test_export_hidden": 2},
)

# Computes the value only for an original stored as a Parameter: a parametrized buffer keeps its stored value under
# the plain key (issue 28).
EXPORT_BUFFER_KEEPS_ORIGINAL = SOLUTION.edited(
    "export_plain_state_dict",
    """
-                plain[plain_key] = getattr(module, name).detach()  # detach: a parametrization may return original
+                if isinstance(module.parametrizations[name].original, nn.Parameter):
+                    plain[plain_key] = getattr(module, name).detach()
+                else:
+                    plain[plain_key] = value
""",
)

SOLUTION.student(
    "export_buffer_keeps_original",
    {"export_plain_state_dict": EXPORT_BUFFER_KEEPS_ORIGINAL},
    (2, 3, 0, 0),
    generated_only=("test_export_hidden",),
)


# ---------------------------------------------------------------------------------------------------------
# Part 2: materialize
# ---------------------------------------------------------------------------------------------------------

# model.eval(), the call, model.train(): every flag ends True, whatever it was.
MATERIALIZE_TRAIN_AFTER = '''def materialize(model, *args):
    """Materialize every lazy module of model with one dry call model(*args) that changes nothing else; return model."""
    if any(isinstance(module, LazyModuleMixin) for module in model.modules()):
        model.eval()
        with torch.no_grad():
            model(*args)
        model.train()
    return model
'''

SOLUTION.student("materialize_train_after", {"materialize": MATERIALIZE_TRAIN_AFTER}, (0, 0, 0, 2.67))

# Restores the root's flag with train(mode): train() recurses, so mixed modes are lost.
MATERIALIZE_ROOT_FLAG_ONLY = SOLUTION.edited_answer(
    MATERIALIZE_TRAIN_AFTER,
    """
     if any(isinstance(module, LazyModuleMixin) for module in model.modules()):
+        was_training = model.training
@@
-        model.train()
+        model.train(was_training)
""",
)

SOLUTION.student(
    "materialize_root_flag_only",
    {"materialize": MATERIALIZE_ROOT_FLAG_ONLY},
    (0, 0, 0, 2.67),
    breaks={"test_materialize_hidden": 3},
)

# Runs the dry call in whatever mode the model is in: norm layers in training mode count the batch and move
# their running statistics.
MATERIALIZE_KEEPS_MODE = SOLUTION.edited_answer(
    MATERIALIZE_TRAIN_AFTER,
    """
-        model.eval()
@@
-        model.train()
""",
)

SOLUTION.student("materialize_keeps_mode", {"materialize": MATERIALIZE_KEEPS_MODE}, (0, 0, 0, 2.67))

# Always calls the model, also when nothing is lazy.
MATERIALIZE_ALWAYS_CALLS = SOLUTION.edited(
    "materialize",
    """
-    if not any(isinstance(module, LazyModuleMixin) for module in modules):
-        return model
""",
)

SOLUTION.student(
    "materialize_always_calls",
    {"materialize": MATERIALIZE_ALWAYS_CALLS},
    (0, 0, 0, 2.67),
    breaks={"test_materialize_hidden": 2},
)

# Asks has_uninitialized_params(): a lazy module whose parameters came from a checkpoint stays lazy.
MATERIALIZE_UNINITIALIZED_ONLY = SOLUTION.edited(
    "materialize",
    """
-    if not any(isinstance(module, LazyModuleMixin) for module in modules):
+    if not any(isinstance(module, LazyModuleMixin) and module.has_uninitialized_params() for module in modules):
""",
)

SOLUTION.student(
    "materialize_uninitialized_only",
    {"export_plain_state_dict": EXPORT_CORRECT_BY_KEY, "materialize": MATERIALIZE_UNINITIALIZED_ONLY},
    (2, 4, 2, 2.67),
)

# Returns early with a bare `return` when nothing is lazy: None instead of the model.
MATERIALIZE_RETURNS_NONE_WHEN_READY = SOLUTION.edited(
    "materialize",
    """
-        return model
+        return
""",
)

SOLUTION.student(
    "export_ordered_dict",
    {"export_plain_state_dict": EXPORT_ORDERED_DICT, "materialize": MATERIALIZE_RETURNS_NONE_WHEN_READY},
    (0, 0, 0, 2.67),
    breaks={"test_export_hidden": 1, "test_materialize_hidden": 1},
)

# A correct part 2 written differently: flags kept by qualified name, restored through get_submodule.
MATERIALIZE_CORRECT_BY_NAME = '''def materialize(model, *args):
    """Materialize every lazy module of model with one dry call model(*args) that changes nothing else; return model."""
    if not any(isinstance(module, LazyModuleMixin) for module in model.modules()):
        return model
    flags = {name: module.training for name, module in model.named_modules()}
    model.eval()
    try:
        with torch.no_grad():
            model(*args)
    finally:
        for name, flag in flags.items():
            model.get_submodule(name).training = flag
    return model
'''

SOLUTION.control(
    "alternative_correct",
    {"export_plain_state_dict": EXPORT_CORRECT_BY_KEY, "materialize": MATERIALIZE_CORRECT_BY_NAME},
)

# Switches the submodules to eval mode but leaves the model itself in its own mode: a model that is itself a lazy norm
# layer in training mode updates its running statistics (issue 28).
MATERIALIZE_CHILDREN_EVAL_ONLY = SOLUTION.edited(
    "materialize",
    """
-    for module in modules:
+    for module in modules[1:]:
""",
)

SOLUTION.student(
    "materialize_children_eval_only",
    {"materialize": MATERIALIZE_CHILDREN_EVAL_ONLY},
    (0, 0, 2, 2.67),
    generated_only=("test_materialize_hidden",),
)

# Tells a lazy module by its class name: a lazy class of one's own named otherwise is left lazy (issue 28).
MATERIALIZE_LAZY_BY_NAME = SOLUTION.edited(
    "materialize",
    """
-    if not any(isinstance(module, LazyModuleMixin) for module in modules):
+    if not any(type(module).__name__.startswith("Lazy") for module in modules):
""",
)

SOLUTION.student(
    "materialize_lazy_by_name",
    {"materialize": MATERIALIZE_LAZY_BY_NAME},
    (0, 0, 2, 2.67),
    generated_only=("test_materialize_hidden",),
)

# Restores each flag with module.train(flag) in modules() order: train() recurses, so a module under two parents takes
# the flag of the parent restored last (issue 28).
MATERIALIZE_RESTORES_WITH_TRAIN = SOLUTION.edited(
    "materialize",
    """
-            module.training = flag
+            module.train(flag)
""",
)

SOLUTION.student(
    "materialize_restores_with_train",
    {"materialize": MATERIALIZE_RESTORES_WITH_TRAIN},
    (0, 0, 2, 2.67),
    generated_only=("test_materialize_hidden",),
)

# Keeps the flags by name from named_modules() (each module under its first name) and restores them along every name,
# a name it does not know taking its parent's flag: a module under two parents takes the second parent's (issue 28).
MATERIALIZE_FLAGS_BY_FIRST_NAME = SOLUTION.edited(
    "materialize",
    """
-    flags = [(module, module.training) for module in modules]
+    flags = {name: module.training for name, module in model.named_modules()}
@@
-        for module, flag in flags:
-            module.training = flag
+        for name, module in model.named_modules(remove_duplicate=False):
+            parent = name
+            while parent not in flags:
+                parent = parent.rpartition(".")[0]
+            module.training = flags[parent]
""",
)

SOLUTION.student(
    "materialize_flags_by_first_name",
    {"materialize": MATERIALIZE_FLAGS_BY_FIRST_NAME},
    (0, 0, 2, 2.67),
    generated_only=("test_materialize_hidden",),
)

# Switches only the norm layers and the Dropouts to eval mode for the dry call: a module of one's own that keeps a
# statistic in a buffer while training still counts the batch (rule 3 asks for every module in eval mode; a review).
MATERIALIZE_EVAL_NORMS_ONLY = SOLUTION.edited(
    "materialize",
    """
-    for module in modules:
+    for module in modules:
+        if not isinstance(module, (nn.modules.batchnorm._NormBase, nn.Dropout)):
+            continue
""",
)

SOLUTION.student(
    "materialize_eval_norms_only",
    {"materialize": MATERIALIZE_EVAL_NORMS_ONLY},
    (0, 0, 2, 2.67),
    breaks={"test_materialize_hidden": 3},
)

# A correct part 1 that copies every value (rule 3 grades equal values, not shared memory; a review).
EXPORT_CLONES_VALUES = SOLUTION.edited(
    "export_plain_state_dict",
    """
-                plain[key] = value
+                plain[key] = value.clone()
""",
)

SOLUTION.student("export_clones_values", {"export_plain_state_dict": EXPORT_CLONES_VALUES}, (2, 4, 0, 0))

# Runs the dry call under torch.inference_mode() instead of torch.no_grad(): the parameters and buffers it creates are
# inference tensors, and a later training step on them raises (rule 3: the call leaves no inference tensors; a review).
MATERIALIZE_INFERENCE_MODE = SOLUTION.edited(
    "materialize",
    """
-        with torch.no_grad():
+        with torch.inference_mode():
""",
)

SOLUTION.student(
    "materialize_inference_mode",
    {"materialize": MATERIALIZE_INFERENCE_MODE},
    (0, 0, 2, 2.67),
    breaks={"test_materialize_hidden": 3},
)

# Restores the flags after the call but not in a finally clause: a dry call that raises leaves every module in eval
# mode (rule 3: the flags are restored also when the call raises; a review).
MATERIALIZE_NO_FINALLY = SOLUTION.edited(
    "materialize",
    """
-    try:
-        with torch.no_grad():
-            model(*args)
-    finally:
-        for module, flag in flags:
-            module.training = flag
+    with torch.no_grad():
+        model(*args)
+    for module, flag in flags:
+        module.training = flag
""",
)

SOLUTION.student(
    "materialize_no_finally",
    {"materialize": MATERIALIZE_NO_FINALLY},
    (0, 0, 2, 2.67),
    breaks={"test_materialize_hidden": 3},
)

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
GENERATED_ONLY = SOLUTION.generated_only
