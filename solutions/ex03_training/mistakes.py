"""Typical answers to exercise 3 and the points each graded cell must give them (grader/scripted.py)."""

from grader.scripted import Solution

# The students' points are given for the notebook's graded test cells, in this order.
SOLUTION = Solution(
    __file__,
    points_of=("test_module_modes_visible", "test_module_modes_hidden", "test_frozen_visible", "test_frozen_hidden"),
)

# ---------------------------------------------------------------------------------------------------------
# Part 1: module_modes
# ---------------------------------------------------------------------------------------------------------

# Right in every respect: the text the module_modes mistakes below change (each says how), not a student's.
_MODES_RIGHT = '''def module_modes(model):
    """Return {qualified name: training flag} for every module of model, in named_modules() order.

    Raise TypeError naming the first module (in that order) whose flag is not a bool.
    """
    modes = {}
    for name, module in model.named_modules():
        if type(module.training) is not bool:
            raise TypeError(f"the training flag of {name!r} is not a bool")
        modes[name] = module.training
    return modes
'''

# Walks children() instead of named_modules(): the root and its direct children only, nothing deeper.
MODES_CHILDREN_ONLY = '''def module_modes(model):
    """Return {qualified name: training flag} for every module of model, in named_modules() order.

    Raise TypeError naming the first module (in that order) whose flag is not a bool.
    """
    modes = {"": model.training}
    for name, child in model.named_children():
        modes[name] = child.training
    return modes
'''

SOLUTION.student("modes_children_only", {"module_modes": MODES_CHILDREN_ONLY}, (0, 1.33, 0, 0))

# Asks named_modules() for every occurrence: a submodule registered in two places is listed twice
# (under each of its names), which the visible test with a tied encoder/decoder already catches.
MODES_SHARED_TWICE = SOLUTION.edited_answer(
    _MODES_RIGHT,
    """
-    for name, module in model.named_modules():
-        if type(module.training) is not bool:
+    for name, module in model.named_modules(remove_duplicate=False):
+        if not isinstance(module.training, bool):
""",
)

SOLUTION.student(
    "modes_shared_twice", {"module_modes": MODES_SHARED_TWICE}, (0, 3.33, 0, 0), breaks={"test_module_modes_hidden": 3}
)

# Calls model.train() "to make sure the flags are clean" before reading them: every flag is now True.
MODES_CALLS_TRAIN_FIRST = '''def module_modes(model):
    """Return {qualified name: training flag} for every module of model, in named_modules() order.

    Raise TypeError naming the first module (in that order) whose flag is not a bool.
    """
    model.train()
    return {name: module.training for name, module in model.named_modules()}
'''

# Right names and order, but hands back whatever the flag holds: 'yes', 1 or None instead of a TypeError.
MODES_NO_TYPE_CHECK = SOLUTION.edited_answer(
    MODES_CALLS_TRAIN_FIRST,
    """
-    model.train()
""",
)

SOLUTION.student("modes_no_type_check", {"module_modes": MODES_NO_TYPE_CHECK}, (2, 2.67, 0, 0))

# Converts every flag with bool(): 'False' becomes True, and nothing is ever reported.
MODES_BOOL_COERCION = SOLUTION.edited_answer(
    MODES_NO_TYPE_CHECK,
    """
-    return {name: module.training for name, module in model.named_modules()}
+    return {name: bool(module.training) for name, module in model.named_modules()}
""",
)

SOLUTION.student("modes_bool_coercion", {"module_modes": MODES_BOOL_COERCION}, (2, 2.67, 0, 0))

# Checks the types, but reports the module's class instead of its qualified name.
MODES_ERROR_WITHOUT_NAME = SOLUTION.edited_answer(
    _MODES_RIGHT,
    """
-            raise TypeError(f"the training flag of {name!r} is not a bool")
+            raise TypeError(f"a {type(module).__name__} has a training flag that is not a bool")
""",
)

SOLUTION.student(
    "modes_error_without_name",
    {"module_modes": MODES_ERROR_WITHOUT_NAME},
    (2, 3.33, 0, 0),
    breaks={"test_module_modes_hidden": 5},
)

# A correct part 1 without named_modules(): its own pre-order walk over _modules, with a set of visited ids.
MODES_CORRECT_OWN_WALK = '''def module_modes(model):
    """Return {qualified name: training flag} for every module of model, in named_modules() order.

    Raise TypeError naming the first module (in that order) whose flag is not a bool.
    """
    modes, seen = {}, set()

    def visit(module, prefix):
        if id(module) in seen:
            return
        seen.add(id(module))
        flag = module.training
        if flag is not True and flag is not False:
            raise TypeError(f"module {prefix!r} has the training flag {flag!r}")
        modes[prefix] = flag
        for key, child in module._modules.items():
            if child is not None:
                visit(child, f"{prefix}.{key}" if prefix else key)

    visit(model, "")
    return modes
'''

# Returns an OrderedDict "to be sure the order is kept": the right entries, but not a plain dict.
MODES_ORDERED_DICT = SOLUTION.edited_answer(
    _MODES_RIGHT,
    """
-    modes = {}
+    from collections import OrderedDict
+
+    modes = OrderedDict()
""",
)

SOLUTION.student(
    "modes_ordered_dict", {"module_modes": MODES_ORDERED_DICT}, (0, 0, 0, 0), breaks={"test_module_modes_hidden": 1}
)

# Checks every flag in named_modules() order, then returns the entries sorted by name "for readability":
# 'dec' before 'enc', '10' before '2'.
MODES_SORTED_NAMES = SOLUTION.edited_answer(
    _MODES_RIGHT,
    """
-    return modes
+    return dict(sorted(modes.items()))
""",
)

SOLUTION.student(
    "modes_sorted_names", {"module_modes": MODES_SORTED_NAMES}, (2, 3.33, 0, 0), breaks={"test_module_modes_hidden": 2}
)

# Names the bad flag that sorts first instead of the first in named_modules() order: right wherever the two agree
# (review 28b, e3_first_bad_sorted).
MODES_FIRST_BAD_SORTED = SOLUTION.edited(
    "module_modes",
    """
-    for name, module in model.named_modules():
-        flag = module.training
-        if type(flag) is not bool:  # bool cannot be subclassed: this admits exactly True and False
-            raise TypeError(f"the training flag of {name!r} is {flag!r} ({type(flag).__name__}), not a bool")
-        modes[name] = flag
+    bad = sorted(name for name, module in model.named_modules() if type(module.training) is not bool)
+    if bad:
+        flag = model.get_submodule(bad[0]).training
+        raise TypeError(f"the training flag of {bad[0]!r} is {flag!r} ({type(flag).__name__}), not a bool")
+    for name, module in model.named_modules():
+        modes[name] = module.training
""",
)

SOLUTION.student("modes_first_bad_sorted", {"module_modes": MODES_FIRST_BAD_SORTED}, (2, 3.33, 0, 0))

# Puts quotes round the name by hand instead of repr: right for '1.1.0', wrong for a name such as it's, which repr
# writes in double quotes.
MODES_HAND_MADE_QUOTES = SOLUTION.edited(
    "module_modes",
    """
-            raise TypeError(f"the training flag of {name!r} is {flag!r} ({type(flag).__name__}), not a bool")
+            raise TypeError(f"the training flag of '{name}' is {flag!r} ({type(flag).__name__}), not a bool")
""",
)

SOLUTION.student(
    "modes_hand_made_quotes",
    {"module_modes": MODES_HAND_MADE_QUOTES},
    (2, 3.33, 0, 0),
    breaks={"test_module_modes_hidden": 5},
)

# Tests `flag not in (True, False)`: 1, 0, 1.0, a tensor and a Parameter compare equal to a bool and pass;
# only 'yes', 'False', '' and None are reported.
MODES_IN_TRUE_FALSE = SOLUTION.edited_answer(
    _MODES_RIGHT,
    """
-        if type(module.training) is not bool:
-            raise TypeError(f"the training flag of {name!r} is not a bool")
+        if module.training not in (True, False):
+            raise TypeError(f"the training flag of {name!r} is {module.training!r}, not a bool")
""",
)

SOLUTION.student(
    "modes_in_true_false",
    {"module_modes": MODES_IN_TRUE_FALSE},
    (2, 3.33, 0, 0),
    breaks={"test_module_modes_hidden": 4},
)

# Admits every type named "bool" or "bool_": numpy.bool_(True), what `x > 0.5` gives on numpy values, passes as a
# flag (review 30, w_p1_accepts_numpy_bool; rule 4: `type(flag) is not bool` raises).
MODES_ACCEPTS_NUMPY_BOOL = SOLUTION.edited_answer(
    _MODES_RIGHT,
    """
-        if type(module.training) is not bool:
+        if type(module.training).__name__ not in ("bool", "bool_"):
""",
)

SOLUTION.student(
    "modes_accepts_numpy_bool",
    {"module_modes": MODES_ACCEPTS_NUMPY_BOOL},
    (2, 3.33, 0, 0),
    breaks={"test_module_modes_hidden": 4},
)

# Reports a bad flag with the right TypeError, but first "repairs" it to False so the model stays usable:
# the model is changed (and a Parameter flag makes the repair itself raise).
MODES_REPAIRS_BEFORE_RAISING = SOLUTION.edited(
    "module_modes",
    """
-        if type(flag) is not bool:  # bool cannot be subclassed: this admits exactly True and False
-            raise TypeError(f"the training flag of {name!r} is {flag!r} ({type(flag).__name__}), not a bool")
+        if type(flag) is not bool:
+            module.training = False
+            raise TypeError(f"the training flag of {name!r} was {flag!r}, not a bool; it is now False")
""",
)

SOLUTION.student(
    "modes_repairs_before_raising",
    {"module_modes": MODES_REPAIRS_BEFORE_RAISING},
    (2, 3.33, 0, 0),
    breaks={"test_module_modes_hidden": 6},
)

# Tests membership in (True, False) before the type: right for every one-element flag, but a tensor flag of several
# elements makes `in` raise RuntimeError ("ambiguous") instead of the TypeError of rule 4 (issue 28).
MODES_MEMBERSHIP_FIRST = SOLUTION.edited_answer(
    _MODES_RIGHT,
    """
-        if type(module.training) is not bool:
+        if module.training not in (True, False) or type(module.training) is not bool:
""",
)

SOLUTION.student(
    "modes_membership_first",
    {"module_modes": MODES_MEMBERSHIP_FIRST},
    (2, 3.33, 0, 0),
    generated_only=("test_module_modes_hidden",),
)

# ---------------------------------------------------------------------------------------------------------
# Part 2: train_with_frozen_norm_stats
# ---------------------------------------------------------------------------------------------------------

# Sets the flag of the root only: the children keep whatever mode they had.
FROZEN_ROOT_FLAG_ONLY = '''def train_with_frozen_norm_stats(model):
    """Put every module of model in training mode, except the stat-keeping norm layers, which go to
    evaluation mode; return model."""
    model.training = True
    for module in model.modules():
        if isinstance(module, _NormBase) and module.track_running_stats:
            module.training = False
    return model
'''

SOLUTION.student(
    "frozen_root_flag_only",
    {"module_modes": MODES_CORRECT_OWN_WALK, "train_with_frozen_norm_stats": FROZEN_ROOT_FLAG_ONLY},
    (2, 4, 0, 2.29),
)

# Keeps the norm layers training and sets momentum=0: the statistics stay put, but num_batches_tracked
# still counts every batch, and the layers' momentum is changed for good.
FROZEN_MOMENTUM_ZERO = SOLUTION.edited_answer(
    FROZEN_ROOT_FLAG_ONLY,
    """
-    model.training = True
+    model.train()
@@
-            module.training = False
+            module.momentum = 0.0
""",
)

SOLUTION.student("frozen_momentum_zero", {"train_with_frozen_norm_stats": FROZEN_MOMENTUM_ZERO}, (0, 0, 0, 1.14))

# Looks at the direct children only: right for a flat Sequential, wrong as soon as a norm layer is nested.
FROZEN_TOP_LEVEL_ONLY = SOLUTION.edited_answer(
    FROZEN_MOMENTUM_ZERO,
    """
-    for module in model.modules():
-        if isinstance(module, _NormBase) and module.track_running_stats:
-            module.momentum = 0.0
+    for child in model.children():
+        if isinstance(child, _NormBase) and child.track_running_stats:
+            child.training = False
""",
)

SOLUTION.student("frozen_top_level_only", {"train_with_frozen_norm_stats": FROZEN_TOP_LEVEL_ONLY}, (0, 0, 2, 1.71))

# Freezes the norm layers' parameters instead: the running statistics still move in training mode,
# and weight and bias stop learning.
FROZEN_REQUIRES_GRAD = SOLUTION.edited_answer(
    FROZEN_MOMENTUM_ZERO,
    """
-        if isinstance(module, _NormBase) and module.track_running_stats:
-            module.momentum = 0.0
+        if isinstance(module, _NormBase):
+            module.requires_grad_(False)
""",
)

SOLUTION.student("frozen_requires_grad", {"train_with_frozen_norm_stats": FROZEN_REQUIRES_GRAD}, (0, 0, 0, 1.14))

# Puts every _NormBase in eval mode, also those built with track_running_stats=False.
FROZEN_IGNORES_TRACK_RUNNING_STATS = SOLUTION.edited_answer(
    FROZEN_REQUIRES_GRAD,
    """
-            module.requires_grad_(False)
+            module.training = False
""",
)

SOLUTION.student(
    "frozen_ignores_track_running_stats",
    {"train_with_frozen_norm_stats": FROZEN_IGNORES_TRACK_RUNNING_STATS},
    (0, 0, 2, 1.71),
)

# Tests for the BatchNorm family only: an InstanceNorm with running statistics keeps training.
FROZEN_BATCHNORM_ONLY = SOLUTION.edited_answer(
    FROZEN_IGNORES_TRACK_RUNNING_STATS,
    """
-        if isinstance(module, _NormBase):
+        if isinstance(module, nn.modules.batchnorm._BatchNorm) and module.track_running_stats:
""",
)

SOLUTION.student("frozen_batchnorm_only", {"train_with_frozen_norm_stats": FROZEN_BATCHNORM_ONLY}, (0, 0, 2, 2.29))

# Calls eval() on each norm layer: eval() recurses, so a norm layer's own Dropout stops dropping.
FROZEN_EVAL_RECURSES = SOLUTION.edited_answer(
    FROZEN_MOMENTUM_ZERO,
    """
-            module.momentum = 0.0
+            module.eval()
""",
)

SOLUTION.student("frozen_eval_recurses", {"train_with_frozen_norm_stats": FROZEN_EVAL_RECURSES}, (0, 0, 0, 2.29))

# Its own pre-order walk that calls train(mode) on each module and skips modules already visited. train()
# recurses, so visiting a parent resets everything below it; that is repaired further down the walk, except
# for a shared norm layer that was visited earlier under another parent: it is left training.
FROZEN_RECURSIVE_TRAIN_WITH_MEMO = '''def train_with_frozen_norm_stats(model):
    """Put every module of model in training mode, except the stat-keeping norm layers, which go to
    evaluation mode; return model."""
    seen = set()

    def visit(module):
        if id(module) in seen:
            return
        seen.add(id(module))
        module.train(not (isinstance(module, _NormBase) and module.track_running_stats))
        for child in module.children():
            visit(child)

    visit(model)
    return model
'''

SOLUTION.student(
    "frozen_recursive_train_with_memo",
    {"module_modes": MODES_NO_TYPE_CHECK, "train_with_frozen_norm_stats": FROZEN_RECURSIVE_TRAIN_WITH_MEMO},
    (2, 2.67, 2, 2.29),
)

FROZEN_HEADER = '''def train_with_frozen_norm_stats(model):
    """Put every module of model in training mode, except the stat-keeping norm layers, which go to
    evaluation mode; return model."""
'''

# The check of rule 7 that the answers below share (each of them gets some other rule wrong).
PRECHECK = """    for module in model.modules():
        if "training" in module._parameters:
            raise TypeError("a training flag is a Parameter: it cannot be set")
"""

# A correct part 2 in two passes: every flag True, then exactly the stat-keeping norm layers switched (by the
# contract's definition: a running_mean buffer is not it, review 28), one flag at a time (no train() or eval(),
# which recurse and may be overridden).
FROZEN_CORRECT_TWO_PASSES = (
    FROZEN_HEADER
    + """    if any("training" in module._parameters for module in model.modules()):
        raise TypeError("a module has a Parameter as its training flag")
    for module in model.modules():
        module.training = True
    for module in model.modules():
        if isinstance(module, _NormBase) and module.track_running_stats:
            module.training = False  # not module.eval(): that would reach the module's own children too
    return model
"""
)

SOLUTION.student(
    "modes_calls_train_first",
    {"module_modes": MODES_CALLS_TRAIN_FIRST, "train_with_frozen_norm_stats": FROZEN_CORRECT_TWO_PASSES},
    (0, 0.67, 2, 4),
)
SOLUTION.control(
    "alternative_correct",
    {"module_modes": MODES_CORRECT_OWN_WALK, "train_with_frozen_norm_stats": FROZEN_CORRECT_TWO_PASSES},
)

# Right in every respect: the text the train_with_frozen_norm_stats mistakes below change (each says how), not a
# student's.
_FROZEN_RIGHT = '''def train_with_frozen_norm_stats(model):
    """Put every module of model in training mode, except the stat-keeping norm layers, which go to
    evaluation mode; return model."""
    for module in model.modules():
        if "training" in module._parameters:
            raise TypeError("a training flag is a Parameter: it cannot be set")
    for module in model.modules():
        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
    return model
'''

# Right flags, but calls model.train() for the first pass: a module's own train() override runs (rule 6).
FROZEN_TRAIN_THEN_SWITCH = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
             raise TypeError("a training flag is a Parameter: it cannot be set")
+    model.train()
@@
-        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+        if isinstance(module, _NormBase) and module.track_running_stats:
+            module.training = False
""",
)

SOLUTION.student(
    "frozen_train_then_switch",
    {"train_with_frozen_norm_stats": FROZEN_TRAIN_THEN_SWITCH},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 6},
)

# Sets every flag right, one at a time, and forgets to return the model (rule 1).
FROZEN_RETURNS_NOTHING = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-    return model
""",
)

SOLUTION.student(
    "frozen_returns_nothing",
    {"train_with_frozen_norm_stats": FROZEN_RETURNS_NOTHING},
    (0, 0, 0, 0),
    breaks={"test_frozen_hidden": 1},
)

# Recognises the BatchNorm family only, flag by flag: an InstanceNorm with running statistics keeps training.
FROZEN_BATCHNORM_FAMILY_ONLY = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+        frozen = isinstance(module, nn.modules.batchnorm._BatchNorm) and module.track_running_stats
+        module.training = not frozen
""",
)

SOLUTION.student(
    "frozen_batchnorm_family_only",
    {"train_with_frozen_norm_stats": FROZEN_BATCHNORM_FAMILY_ONLY},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 2},
)

# Freezes the whole subtree of each stat-keeping norm layer, flag by flag: the layer's own Dropout stops dropping.
FROZEN_FREEZES_SUBTREE = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+        module.training = True
+    for module in model.modules():
+        if isinstance(module, _NormBase) and module.track_running_stats:
+            for inner in module.modules():
+                inner.training = False
""",
)

SOLUTION.student(
    "frozen_freezes_subtree",
    {"train_with_frozen_norm_stats": FROZEN_FREEZES_SUBTREE},
    (0, 0, 0, 3.43),
    breaks={"test_frozen_hidden": 3},
)

# Its own walk over every attribute, lists, tuples and dicts included "to be thorough": modules that are not
# registered (kept in a plain list) are switched too.
FROZEN_WALKS_ATTRIBUTES = (
    FROZEN_HEADER
    + PRECHECK
    + """    seen = set()

    def visit(value):
        if isinstance(value, nn.Module):
            if id(value) in seen:
                return
            seen.add(id(value))
            value.training = not (isinstance(value, _NormBase) and value.track_running_stats)
            for attribute in vars(value).values():
                visit(attribute)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    visit(model)
    return model
"""
)

SOLUTION.student(
    "frozen_walks_attributes",
    {"train_with_frozen_norm_stats": FROZEN_WALKS_ATTRIBUTES},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 4},
)

# Right flags, then "makes sure every parameter learns": a parameter frozen on purpose requires grad again.
FROZEN_SETS_REQUIRES_GRAD = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
         module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+    for parameter in model.parameters():
+        if not parameter.requires_grad:
+            parameter.requires_grad_(True)
""",
)

SOLUTION.student(
    "frozen_sets_requires_grad",
    {"train_with_frozen_norm_stats": FROZEN_SETS_REQUIRES_GRAD},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 5},
)

# Decides stat-keeping by the running_mean buffer instead of track_running_stats: a BatchNorm whose
# track_running_stats was switched off later is frozen, one whose running_mean was set to None trains. The wrong
# flag shows under rule 2 (a fixed case too: track_running_stats set to 0 with the buffers kept), and under rule 3
# where the layer is a norm layer's own submodule.
FROZEN_BY_RUNNING_MEAN = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+        module.training = not (isinstance(module, _NormBase) and module.running_mean is not None)
""",
)

SOLUTION.student(
    "frozen_by_running_mean",
    {"train_with_frozen_norm_stats": FROZEN_BY_RUNNING_MEAN},
    (0, 0, 2, 2.86),
)

# Pre-checks with isinstance(flag, nn.Parameter): a "training" entry of _parameters that holds None is missed, and
# the modules before it are switched before the assignment raises TypeError (rule 7).
FROZEN_PRECHECK_BY_VALUE = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        if "training" in module._parameters:
+        if isinstance(module.training, nn.Parameter):
""",
)

SOLUTION.student(
    "frozen_precheck_by_value",
    {"train_with_frozen_norm_stats": FROZEN_PRECHECK_BY_VALUE},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 7},
    generated_only=("test_frozen_hidden",),
)

# Sets each flag as it walks, without checking first: a Parameter flag raises TypeError half way, after the
# modules before it were switched (rule 7).
FROZEN_SETS_BEFORE_CHECKING = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        if "training" in module._parameters:
-            raise TypeError("a training flag is a Parameter: it cannot be set")
-    for module in model.modules():
""",
)

SOLUTION.student(
    "frozen_sets_before_checking",
    {"train_with_frozen_norm_stats": FROZEN_SETS_BEFORE_CHECKING},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 7},
)

# Freezes a norm layer only when track_running_stats is the object True: a layer whose track_running_stats is 1 (an
# int read from a config) trains, though the contract's condition, evaluated as Python, is true (review 30,
# w_p2_track_is_true; rule 2).
FROZEN_TRACK_IS_TRUE = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+        module.training = not (isinstance(module, _NormBase) and module.track_running_stats is True)
""",
)

SOLUTION.student(
    "frozen_track_is_true",
    {"train_with_frozen_norm_stats": FROZEN_TRACK_IS_TRUE},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 2},
)

# Freezes a norm layer only when track_running_stats == True: 1 passes, but 2 or the string "false" (true values for
# Python) train (review 31, w24_eq_true; rule 2).
FROZEN_TRACK_EQUALS_TRUE = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+        module.training = not (isinstance(module, _NormBase) and module.track_running_stats == True)  # noqa: E712
""",
)

SOLUTION.student(
    "frozen_track_equals_true",
    {"train_with_frozen_norm_stats": FROZEN_TRACK_EQUALS_TRUE},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 2},
)

# Calls the base method nn.Module.train(layer, False) on a leaf norm layer, not its override: the flags come out
# right, but rule 6 forbids calling train() or eval(), nn.Module's own included (review 30, w_p2_base_train_leaf).
FROZEN_BASE_TRAIN_ON_LEAVES = SOLUTION.edited_answer(
    _FROZEN_RIGHT,
    """
-        module.training = not (isinstance(module, _NormBase) and module.track_running_stats)
+        frozen = isinstance(module, _NormBase) and module.track_running_stats
+        if frozen and not module._modules:
+            nn.Module.train(module, False)
+        else:
+            module.training = not frozen
""",
)

SOLUTION.student(
    "frozen_base_train_on_leaves",
    {"train_with_frozen_norm_stats": FROZEN_BASE_TRAIN_ON_LEAVES},
    (0, 0, 2, 3.43),
    breaks={"test_frozen_hidden": 6},
)

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
GENERATED_ONLY = SOLUTION.generated_only
