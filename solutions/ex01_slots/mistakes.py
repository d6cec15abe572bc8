"""Typical answers to exercise 1 and the points each graded cell must give them (grader/scripted.py)."""

from grader.scripted import Solution

# The students' points are given for the notebook's graded test cells, in this order.
SOLUTION = Solution(
    __file__,
    points_of=("test_classify_slots_visible", "test_classify_slots_hidden", "test_copy_visible", "test_copy_hidden"),
)

# ---------------------------------------------------------------------------------------------------------
# Part 1: classify_slots
# ---------------------------------------------------------------------------------------------------------

# Decides by the type of the value: a user attribute holding an OrderedDict becomes a "hook table",
# the flag tables become hook tables, a full backward hook's True becomes a "mode flag".
CLASSIFY_BY_VALUE_TYPE = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    groups = {}
    for name, value in vars(module).items():
        if type(value) is dict:
            groups[name] = REGISTRY
        elif type(value) is set:
            groups[name] = NON_PERSISTENT_MARKER
        elif type(value) is bool:
            groups[name] = MODE_FLAG
        elif type(value) is OrderedDict:
            groups[name] = HOOK_TABLE
        elif value is None:
            groups[name] = BACKWARD_KIND_FLAG
        else:
            groups[name] = OTHER
    return groups
'''

SOLUTION.student("classify_by_value_type", {"classify_slots": CLASSIFY_BY_VALUE_TYPE}, (0, 1.6, 0, 0))

# Recognises slots by name, but files the three flag tables under "hook table".
CLASSIFY_FLAG_TABLES_AS_HOOK_TABLES = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    hook_tables = [
        "_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_hooks_with_kwargs",
        "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
        "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
        "_load_state_dict_post_hooks",
    ]
    groups = {}
    for name in vars(module):
        if name in ("_parameters", "_buffers", "_modules"):
            groups[name] = REGISTRY
        elif name == "_non_persistent_buffers_set":
            groups[name] = NON_PERSISTENT_MARKER
        elif name == "training":
            groups[name] = MODE_FLAG
        elif name == "_is_full_backward_hook":
            groups[name] = BACKWARD_KIND_FLAG
        elif name in hook_tables:
            groups[name] = HOOK_TABLE
        else:
            groups[name] = OTHER
    return groups
'''

# Recognises the containers by object identity, reading them through the module: right on every fully
# built module, but `module._parameters` raises AttributeError on an instance whose __init__ never ran.
CLASSIFY_CRASHES_HALF_INITIALISED = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    by_identity = {
        id(module._parameters): REGISTRY,
        id(module._buffers): REGISTRY,
        id(module._modules): REGISTRY,
        id(module._non_persistent_buffers_set): NON_PERSISTENT_MARKER,
        id(module._forward_hooks_with_kwargs): HOOK_FLAG_TABLE,
        id(module._forward_hooks_always_called): HOOK_FLAG_TABLE,
        id(module._forward_pre_hooks_with_kwargs): HOOK_FLAG_TABLE,
    }
    for table in (module._backward_pre_hooks, module._backward_hooks, module._forward_hooks,
                  module._forward_pre_hooks, module._state_dict_hooks, module._state_dict_pre_hooks,
                  module._load_state_dict_pre_hooks, module._load_state_dict_post_hooks):
        by_identity[id(table)] = HOOK_TABLE
    groups = {}
    for name, value in vars(module).items():
        if name == "training":
            groups[name] = MODE_FLAG
        elif name == "_is_full_backward_hook":
            groups[name] = BACKWARD_KIND_FLAG
        else:
            groups[name] = by_identity.get(id(value), OTHER)
    return groups
'''

SOLUTION.student(
    "classify_crashes_half_initialised", {"classify_slots": CLASSIFY_CRASHES_HALF_INITIALISED}, (2, 2.4, 0, 0)
)

# Right groups, but built in an OrderedDict "to keep the order": a dict subclass, not the plain dict asked for.
CLASSIFY_RETURNS_ORDERED_DICT = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    slot_groups = {"training": MODE_FLAG, "_is_full_backward_hook": BACKWARD_KIND_FLAG,
                   "_non_persistent_buffers_set": NON_PERSISTENT_MARKER,
                   "_parameters": REGISTRY, "_buffers": REGISTRY, "_modules": REGISTRY,
                   "_forward_hooks_with_kwargs": HOOK_FLAG_TABLE, "_forward_hooks_always_called": HOOK_FLAG_TABLE,
                   "_forward_pre_hooks_with_kwargs": HOOK_FLAG_TABLE}
    for name in vars(nn.Module()):
        slot_groups.setdefault(name, HOOK_TABLE)
    return OrderedDict((name, slot_groups.get(name, OTHER)) for name in vars(module))
'''

SOLUTION.student(
    "classify_returns_ordered_dict",
    {"classify_slots": CLASSIFY_RETURNS_ORDERED_DICT},
    (0, 0, 0, 0),
    breaks={"test_classify_slots_hidden": 1},
)

# Recognises the hook slots by the pattern of their names: right for the seventeen slots, but a user
# attribute such as `_hooks` or `my_forward_hooks` becomes a "hook table", `extra_with_kwargs` a "hook flag table".
CLASSIFY_BY_NAME_PATTERN = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    groups = {}
    for name in vars(module):
        if name == "training":
            groups[name] = MODE_FLAG
        elif name in ("_parameters", "_buffers", "_modules"):
            groups[name] = REGISTRY
        elif name == "_non_persistent_buffers_set":
            groups[name] = NON_PERSISTENT_MARKER
        elif name == "_is_full_backward_hook":
            groups[name] = BACKWARD_KIND_FLAG
        elif name.endswith("_with_kwargs") or name.endswith("_always_called"):
            groups[name] = HOOK_FLAG_TABLE
        elif name.endswith("_hooks"):
            groups[name] = HOOK_TABLE
        else:
            groups[name] = OTHER
    return groups
'''

SOLUTION.student(
    "classify_by_name_pattern",
    {"classify_slots": CLASSIFY_BY_NAME_PATTERN},
    (2, 3.2, 0, 0),
    breaks={"test_classify_slots_hidden": 3},
)

# Assumes the seventeen slots are always the first seventeen keys of vars(module), in __init__'s order:
# true of every fully built module, wrong when attributes come before the slots or only some slots exist.
CLASSIFY_BY_POSITION = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    in_order = [MODE_FLAG, REGISTRY, REGISTRY, NON_PERSISTENT_MARKER, HOOK_TABLE, HOOK_TABLE,
                BACKWARD_KIND_FLAG, HOOK_TABLE, HOOK_FLAG_TABLE, HOOK_FLAG_TABLE, HOOK_TABLE,
                HOOK_FLAG_TABLE, HOOK_TABLE, HOOK_TABLE, HOOK_TABLE, HOOK_TABLE, REGISTRY]
    return {name: in_order[n] if n < len(in_order) else OTHER for n, name in enumerate(vars(module))}
'''

SOLUTION.student(
    "classify_by_position",
    {"classify_slots": CLASSIFY_BY_POSITION},
    (2, 3.2, 0, 0),
    breaks={"test_classify_slots_hidden": 4},
)

# Fills the module's own __dict__ with the answer (groups = vars(module)): the keys and groups come
# back right, but every attribute of the module is overwritten by the name of its group.
CLASSIFY_IN_THE_MODULES_DICT = SOLUTION.edited_answer(
    CLASSIFY_RETURNS_ORDERED_DICT,
    """
-    return OrderedDict((name, slot_groups.get(name, OTHER)) for name in vars(module))
+    groups = vars(module)
+    for name in groups:
+        groups[name] = slot_groups.get(name, OTHER)
+    return groups
""",
)

SOLUTION.student(
    "classify_in_the_modules_dict",
    {"classify_slots": CLASSIFY_IN_THE_MODULES_DICT},
    (2, 3.2, 0, 0),
    breaks={"test_classify_slots_hidden": 5},
)

# A tighter name pattern: only names with forward, backward or state_dict in them count as hook tables, so
# _hooks and my_forward_hooks come out right, but _custom_forward_hooks or _old_state_dict_hooks do not.
CLASSIFY_BY_NARROW_NAME_PATTERN = SOLUTION.edited_answer(
    CLASSIFY_BY_NAME_PATTERN,
    """
-        elif name.endswith("_with_kwargs") or name.endswith("_always_called"):
+        elif name.startswith("_forward") and (name.endswith("_with_kwargs") or name.endswith("_always_called")):
             groups[name] = HOOK_FLAG_TABLE
-        elif name.endswith("_hooks"):
+        elif name.startswith("_") and name.endswith("_hooks") and any(
+            word in name for word in ("forward", "backward", "state_dict")
+        ):
""",
)

SOLUTION.student(
    "classify_by_narrow_name_pattern",
    {"classify_slots": CLASSIFY_BY_NARROW_NAME_PATTERN},
    (2, 3.2, 0, 0),
    breaks={"test_classify_slots_hidden": 3},
)

# Matches names with their leading underscores stripped: forward_hooks, _training and __modules count as slots.
CLASSIFY_STRIPS_UNDERSCORES = SOLUTION.edited(
    "classify_slots",
    """
-    return {name: slot_groups.get(name, OTHER) for name in vars(module)}
+    bare = {slot.lstrip("_"): group for slot, group in slot_groups.items()}
+    return {name: bare.get(name.lstrip("_"), OTHER) for name in vars(module)}
""",
)

SOLUTION.student(
    "classify_strips_underscores",
    {"classify_slots": CLASSIFY_STRIPS_UNDERSCORES},
    (2, 3.2, 0, 0),
    breaks={"test_classify_slots_hidden": 3},
)

# Classifies each layout of keys once and hands back the same dict on every later call: a caller's edit of one
# result shows up in the next.
CLASSIFY_CACHED_PER_LAYOUT = SOLUTION.edited(
    "classify_slots",
    """
-    return {name: slot_groups.get(name, OTHER) for name in vars(module)}
+    keys = tuple(vars(module))
+    if keys not in _LAYOUTS:
+        _LAYOUTS[keys] = {name: slot_groups.get(name, OTHER) for name in keys}
+    return _LAYOUTS[keys]
""",
    """
-def classify_slots(module):
+_LAYOUTS = {}
+
+
+def classify_slots(module):
""",
)

SOLUTION.student(
    "classify_cached_per_layout",
    {"classify_slots": CLASSIFY_CACHED_PER_LAYOUT},
    (2, 3.2, 0, 0),
    breaks={"test_classify_slots_hidden": 5},
)

# A correct part 1, written the way a student who read the chapter might.
CLASSIFY_CORRECT = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    members = {
        REGISTRY: ["_parameters", "_buffers", "_modules"],
        NON_PERSISTENT_MARKER: ["_non_persistent_buffers_set"],
        MODE_FLAG: ["training"],
        HOOK_TABLE: ["_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_pre_hooks",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"],
        HOOK_FLAG_TABLE: ["_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                          "_forward_pre_hooks_with_kwargs"],
        BACKWARD_KIND_FLAG: ["_is_full_backward_hook"],
    }
    group_of = {name: group for group, names in members.items() for name in names}
    return {name: group_of.get(name, OTHER) for name in vars(module)}
'''

# Another correct part 1: takes the slot names from a fresh nn.Module instead of typing all of them.
CLASSIFY_CORRECT_FROM_FRESH_MODULE = '''def classify_slots(module):
    """Map every key of vars(module), in order, to the name of its group (one of GROUPS)."""
    group_of = {"training": MODE_FLAG, "_is_full_backward_hook": BACKWARD_KIND_FLAG,
                "_non_persistent_buffers_set": NON_PERSISTENT_MARKER}
    for name in ("_parameters", "_buffers", "_modules"):
        group_of[name] = REGISTRY
    for name in ("_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs"):
        group_of[name] = HOOK_FLAG_TABLE
    for name in vars(nn.Module()):
        group_of.setdefault(name, HOOK_TABLE)  # the eight slots left hold the hooks themselves
    return {name: group_of.get(name, OTHER) for name in vars(module)}
'''

# ---------------------------------------------------------------------------------------------------------
# Part 2: copy_sharing_parameters
# ---------------------------------------------------------------------------------------------------------

# Chapter 1's trap: the copy shares every registry and hook table with the original.
COPY_WITH_COPY_COPY = '''import copy


def copy_sharing_parameters(module):
    """Return a copy of module that shares its parameters, buffers, hooks and plain attributes with it,
    but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
    return copy.copy(module)
'''

SOLUTION.student(
    "copy_with_copy_copy",
    {"classify_slots": CLASSIFY_CORRECT, "copy_sharing_parameters": COPY_WITH_COPY_COPY},
    (2, 4, 0, 2.5),
)

# The other extreme: new registries, but also new Parameters and buffers.
COPY_WITH_DEEPCOPY = SOLUTION.edited_answer(
    COPY_WITH_COPY_COPY,
    """
-    return copy.copy(module)
+    return copy.deepcopy(module)
""",
)

SOLUTION.student("copy_with_deepcopy", {"copy_sharing_parameters": COPY_WITH_DEEPCOPY}, (0, 0, 0, 2))

# New containers for the root only: the children are the original's modules.
COPY_TOP_LEVEL_ONLY = '''def copy_sharing_parameters(module):
    """Return a copy of module that shares its parameters, buffers, hooks and plain attributes with it,
    but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
    clone = object.__new__(type(module))
    for name, value in vars(module).items():
        if name in vars(nn.Module()) and isinstance(value, (dict, set)):
            value = type(value)(value)
        vars(clone)[name] = value
    return clone
'''

SOLUTION.student("copy_top_level_only", {"copy_sharing_parameters": COPY_TOP_LEVEL_ONLY}, (0, 0, 0, 3))

# Recursive, but without remembering what was copied: a submodule registered in two places
# becomes two different copies.
COPY_FORGETS_SHARED_SUBMODULE = SOLUTION.edited_answer(
    COPY_TOP_LEVEL_ONLY,
    '''
     but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
+    containers = [name for name, value in vars(nn.Module()).items() if isinstance(value, (dict, set))]
@@
-        if name in vars(nn.Module()) and isinstance(value, (dict, set)):
+        if name == "_modules":
+            value = type(value)((key, None if child is None else copy_sharing_parameters(child))
+                                for key, child in value.items())
+        elif name in containers:
''',
)

SOLUTION.student(
    "copy_forgets_shared_submodule",
    {"copy_sharing_parameters": COPY_FORGETS_SHARED_SUBMODULE},
    (0, 0, 2, 3.5),
    breaks={"test_copy_hidden": 5},
)

# copy.copy, then new containers all the way down, with a memo: right for every fully built module,
# but copy.copy goes through __getstate__/__setstate__, which drops _compiled_call_impl and adds the
# missing hook tables to a half-built module.
COPY_VIA_GETSTATE = '''import copy


def copy_sharing_parameters(module, memo=None):
    """Return a copy of module that shares its parameters, buffers, hooks and plain attributes with it,
    but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
    if memo is None:
        memo = {}
    if id(module) in memo:
        return memo[id(module)]
    clone = copy.copy(module)
    memo[id(module)] = clone
    slots = vars(nn.Module())
    for name, value in list(vars(clone).items()):
        if name == "_modules":
            vars(clone)[name] = type(value)((key, None if child is None else copy_sharing_parameters(child, memo))
                                            for key, child in value.items())
        elif name in slots and isinstance(value, (dict, set)):
            vars(clone)[name] = type(value)(value)
    return clone
'''

SOLUTION.student(
    "copy_via_getstate",
    {"classify_slots": CLASSIFY_CORRECT, "copy_sharing_parameters": COPY_VIA_GETSTATE},
    (2, 4, 2, 3.5),
    breaks={"test_copy_hidden": 2},
)

# Copies the registries, the marker and the 8 hook tables, but shares the 3 flag tables
# (so a with_kwargs hook registered on the copy marks the original's table).
COPY_SHARES_FLAG_TABLES = '''def copy_sharing_parameters(module):
    """Return a copy of module that shares its parameters, buffers, hooks and plain attributes with it,
    but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
    to_copy = [
        "_parameters", "_buffers", "_non_persistent_buffers_set", "_backward_pre_hooks", "_backward_hooks",
        "_forward_hooks", "_forward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
        "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
    ]
    done = {}

    def copy_one(original):
        if id(original) not in done:
            clone = object.__new__(type(original))
            done[id(original)] = clone
            for name, value in vars(original).items():
                if name == "_modules":
                    value = type(value)((key, None if child is None else copy_one(child))
                                        for key, child in value.items())
                elif name in to_copy:
                    value = type(value)(value)
                vars(clone)[name] = value
        return done[id(original)]

    return copy_one(module)
'''

SOLUTION.student("copy_shares_flag_tables", {"copy_sharing_parameters": COPY_SHARES_FLAG_TABLES}, (0, 0, 2, 3))

# A memo kept in a mutable default argument: it survives from one call to the next, so a later call on a
# module copied before hands back the stale copy (made before a hook was added to the original, say). It is
# keyed by the module itself, which keeps it alive: keyed by id(), a copy of a module that no longer exists
# would come back for whichever module reuses its id, and the points would change from run to run.
COPY_MUTABLE_DEFAULT_MEMO = SOLUTION.edited_answer(
    COPY_TOP_LEVEL_ONLY,
    '''
-def copy_sharing_parameters(module):
+def copy_sharing_parameters(module, copies={}):
@@
     but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
+    if module in copies:
+        return copies[module]
@@
     clone = object.__new__(type(module))
+    copies[module] = clone
@@
-        if name in vars(nn.Module()) and isinstance(value, (dict, set)):
+        if name == "_modules":
+            value = type(value)((key, None if child is None else copy_sharing_parameters(child, copies))
+                                for key, child in value.items())
+        elif name in vars(nn.Module()) and isinstance(value, (dict, set)):
''',
)

SOLUTION.student("copy_mutable_default_memo", {"copy_sharing_parameters": COPY_MUTABLE_DEFAULT_MEMO}, (0, 0, 2, 3))

# Right in every respect: the text the copy_sharing_parameters mistakes below change (each says how), not a
# student's. A memo passed along makes a submodule registered in several places one copy.
_COPY_RIGHT = '''def copy_sharing_parameters(module, _memo=None):
    """Return a copy of module that shares its parameters, buffers, hooks and plain attributes with it,
    but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
    if _memo is None:
        _memo = {}
    if id(module) in _memo:
        return _memo[id(module)]
    clone = object.__new__(type(module))
    _memo[id(module)] = clone
    slots = vars(nn.Module())
    for name, value in vars(module).items():
        if name == "_modules":
            value = type(value)((key, None if child is None else copy_sharing_parameters(child, _memo))
                                for key, child in value.items())
        elif name in slots and isinstance(value, (dict, set)):
            value = type(value)(value)
        vars(clone)[name] = value
    return clone
'''

# Calls the class's constructor when it takes no argument (ReLU, Sequential, a user's class), and falls
# back to __new__ only when that fails: the constructor runs, and builds fresh parameters, for nothing.
COPY_TRIES_CONSTRUCTOR_FIRST = SOLUTION.edited_answer(
    _COPY_RIGHT,
    """
-    clone = object.__new__(type(module))
+    cls = type(module)
+    try:
+        clone = cls()
+    except TypeError:
+        clone = cls.__new__(cls)
+    vars(clone).clear()  # start from an empty __dict__
""",
)

SOLUTION.student(
    "copy_tries_constructor_first",
    {"copy_sharing_parameters": COPY_TRIES_CONSTRUCTOR_FIRST},
    (0, 0, 2, 3.5),
    breaks={"test_copy_hidden": 1},
)

# New containers, but every dict rebuilt with dict(...): the hook tables and flag tables come back as plain
# dicts instead of OrderedDicts.
COPY_CONTAINERS_AS_PLAIN_DICTS = SOLUTION.edited_answer(
    _COPY_RIGHT,
    """
-        elif name in slots and isinstance(value, (dict, set)):
-            value = type(value)(value)
+        elif name in slots and isinstance(value, dict):
+            value = dict(value)
+        elif name in slots and isinstance(value, set):
+            value = set(value)
""",
)

SOLUTION.student(
    "copy_containers_as_plain_dicts",
    {"copy_sharing_parameters": COPY_CONTAINERS_AS_PLAIN_DICTS},
    (0, 0, 0, 3.5),
    breaks={"test_copy_hidden": 3},
)

# Deep-copies _parameters and _buffers "to be safe": the copy gets its own tensors, so it no longer shares
# the weights (an update of the original's parameters is not seen by the copy).
COPY_DEEPCOPIES_REGISTRIES = SOLUTION.edited_answer(
    _COPY_RIGHT,
    """
+import copy
+
+
 def copy_sharing_parameters(module, _memo=None):
@@
                                 for key, child in value.items())
+        elif name in ("_parameters", "_buffers"):
+            value = copy.deepcopy(value)
""",
)

SOLUTION.student(
    "copy_deepcopies_registries",
    {"copy_sharing_parameters": COPY_DEEPCOPIES_REGISTRIES},
    (0, 0, 0, 3.5),
    breaks={"test_copy_hidden": 4},
)

# Deep-copies the hook tables and flag tables so that the copy's hooks are its own: a hook that is an object
# (a callable class, a bound method) is duplicated instead of shared.
COPY_DEEPCOPIES_HOOK_TABLES = SOLUTION.edited_answer(
    _COPY_RIGHT,
    """
+import copy
+
+
 def copy_sharing_parameters(module, _memo=None):
@@
-        elif name in slots and isinstance(value, (dict, set)):
+        elif name in ("_parameters", "_buffers", "_non_persistent_buffers_set"):
@@
             value = type(value)(value)
+        elif name in slots and isinstance(value, dict):
+            value = copy.deepcopy(value)
""",
)

SOLUTION.student(
    "copy_deepcopies_hook_tables",
    {"copy_sharing_parameters": COPY_DEEPCOPIES_HOOK_TABLES},
    (0, 0, 2, 3.5),
    breaks={"test_copy_hidden": 6},
)

# Copies every dict, set and list it finds in vars(), not only the fifteen container slots: a user's own dict,
# set or list attribute is no longer shared with the original.
COPY_COPIES_USER_CONTAINERS = SOLUTION.edited_answer(
    _COPY_RIGHT,
    """
-    slots = vars(nn.Module())
@@
-        elif name in slots and isinstance(value, (dict, set)):
+        elif isinstance(value, (dict, set, list)):
""",
)

SOLUTION.student(
    "copy_copies_user_containers",
    {"copy_sharing_parameters": COPY_COPIES_USER_CONTAINERS},
    (0, 0, 2, 3.5),
    breaks={"test_copy_hidden": 7},
)

# Stores the mode flag as a real bool: the same object for True and False, another one for a flag such as 1 (review
# 28b, e1_training_bool; rule 7: every other entry is the very object, whatever it holds).
COPY_TRAINING_AS_BOOL = SOLUTION.edited(
    "copy_sharing_parameters",
    """
-            state[name] = value
+            state[name] = bool(value) if name == "training" else value
""",
)

SOLUTION.student(
    "copy_training_as_bool",
    {"copy_sharing_parameters": COPY_TRAINING_AS_BOOL},
    (0, 0, 2, 3.5),
    generated_only=("test_copy_hidden",),
)

# Gives the fresh containers to the original and the old ones to the copy: the two no longer share any, but
# the original was modified, and a hook handle made on the original now removes the hook from the copy.
COPY_NEW_CONTAINERS_FOR_THE_ORIGINAL = SOLUTION.edited_answer(
    _COPY_RIGHT,
    """
-            value = type(value)(value)
+            vars(module)[name] = type(value)(value)  # the original gets the new one, the copy keeps the old one
""",
)

SOLUTION.student(
    "copy_new_containers_for_the_original",
    {"copy_sharing_parameters": COPY_NEW_CONTAINERS_FOR_THE_ORIGINAL},
    (0, 0, 2, 3.5),
    breaks={"test_copy_hidden": 8},
)

# Rebuilds _modules as a plain dict: right while _modules is a dict (torch 2), but a module whose _modules is an
# OrderedDict (older code, an unpickled torch 1 model) gets a plain dict back (review 30, w_p2_modules_plain_dict).
COPY_MODULES_AS_PLAIN_DICT = SOLUTION.edited(
    "copy_sharing_parameters",
    """
-                value = type(value)(
+                value = dict(
""",
)

SOLUTION.student(
    "copy_modules_as_plain_dict",
    {"copy_sharing_parameters": COPY_MODULES_AS_PLAIN_DICT},
    (0, 0, 2, 3.5),
    breaks={"test_copy_hidden": 3},
)

# Copies a module held as a plain entry of vars (not registered in _modules) as if it were a child: the copy holds
# a copy of it instead of the very object (review 30, w_p2_copy_plain_module_attr; rule 7).
COPY_PLAIN_MODULE_ATTRIBUTE = SOLUTION.edited(
    "copy_sharing_parameters",
    """
                 value = type(value)(value)  # a new dict / OrderedDict / set, same entries, same order
+            elif isinstance(value, nn.Module):
+                value = copy_one(value)
""",
)

SOLUTION.student(
    "copy_plain_module_attribute",
    {"copy_sharing_parameters": COPY_PLAIN_MODULE_ATTRIBUTE},
    (0, 0, 2, 3.5),
    breaks={"test_copy_hidden": 7},
)

# A correct part 2: the memo filled only once the module's entries are copied. Within the contract (the tree has no
# cycle), a shared submodule is still copied once; a module registered inside its own subtree would recurse forever,
# as state_dict() and repr() do on it (review 30, w_p2_memo_after_children).
COPY_CORRECT_MEMO_AFTER_CHILDREN = SOLUTION.edited(
    "copy_sharing_parameters",
    """
         clone = object.__new__(cls)  # no __init__: nothing added, no constructor arguments needed
-        copies[id(original)] = clone
@@
             state[name] = value
+        copies[id(original)] = clone
         return clone
""",
)

SOLUTION.student(
    "copy_correct_memo_after_children",
    {"copy_sharing_parameters": COPY_CORRECT_MEMO_AFTER_CHILDREN},
    (0, 0, 2, 4),
)

# A correct part 2: recursion with the memo passed along as an extra keyword argument.
COPY_CORRECT_RECURSIVE = SOLUTION.edited_answer(
    _COPY_RIGHT,
    """
-    clone = object.__new__(type(module))
+    cls = type(module)
+    clone = cls.__new__(cls)
@@
-    slots = vars(nn.Module())
+    fresh = vars(nn.Module())
@@
-        elif name in slots and isinstance(value, (dict, set)):
+        elif name in fresh and isinstance(fresh[name], (dict, set)):
""",
)

SOLUTION.student(
    "flag_tables_as_hook_tables",
    {"classify_slots": CLASSIFY_FLAG_TABLES_AS_HOOK_TABLES, "copy_sharing_parameters": COPY_CORRECT_RECURSIVE},
    (2, 3.2, 2, 4),
    breaks={"test_classify_slots_hidden": 2},
)

# Another correct part 2: start from a copy of __dict__, then replace the containers in place.
COPY_CORRECT_UPDATE_IN_PLACE = '''def copy_sharing_parameters(module):
    """Return a copy of module that shares its parameters, buffers, hooks and plain attributes with it,
    but owns new registries, hook tables and flag tables, in the whole tree of submodules."""
    tables = [name for name, value in vars(nn.Module()).items() if isinstance(value, (dict, set))]
    clones = {}

    def clone_of(original):
        if id(original) not in clones:
            clone = type(original).__new__(type(original))
            clones[id(original)] = clone
            state = vars(clone)
            state.update(vars(original))
            for name in tables:
                if name in state:
                    state[name] = type(state[name])(state[name])
            children = state.get("_modules", {})
            for key, child in children.items():
                if child is not None:
                    children[key] = clone_of(child)
        return clones[id(original)]

    return clone_of(module)
'''

SOLUTION.control(
    "alternative_correct",
    {"classify_slots": CLASSIFY_CORRECT_FROM_FRESH_MODULE, "copy_sharing_parameters": COPY_CORRECT_UPDATE_IN_PLACE},
)

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
