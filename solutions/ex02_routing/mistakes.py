"""Typical answers to exercise 2 and the points each graded cell must give them (grader/scripted.py)."""

from grader.scripted import Solution

# The students' points are given for the notebook's graded test cells, in this order.
SOLUTION = Solution(
    __file__,
    points_of=(
        "test_predict_setattr_visible",
        "test_predict_setattr_hidden",
        "test_find_unregistered_tensors_visible",
        "test_find_unregistered_tensors_hidden",
    ),
)

# ---------------------------------------------------------------------------------------------------------
# Part 1: predict_setattr
# ---------------------------------------------------------------------------------------------------------

# Right in every respect: the text the predict_setattr mistakes below change (each says how), not a student's.
_PREDICT_RIGHT = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")
    bad_name = name == "" or "." in name
    on_class = any(name in vars(klass) for klass in type(module).__mro__)
    if isinstance(value, nn.Parameter):
        if params is None:
            return "AttributeError"
        if bad_name or (name not in params and on_class):
            return "KeyError"
        return "ValueError" if value.grad_fn is not None else "parameter"
    if params is not None and name in params:
        return "parameter" if value is None else "TypeError"
    if isinstance(value, nn.Module):
        return "submodule" if modules is not None else "AttributeError"
    if modules is not None and name in modules:
        return "submodule" if value is None else "TypeError"
    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
        if value is not None and not isinstance(value, torch.Tensor):
            return "TypeError"
        if buffers is None:
            return "AttributeError"
        if bad_name or (name not in buffers and hasattr(module, name)):
            return "KeyError"
        if isinstance(value, nn.Buffer):
            persistent = value.persistent
        else:
            persistent = name not in state["_non_persistent_buffers_set"]
        return "buffer" if persistent else "non-persistent buffer"
    found = getattr(type(module), name, None)
    if isinstance(found, property) and found.fset is None:
        return "AttributeError"
    return "attribute"
'''

# Treats None as "nothing to register" and calls it a plain attribute. The visible cell assigns no None, so it
# passes; the hidden cases put None on parameter, buffer and submodule names, which keep their slots.
PREDICT_IGNORES_NONE = SOLUTION.edited_answer(
    _PREDICT_RIGHT,
    '''
     """Say what setattr(module, name, value) would do, without doing it."""
+    if value is None:
+        return "attribute"  # None is not a tensor or a module: nothing to register
@@
-        return "parameter" if value is None else "TypeError"
+        return "TypeError"
@@
-        return "submodule" if value is None else "TypeError"
+        return "TypeError"
@@
-        if value is not None and not isinstance(value, torch.Tensor):
+        if not isinstance(value, torch.Tensor):
''',
)

# Tests "is the value a Module?" before the guard on parameter names, so a module assigned to the name of a
# parameter becomes a "submodule" instead of the TypeError. The visible cell has no such case.
PREDICT_MODULE_BEFORE_PARAMETER = SOLUTION.edited_answer(
    _PREDICT_RIGHT,
    """
     on_class = any(name in vars(klass) for klass in type(module).__mro__)
+    if isinstance(value, nn.Module):
+        return "submodule" if modules is not None else "AttributeError"
@@
-    if isinstance(value, nn.Module):
-        return "submodule" if modules is not None else "AttributeError"
""",
)

SOLUTION.student(
    "predict_module_before_parameter",
    {"predict_setattr": PREDICT_MODULE_BEFORE_PARAMETER},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 3},
)

# Enters the buffer branch only for an nn.Buffer value: a plain tensor (or None) assigned to the name of an
# existing buffer is predicted to be a plain attribute, but it replaces the buffer.
PREDICT_FORGETS_BUFFER_NAME = SOLUTION.edited_answer(
    _PREDICT_RIGHT,
    """
-    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
-        if value is not None and not isinstance(value, torch.Tensor):
-            return "TypeError"
+    if isinstance(value, nn.Buffer):
@@
-        if isinstance(value, nn.Buffer):
-            persistent = value.persistent
-        else:
-            persistent = name not in state["_non_persistent_buffers_set"]
-        return "buffer" if persistent else "non-persistent buffer"
+        return "buffer" if value.persistent else "non-persistent buffer"
""",
)

# Knows that None keeps a parameter slot, but not that anything else on that name is refused: a tensor, an int
# or a module assigned to a parameter's name falls through to the later branches.
PREDICT_FORGETS_PARAMETER_TYPEERROR = SOLUTION.edited_answer(
    _PREDICT_RIGHT,
    """
-    if params is not None and name in params:
-        return "parameter" if value is None else "TypeError"
+    if params is not None and name in params and value is None:
+        return "parameter"
""",
)

SOLUTION.student(
    "predict_forgets_parameter_typeerror", {"predict_setattr": PREDICT_FORGETS_PARAMETER_TYPEERROR}, (0, 3.56, 0, 0)
)

# Runs register_parameter's "already exists" check on the module as it is now, with hasattr. But the Parameter
# branch first clears the name from __dict__, _buffers and _modules, so a Parameter over a plain attribute, a
# buffer or a submodule is registered, not refused.
PREDICT_HASATTR_BEFORE_CLEARING = SOLUTION.edited_answer(
    _PREDICT_RIGHT,
    """
-    on_class = any(name in vars(klass) for klass in type(module).__mro__)
@@
-        if bad_name or (name not in params and on_class):
+        if bad_name or (name not in params and hasattr(module, name)):
""",
)

SOLUTION.student(
    "predict_hasattr_before_clearing",
    {"predict_setattr": PREDICT_HASATTR_BEFORE_CLEARING},
    (0, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 2},
)

# Takes a buffer's persistence from the module's non-persistent set even when the value carries an nn.Buffer
# tag, whose own `persistent` wins.
PREDICT_PERSISTENCE_FROM_SET = SOLUTION.edited_answer(
    _PREDICT_RIGHT,
    """
-        if isinstance(value, nn.Buffer):
-            persistent = value.persistent
-        else:
-            persistent = name not in state["_non_persistent_buffers_set"]
-        return "buffer" if persistent else "non-persistent buffer"
+        if name in state["_non_persistent_buffers_set"]:
+            return "non-persistent buffer"
+        return "buffer"
""",
)

SOLUTION.student(
    "predict_persistence_from_set",
    {"predict_setattr": PREDICT_PERSISTENCE_FROM_SET},
    (0, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 5},
)

# Does not reason at all: tries the assignment on a deep copy. The visible Probe refuses to be copied.
PREDICT_SETATTR_ON_DEEPCOPY = '''import copy


def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    twin = copy.deepcopy(module)
    try:
        setattr(twin, name, value)
    except Exception as error:
        return type(error).__name__
    state = vars(twin)
    if name in state.get("_parameters", {}):
        return "parameter"
    if name in state.get("_buffers", {}):
        return "non-persistent buffer" if name in state["_non_persistent_buffers_set"] else "buffer"
    if name in state.get("_modules", {}):
        return "submodule"
    return "attribute"
'''

# The same trial, better hidden: a twin built by hand (no copy protocol) and nn.Module.__setattr__ called
# directly (so Probe.__setattr__ counts nothing). It passes the visible cell; the hidden cell watches
# nn.Module.__setattr__ itself.
PREDICT_SETATTR_ON_BARE_TWIN = SOLUTION.edited_answer(
    PREDICT_SETATTR_ON_DEEPCOPY,
    """
-import copy
-
-
@@
-    twin = copy.deepcopy(module)
+    twin = object.__new__(type(module))
+    for key, item in vars(module).items():
+        vars(twin)[key] = type(item)(item) if isinstance(item, (dict, set)) else item
@@
-        setattr(twin, name, value)
+        nn.Module.__setattr__(twin, name, value)
""",
)

SOLUTION.student(
    "predict_setattr_on_bare_twin",
    {"predict_setattr": PREDICT_SETATTR_ON_BARE_TWIN},
    (0, 0, 0, 0),
    breaks={"test_predict_setattr_hidden": 8},
)  # rule 8 broken: the part earns nothing

# Reasons right, but returns the exception class itself (KeyError) where the contract asks for its name
# ("KeyError").
PREDICT_RETURNS_EXCEPTION_CLASS = SOLUTION.edited(
    "predict_setattr",
    """
-            return "AttributeError"  # cannot assign parameters before Module.__init__() call
+            return AttributeError  # cannot assign parameters before Module.__init__() call
         if bad_name(name):
-            return "KeyError"
+            return KeyError
@@
-            return "KeyError"  # attribute 'name' already exists
+            return KeyError  # attribute 'name' already exists
@@
-            return "ValueError"  # cannot assign a non-leaf tensor to a parameter
+            return ValueError  # cannot assign a non-leaf tensor to a parameter
@@
-        return "parameter" if value is None else "TypeError"
+        return "parameter" if value is None else TypeError
@@
-        return "AttributeError" if modules is None else "submodule"
+        return AttributeError if modules is None else "submodule"
@@
-        return "submodule" if value is None else "TypeError"
+        return "submodule" if value is None else TypeError
@@
-            return "TypeError"
+            return TypeError
@@
-            return "AttributeError"  # cannot assign buffer before Module.__init__() call
+            return AttributeError  # cannot assign buffer before Module.__init__() call
         if bad_name(name):
-            return "KeyError"
+            return KeyError
@@
-            return "KeyError"  # attribute 'name' already exists (nothing was cleared first)
+            return KeyError  # attribute 'name' already exists (nothing was cleared first)
@@
-                return "AttributeError"  # a property without a setter
+                return AttributeError  # a property without a setter
""",
)

SOLUTION.student(
    "predict_returns_exception_class",
    {"predict_setattr": PREDICT_RETURNS_EXCEPTION_CLASS},
    (0, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 1},
)

# Checks the names already registered (parameter, submodule, buffer) before looking at a Module value: a module
# assigned to a submodule's or a buffer's name is predicted refused (TypeError), but the Module branch comes
# first and replaces it.
PREDICT_BUFFER_NAME_BEFORE_MODULE = SOLUTION.edited(
    "predict_setattr",
    """
-    # 3. A Module value: clear the name from __dict__, parameters and buffers, write _modules[name].
-    if isinstance(value, nn.Module):
-        return "AttributeError" if modules is None else "submodule"
@@
         return "buffer" if persistent else "non-persistent buffer"
+    # 3. A Module value: clear the name from __dict__, parameters and buffers, write _modules[name].
+    if isinstance(value, nn.Module):
+        return "AttributeError" if modules is None else "submodule"
""",
)

SOLUTION.student(
    "predict_buffer_name_before_module",
    {"predict_setattr": PREDICT_BUFFER_NAME_BEFORE_MODULE},
    (0, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 4},
)

# Looks for the nearest property in the MRO and skips whatever else the classes define: a subclass's class attribute
# that hides a base class's property without a setter is predicted to refuse the assignment (AttributeError), but
# object.__setattr__ sees the class attribute first, which is no descriptor, and stores the value.
PREDICT_FIRST_PROPERTY_IN_MRO = SOLUTION.edited(
    "predict_setattr",
    """
-        if name in vars(klass):
-            attr = vars(klass)[name]
-            if isinstance(attr, property) and attr.fset is None:
-                return "AttributeError"  # a property without a setter
-            break
+        attr = vars(klass).get(name)
+        if isinstance(attr, property):  # the nearest property decides
+            return "attribute" if attr.fset is not None else "AttributeError"
""",
)

SOLUTION.student("predict_first_property_in_mro", {"predict_setattr": PREDICT_FIRST_PROPERTY_IN_MRO}, (2, 3.56, 0, 0))

# Takes every property for read-only: a property with a setter is predicted to refuse the assignment
# (AttributeError), but object.__setattr__ calls its setter.
PREDICT_EVERY_PROPERTY_READ_ONLY = SOLUTION.edited(
    "predict_setattr",
    """
-            if isinstance(attr, property) and attr.fset is None:
+            if isinstance(attr, property):
""",
)

SOLUTION.student(
    "predict_every_property_read_only",
    {"predict_setattr": PREDICT_EVERY_PROPERTY_READ_ONLY},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 6},
)

# Looks for the property on the module's own class only: a read-only property inherited from a base class is
# predicted to be "attribute", but object.__setattr__ finds it through the MRO and raises AttributeError (review 30,
# w_p1_property_own_class_only; rule 6).
PREDICT_PROPERTY_OWN_CLASS_ONLY = SOLUTION.edited(
    "predict_setattr",
    """
-    for klass in type(module).__mro__:
+    for klass in type(module).__mro__[:1]:
""",
)

SOLUTION.student(
    "predict_property_own_class_only",
    {"predict_setattr": PREDICT_PROPERTY_OWN_CLASS_ONLY},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 6},
)

# Asks hasattr(type(module), name) whether the class supplies the name: that also finds what the metaclass `type`
# gives the class (`mro`, `__name__`), which an instance does not have, so a Parameter there is predicted KeyError
# instead of "parameter" (review 30, w_p1_hasattr_on_type; rule 2).
PREDICT_HASATTR_ON_TYPE = SOLUTION.edited(
    "predict_setattr",
    """
-        if name not in params and on_class(name):
+        if name not in params and hasattr(type(module), name):
""",
)

SOLUTION.student(
    "predict_hasattr_on_type",
    {"predict_setattr": PREDICT_HASATTR_ON_TYPE},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 2},
)

# Right predictions, but mimics the Parameter branch's clearing on the module itself: a Parameter
# assigned over a plain attribute, a buffer or a submodule removes that entry from the real module.
PREDICT_CLEARS_FOR_REAL = SOLUTION.edited(
    "predict_setattr",
    """
             return "AttributeError"  # cannot assign parameters before Module.__init__() call
         if bad_name(name):
             return "KeyError"
+        for registry in (state, buffers, modules):  # the Parameter branch clears the name everywhere else first
+            registry.pop(name, None)
""",
)

SOLUTION.student(
    "predict_clears_for_real",
    {"predict_setattr": PREDICT_CLEARS_FOR_REAL},
    (0, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 7},
)

# Recognises a Parameter by its exact type: a subclass (nn.UninitializedParameter, a user's) is taken for any other
# value, though torch's isinstance registers it as a parameter.
PREDICT_EXACT_PARAMETER_TYPE = SOLUTION.edited(
    "predict_setattr",
    """
-    if isinstance(value, nn.Parameter):
+    if type(value) is nn.Parameter:
""",
)

SOLUTION.student(
    "predict_exact_parameter_type",
    {"predict_setattr": PREDICT_EXACT_PARAMETER_TYPE},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 2},
)

# Accepts only an exact torch.Tensor on a buffer's name: a tensor subclass is refused (TypeError), though torch
# stores it as a buffer.
PREDICT_EXACT_TENSOR_TYPE = SOLUTION.edited(
    "predict_setattr",
    """
-        if value is not None and not isinstance(value, torch.Tensor):
+        if value is not None and type(value) is not torch.Tensor:
""",
)

SOLUTION.student(
    "predict_exact_tensor_type",
    {"predict_setattr": PREDICT_EXACT_TENSOR_TYPE},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 5},
)

# Recognises a property by its exact type: a property subclass without a setter (abc.abstractproperty) is predicted
# to store the value, though it refuses it as any property without a setter does.
PREDICT_EXACT_PROPERTY_TYPE = SOLUTION.edited(
    "predict_setattr",
    """
-            if isinstance(attr, property) and attr.fset is None:
+            if type(attr) is property and attr.fset is None:
""",
)

SOLUTION.student(
    "predict_exact_property_type",
    {"predict_setattr": PREDICT_EXACT_PROPERTY_TYPE},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 6},
)

# Lets an instance attribute hide the class's: a Parameter on a class attribute's name that __dict__ shadows is
# predicted registered, but the branch clears __dict__ first and then finds the class's (KeyError).
PREDICT_INSTANCE_SHADOWS_CLASS = SOLUTION.edited(
    "predict_setattr",
    """
-        if name not in params and on_class(name):
+        if name not in params and name not in state and on_class(name):
""",
)

SOLUTION.student(
    "predict_instance_shadows_class",
    {"predict_setattr": PREDICT_INSTANCE_SHADOWS_CLASS},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 2},
)

# Takes an entry of __dict__ for plain storage before looking at the class: a property without a setter of that
# name is a data descriptor and still refuses the assignment (AttributeError).
PREDICT_INSTANCE_BEATS_PROPERTY = SOLUTION.edited(
    "predict_setattr",
    """
     # 6. Everything else: object.__setattr__, which honours data descriptors found on the class.
+    if name in state:
+        return "attribute"
""",
)

SOLUTION.student(
    "predict_instance_beats_property",
    {"predict_setattr": PREDICT_INSTANCE_BEATS_PROPERTY},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 6},
)

# A correct part 1, organised around "which registry holds the name now".
PREDICT_CORRECT_BY_CURRENT_KIND = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    ready = "_parameters" in state  # has nn.Module.__init__ run?
    current = None  # which registry holds name now
    if ready:
        if name in state["_parameters"]:
            current = "parameter"
        elif name in state["_modules"]:
            current = "submodule"
        elif name in state["_buffers"]:
            current = "non-persistent buffer" if name in state["_non_persistent_buffers_set"] else "buffer"
    from_class = any(name in vars(klass) for klass in type(module).__mro__)
    bad_name = name == "" or "." in name

    if isinstance(value, nn.Parameter):
        if not ready:
            return "AttributeError"
        if bad_name or (current != "parameter" and from_class):
            return "KeyError"
        return "ValueError" if value.grad_fn is not None else "parameter"
    if current == "parameter":
        return "parameter" if value is None else "TypeError"
    if isinstance(value, nn.Module):
        return "submodule" if ready else "AttributeError"
    if current == "submodule":
        return "submodule" if value is None else "TypeError"
    if isinstance(value, nn.Buffer):
        if not ready:
            return "AttributeError"
        if bad_name or (current is None and (name in state or from_class)):
            return "KeyError"
        return "buffer" if value.persistent else "non-persistent buffer"
    if current is not None:  # a plain tensor or None keeps the buffer, persistent or not
        return current if value is None or isinstance(value, torch.Tensor) else "TypeError"
    attribute = getattr(type(module), name, None)
    if isinstance(attribute, property) and attribute.fset is None:
        return "AttributeError"
    return "attribute"
'''

# ---------------------------------------------------------------------------------------------------------
# Part 2: find_unregistered_tensors
# ---------------------------------------------------------------------------------------------------------

# A correct part 2: its own depth-first walk over _modules with a set of visited modules.
FIND_CORRECT_OWN_WALK = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slot_names = set(vars(nn.Module()))
    names = []
    visited = set()

    def scan(value, path):
        if isinstance(value, torch.Tensor):
            names.append(path)
        elif isinstance(value, dict):
            for key in value:
                scan(value[key], path + "[" + repr(key) + "]")
        elif isinstance(value, (list, tuple)):
            for index in range(len(value)):
                scan(value[index], path + "[" + str(index) + "]")

    def walk(current, prefix):
        if id(current) in visited:
            return
        visited.add(id(current))
        state = vars(current)
        for key in state:
            if key not in slot_names:
                scan(state[key], prefix + key)
        for key, child in state["_modules"].items():
            if child is not None:
                walk(child, prefix + key + ".")

    walk(module, "")
    names.sort()
    return names
'''

SOLUTION.student(
    "predict_ignores_none",
    {"predict_setattr": PREDICT_IGNORES_NONE, "find_unregistered_tensors": FIND_CORRECT_OWN_WALK},
    (2, 2.67, 2, 4),
)
SOLUTION.student(
    "predict_setattr_on_deepcopy",
    {"predict_setattr": PREDICT_SETATTR_ON_DEEPCOPY, "find_unregistered_tensors": FIND_CORRECT_OWN_WALK},
    (0, 0, 2, 4),
)
SOLUTION.control(
    "alternative_correct",
    {"predict_setattr": PREDICT_CORRECT_BY_CURRENT_KIND, "find_unregistered_tensors": FIND_CORRECT_OWN_WALK},
)

# The solution without its branch for a module met outside _modules (visit does nothing with one either way):
# right in every respect, the text the find_unregistered_tensors mistakes below change, not a student's.
_FIND_RIGHT = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-        elif isinstance(item, nn.Module):
-            return  # a module held outside _modules is not walked
""",
)

# Walks the right entries but reads each value back through getattr(submodule, name): same values on ordinary
# modules (so the visible cell passes), but it runs the module's attribute machinery, which the hidden
# Watched modules record.
FIND_WITH_GETATTR = SOLUTION.edited_answer(
    _FIND_RIGHT,
    """
-        for name, item in vars(submodule).items():  # vars(): no getattr, no property, no __getattr__
+        for name in vars(submodule):
@@
-                visit(item, f"{prefix}.{name}" if prefix else name)
+                visit(getattr(submodule, name), f"{prefix}.{name}" if prefix else name)
""",
)

SOLUTION.student(
    "predict_forgets_buffer_name",
    {"predict_setattr": PREDICT_FORGETS_BUFFER_NAME, "find_unregistered_tensors": FIND_WITH_GETATTR},
    (0, 3.56, 2, 3.43),
)
SOLUTION.student(
    "find_with_getattr",
    {"predict_setattr": PREDICT_CORRECT_BY_CURRENT_KIND, "find_unregistered_tensors": FIND_WITH_GETATTR},
    (2, 4, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 7},
)

# Decides "registered" by what state_dict() saves: every buffer is collected, and the non-persistent ones
# (never saved) come out as unregistered although they are in _buffers.
FIND_NON_PERSISTENT_AS_UNREGISTERED = SOLUTION.edited_answer(
    _FIND_RIGHT,
    '''
     """Sorted qualified names of the tensors that the module tree holds outside its registries."""
+    saved = set(module.state_dict())
@@
     for prefix, submodule in module.named_modules():
+        qualified = (lambda name: f"{prefix}.{name}") if prefix else (lambda name: name)
+        for name, buffer in vars(submodule)["_buffers"].items():
+            if buffer is not None:
+                found.append(qualified(name))
@@
-                visit(item, f"{prefix}.{name}" if prefix else name)
-    return sorted(found)
+                visit(item, qualified(name))
+    return sorted(name for name in found if name not in saved)
''',
)

SOLUTION.student(
    "find_non_persistent_as_unregistered",
    {"find_unregistered_tensors": FIND_NON_PERSISTENT_AS_UNREGISTERED},
    (0, 0, 0, 3.43),
)

# named_modules(remove_duplicate=False): a shared submodule is reported once per name it is registered under.
FIND_SHARED_UNDER_EVERY_NAME = SOLUTION.edited_answer(
    _FIND_RIGHT,
    """
-    for prefix, submodule in module.named_modules():
+    for prefix, submodule in module.named_modules(remove_duplicate=False):
""",
)

SOLUTION.student(
    "find_shared_under_every_name", {"find_unregistered_tensors": FIND_SHARED_UNDER_EVERY_NAME}, (0, 0, 2, 3.43)
)

# Walks the tree level by level: each module is visited once, but a shared submodule gets the first name a
# breadth-first walk reaches, not the first name named_modules() (depth-first) gives it.
FIND_BREADTH_FIRST = SOLUTION.edited_answer(
    _FIND_RIGHT,
    """
-    found = []
+    found, seen = [], set()
@@
-    for prefix, submodule in module.named_modules():
-        for name, item in vars(submodule).items():  # vars(): no getattr, no property, no __getattr__
+    queue = [("", module)]
+    while queue:
+        prefix, current = queue.pop(0)
+        if id(current) in seen:
+            continue
+        seen.add(id(current))
+        for name, item in vars(current).items():
@@
                 visit(item, f"{prefix}.{name}" if prefix else name)
+        for name, child in vars(current)["_modules"].items():
+            if child is not None:
+                queue.append((f"{prefix}.{name}" if prefix else name, child))
""",
)

SOLUTION.student(
    "find_breadth_first",
    {"find_unregistered_tensors": FIND_BREADTH_FIRST},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 2},
)

# Also walks the plain attributes of modules found inside lists and dicts, which the contract excludes.
FIND_WALKS_MODULES_IN_LISTS = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-            return  # a module held outside _modules is not walked
+            for name, inner in vars(item).items():
+                if name not in slots:
+                    visit(inner, f"{where}.{name}")
""",
)

SOLUTION.student(
    "find_walks_modules_in_lists", {"find_unregistered_tensors": FIND_WALKS_MODULES_IN_LISTS}, (0, 0, 0, 3.43)
)

# Writes every dict key between quotes by hand instead of using repr: 7 becomes '7'.
FIND_QUOTES_KEYS_BY_HAND = SOLUTION.edited_answer(
    _FIND_RIGHT,
    """
-                visit(inner, f"{where}[{key!r}]")
+                visit(inner, f"{where}['{key}']")
""",
)

SOLUTION.student(
    "find_quotes_keys_by_hand",
    {"find_unregistered_tensors": FIND_QUOTES_KEYS_BY_HAND},
    (0, 0, 0, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 5},
)

# Compares exact types: misses OrderedDicts and named tuples, which the contract includes. The visible cell
# holds only plain dicts, lists and tuples.
FIND_EXACT_TYPES = SOLUTION.edited_answer(
    _FIND_RIGHT,
    """
-        if isinstance(item, torch.Tensor):  # Parameters and nn.Buffer-tagged tensors included
+        if type(item) in (torch.Tensor, nn.Parameter):
@@
-        elif isinstance(item, dict):
+        elif type(item) is dict:
@@
-        elif isinstance(item, (list, tuple)):
+        elif type(item) in (list, tuple):
""",
)

SOLUTION.student(
    "find_exact_types",
    {"find_unregistered_tensors": FIND_EXACT_TYPES},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 4},
)

# Leaves out every tensor object that is also registered somewhere (a list holding the module's own weight):
# the contract counts places, not objects.
FIND_SKIPS_REGISTERED_OBJECTS = SOLUTION.edited_answer(
    _FIND_RIGHT,
    """
     slots = set(vars(nn.Module()))  # the 17 names nn.Module.__init__ writes: registries, hook tables, flags
+    registered = {id(tensor) for tensor in module.parameters()} | {id(tensor) for tensor in module.buffers()}
@@
-            found.append(where)
+            if id(item) not in registered:
+                found.append(where)
""",
)

SOLUTION.student(
    "find_skips_registered_objects",
    {"find_unregistered_tensors": FIND_SKIPS_REGISTERED_OBJECTS},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 6},
)

# Reports each tensor object once, under the first place it met it (a set of the ids seen): the contract counts
# places, not objects, so a tensor held twice, or a list holding the module's own weight twice, loses a place.
FIND_DEDUPLICATES_OBJECTS = SOLUTION.edited_answer(
    _FIND_RIGHT,
    """
     found = []
+    met = set()
@@
-            found.append(where)
+            if id(item) not in met:
+                met.add(id(item))
+                found.append(where)
""",
)

SOLUTION.student(
    "find_deduplicates_objects",
    {"find_unregistered_tensors": FIND_DEDUPLICATES_OBJECTS},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 6},
)

# Finds the right places but returns them in the order it met them, not sorted with sorted().
FIND_UNSORTED = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-    return sorted(found)
+    return found
""",
)

SOLUTION.student(
    "find_unsorted",
    {"find_unregistered_tensors": FIND_UNSORTED},
    (0, 0, 0, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 1},
)

# Takes every name that starts with an underscore for a slot: a plain attribute such as `_buffers_old`
# or `_cache` is never looked into.
FIND_SKIPS_PRIVATE_NAMES = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-            if name not in slots:
+            if not name.startswith("_"):  # the slots are the private names
""",
)

SOLUTION.student(
    "find_skips_private_names",
    {"find_unregistered_tensors": FIND_SKIPS_PRIVATE_NAMES},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 3},
)

# The shortcut of the review (issue 25): nn.Module's own __setattr__ tried on a stand-in object, the function
# captured when the cell runs (a default value), so that a watch of nn.Module's methods during the call never
# sees it. Rule 8 sees the code that runs, rule 9 the reference it holds.
PREDICT_CAPTURED_SETATTR_ON_TWIN = SOLUTION.edited_answer(
    PREDICT_SETATTR_ON_BARE_TWIN,
    """
-def predict_setattr(module, name, value):
+def predict_setattr(module, name, value, _assign=nn.Module.__setattr__):
@@
-        nn.Module.__setattr__(twin, name, value)
+        _assign(twin, name, value)
""",
)

SOLUTION.student(
    "predict_captured_setattr_on_twin", {"predict_setattr": PREDICT_CAPTURED_SETATTR_ON_TWIN}, (0, 0, 0, 0)
)

# Right in every case, but it reads the module's state through nn.Module.__getstate__, captured as a global: a
# function of nn.Module held by reference, which rule 9 forbids (nothing is assigned, so rule 8 holds).
PREDICT_STATE_BY_GETSTATE = (
    "_module_state = nn.Module.__getstate__  # a copy of vars(module), Demo's own __getstate__ bypassed\n\n\n"
    + SOLUTION.edited_answer(
        PREDICT_CORRECT_BY_CURRENT_KIND,
        """
-    state = vars(module)
+    state = _module_state(module)
""",
    )
)

SOLUTION.student(
    "predict_state_by_getstate",
    {"predict_setattr": PREDICT_STATE_BY_GETSTATE, "find_unregistered_tensors": FIND_CORRECT_OWN_WALK},
    (0, 0, 2, 4),
    breaks={"test_predict_setattr_hidden": 9},
)

# The trial done out of the watch's sight (issue 25's reviews): in a child process while a profiler watches, which
# sends its outcome back; in a thread that _thread starts; on a bare twin with the profiler switched off;
# on a twin whose class assigns with nn.Module's methods compiled again from torch's source. Rule 8 sees each: the
# process or thread started, the profiler switched, the code made at run time (the grading sandbox's guard).
PREDICT_IN_FORK_WHEN_WATCHED = (
    SOLUTION.edited_answer(
        PREDICT_SETATTR_ON_BARE_TWIN,
        '''
-def predict_setattr(module, name, value):
-    """Say what setattr(module, name, value) would do, without doing it."""
+def trial(module, name, value):
+    """The assignment tried on a bare twin of the module."""
''',
    )
    + '''

def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    import os
    import sys

    if sys.getprofile() is None:
        return trial(module, name, value)
    reading, writing = os.pipe()
    if os.fork() == 0:  # watched: the trial runs in a child process, which sends its outcome back
        try:
            os.write(writing, trial(module, name, value).encode())
        finally:
            os._exit(0)
    os.close(writing)
    said = os.read(reading, 64).decode()
    os.close(reading)
    os.wait()
    return said
'''
)

PREDICT_TWIN_IN_RAW_THREAD = SOLUTION.edited_answer(
    PREDICT_SETATTR_ON_BARE_TWIN,
    """
+def in_raw_thread(function, *args):
+    \"\"\"function(*args) in a thread that _thread starts; what it raises is raised here.\"\"\"
+    import _thread
+
+    done, failed = _thread.allocate_lock(), []
+
+    def run():
+        try:
+            function(*args)
+        except Exception as error:
+            failed.append(error)
+        finally:
+            done.release()
+
+    done.acquire()
+    _thread.start_new_thread(run, ())
+    done.acquire()
+    if failed:
+        raise failed[0]
+
+
 def predict_setattr(module, name, value):
@@
-        nn.Module.__setattr__(twin, name, value)
+        in_raw_thread(nn.Module.__setattr__, twin, name, value)
""",
)

PREDICT_TWIN_PROFILER_OFF = SOLUTION.edited_answer(
    PREDICT_SETATTR_ON_BARE_TWIN,
    """
+import sys
+
+
 def predict_setattr(module, name, value):
@@
-        nn.Module.__setattr__(twin, name, value)
+        profile = sys.getprofile()
+        sys.setprofile(None)
+        try:
+            nn.Module.__setattr__(twin, name, value)
+        finally:
+            sys.setprofile(profile)
""",
)

PREDICT_ON_TWIN_FROM_SOURCE = SOLUTION.edited_answer(
    PREDICT_SETATTR_ON_BARE_TWIN,
    '''
+import ast
+import inspect
+import textwrap
+
+ASSIGNING = ("__setattr__", "register_parameter", "register_buffer")
+
+
+def twin_class(cls):
+    """cls, with nn.Module's ways of assigning compiled again from torch's source (read when it is first needed)."""
+    if not hasattr(twin_class, "copied"):
+        source = inspect.getsource(inspect.getmodule(nn.Module))
+        [body] = [node.body for node in ast.parse(source).body if getattr(node, "name", "") == "Module"]
+        methods = [node for node in body if getattr(node, "name", "") in ASSIGNING]
+        text = "\\n".join(textwrap.dedent(ast.get_source_segment(source, node)) for node in methods)
+        scope = dict(vars(inspect.getmodule(nn.Module)))
+        text = text.replace("super().__setattr__(", "object.__setattr__(self, ")
+        exec("from __future__ import annotations\\n" + text, scope)
+        twin_class.copied = {name: scope[name] for name in ASSIGNING}
+    return type("Twin", (cls,), dict(twin_class.copied))
+
+
 def predict_setattr(module, name, value):
@@
-    twin = object.__new__(type(module))
+    twin = object.__new__(twin_class(type(module)))
@@
-        nn.Module.__setattr__(twin, name, value)
+        setattr(twin, name, value)
''',
)

# Checks the buffer's name before asking whether the module is half-built: a dotted or empty name on a half-built
# module comes out KeyError, where torch raises AttributeError first.
PREDICT_BUFFER_NAME_BEFORE_HALF_BUILT = SOLUTION.edited(
    "predict_setattr",
    """
-        if buffers is None:
-            return "AttributeError"  # cannot assign buffer before Module.__init__() call
         if bad_name(name):
             return "KeyError"
+        if buffers is None:
+            return "AttributeError"  # cannot assign buffer before Module.__init__() call
""",
)

SOLUTION.student(
    "predict_buffer_name_before_half_built",
    {"predict_setattr": PREDICT_BUFFER_NAME_BEFORE_HALF_BUILT},
    (2, 3.56, 0, 0),
    breaks={"test_predict_setattr_hidden": 5},
)

# Recognises tensors by their exact class: a tensor subclass (as_subclass, UninitializedParameter) is missed.
FIND_EXACT_TENSOR_TYPES = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-        if isinstance(item, torch.Tensor):  # Parameters and nn.Buffer-tagged tensors included
+        if type(item) in (torch.Tensor, nn.Parameter):
""",
)

SOLUTION.student(
    "find_exact_tensor_types",
    {"find_unregistered_tensors": FIND_EXACT_TENSOR_TYPES},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 4},
)

# Walks every Mapping and Sequence of collections.abc: a deque, a UserDict or a UserList is looked into too.
FIND_ABC_CONTAINERS = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-        elif isinstance(item, dict):
+        elif isinstance(item, collections.abc.Mapping):
@@
-        elif isinstance(item, (list, tuple)):
+        elif isinstance(item, collections.abc.Sequence) and not isinstance(item, str) or isinstance(item, deque):
""",
    """
-def find_unregistered_tensors(module):
+import collections.abc
+from collections import deque
+
+
+def find_unregistered_tensors(module):
""",
)

SOLUTION.student(
    "find_abc_containers",
    {"find_unregistered_tensors": FIND_ABC_CONTAINERS},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 4},
)

# Leaves out the three registries only: the other slots (training, the hook and flag tables) are looked into as
# plain attributes, and a tensor stored in training is reported.
FIND_ONLY_REGISTRIES_LEFT_OUT = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-    slots = set(vars(nn.Module()))  # the 17 names nn.Module.__init__ writes: registries, hook tables, flags
+    slots = {"_parameters", "_buffers", "_modules"}
""",
)

SOLUTION.student(
    "find_only_registries_left_out",
    {"find_unregistered_tensors": FIND_ONLY_REGISTRIES_LEFT_OUT},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 3},
)

for _student, _answer in (
    ("predict_in_fork_when_watched", PREDICT_IN_FORK_WHEN_WATCHED),
    ("predict_twin_in_raw_thread", PREDICT_TWIN_IN_RAW_THREAD),
    ("predict_twin_profiler_off", PREDICT_TWIN_PROFILER_OFF),
    ("predict_on_twin_from_source", PREDICT_ON_TWIN_FROM_SOURCE),
):
    SOLUTION.student(_student, {"predict_setattr": _answer}, (0, 0, 0, 0), breaks={"test_predict_setattr_hidden": 8})

# Keeps one module-level list, cleared and refilled on every call: each call returns that same list, so a caller who
# keeps or edits one result sees it change (review 30, w_p2_global_list; rule 1's "a new list").
FIND_ONE_GLOBAL_LIST = SOLUTION.edited(
    "find_unregistered_tensors",
    """
-def find_unregistered_tensors(module):
+FOUND = []  # one list for every call
+
+
+def find_unregistered_tensors(module):
@@
-    found = []
+    found = FOUND
+    found.clear()
@@
-    return sorted(found)
+    found.sort()
+    return found
""",
)

SOLUTION.student(
    "find_one_global_list",
    {"find_unregistered_tensors": FIND_ONE_GLOBAL_LIST},
    (0, 0, 2, 3.43),
    breaks={"test_find_unregistered_tensors_hidden": 1},
)

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
