"""Typical answers to exercise 6 and the points each graded cell must give them (grader/scripted.py).

The four parts are graded independently: the tests of parts 2 to 4 build their trees without the student's
part 1, so a student who leaves part 1 (or any other part) unfinished still earns the points of the parts done.
"""

from grader.scripted import Solution

# The students' points are given for the notebook's graded test cells, in this order.
SOLUTION = Solution(
    __file__,
    points_of=(
        "test_mini_module_visible",
        "test_mini_module_hidden",
        "test_traversal_visible",
        "test_traversal_hidden",
        "test_state_dict_visible",
        "test_state_dict_hidden",
        "test_modes_and_hooks_visible",
        "test_modes_and_hooks_hidden",
    ),
)


# ---------------------------------------------------------------------------------------------------------
# Part 1: MiniModule (construction and routing)
# ---------------------------------------------------------------------------------------------------------

# A correct part 1, written differently from the instructor's: one removal helper, the name checks in one test.
MINI_CORRECT = '''class MiniModule:
    """A module class of its own, not derived from nn.Module: registries, routing, traversal,
    state_dict, the training flag and forward hooks, built part by part."""

    def __init__(self):
        """Write the seven slots of the table in "The sketch" into vars(self), in that order."""
        fresh = (True, {}, {}, set(), OrderedDict(), OrderedDict(), {})
        for name, value in zip(SLOTS, fresh):
            object.__setattr__(self, name, value)

    @staticmethod
    def _drop(name, *places):
        for place in places:
            if isinstance(place, set):
                place.discard(name)
            elif name in place:
                del place[name]

    def __setattr__(self, name, value):
        """Route `self.name = value` to a registry or to the instance __dict__ (rules 1 to 6)."""
        state = self.__dict__
        params, buffers, modules = state.get("_parameters"), state.get("_buffers"), state.get("_modules")
        if isinstance(value, nn.Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before MiniModule.__init__() call")
            self._drop(name, state, buffers, modules, state["_non_persistent_buffers_set"])
            if "." in name or name == "" or (hasattr(self, name) and name not in params):
                raise KeyError(f"bad parameter name {name!r}")
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign a {type(value).__name__} to the parameter {name!r}")
            params[name] = None
        elif isinstance(value, MiniModule):
            if modules is None:
                raise AttributeError("cannot assign a module before MiniModule.__init__() call")
            self._drop(name, state, params, buffers, state["_non_persistent_buffers_set"])
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign a {type(value).__name__} to the submodule {name!r}")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, torch.Tensor):
                raise TypeError(f"cannot assign a {type(value).__name__} to the buffer {name!r}")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """Called by Python only when normal lookup fails: look in the registries."""
        state = vars(self)
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = state.get(registry, {})
            if name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        """`del self.name`: remove the name from its registry, or from the instance __dict__."""
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in vars(self)[registry]:
                del vars(self)[registry][name]
                if registry == "_buffers":
                    self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        """Register tensor (or None) as a buffer called name; persistent=False keeps it out of state_dict()."""
        if "_buffers" not in vars(self):
            raise AttributeError("cannot assign buffer before MiniModule.__init__() call")
        if not isinstance(name, str):
            raise TypeError("a buffer name must be a str")
        if "." in name or name == "":
            raise KeyError(f"bad buffer name {name!r}")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute {name!r} already exists")
        if tensor is not None and not isinstance(tensor, torch.Tensor):
            raise TypeError("a buffer must be a tensor or None")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)
'''

# A Parameter assigned over a submodule name is registered, but the submodule stays in _modules: the name
# is now in two registries (nn.Module drops the submodule).
MINI_PARAMETER_KEEPS_SUBMODULE = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
-            self._drop(name, state, buffers, modules, state["_non_persistent_buffers_set"])
+            self._drop(name, state, buffers, state["_non_persistent_buffers_set"])
""",
)

# The order bug: a MiniModule is routed before the registered-parameter guard, so a module assigned to a
# parameter name replaces the parameter instead of raising TypeError.
MINI_MODULE_BEFORE_PARAMETER_NAME = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
-        elif params is not None and name in params:
-            if value is not None:
-                raise TypeError(f"cannot assign a {type(value).__name__} to the parameter {name!r}")
-            params[name] = None
@@
             modules[name] = value
+        elif params is not None and name in params:
+            if value is not None:
+                raise TypeError(f"cannot assign a {type(value).__name__} to the parameter {name!r}")
+            params[name] = None
""",
)

# __getattr__ reads self._parameters: on a half-built object that attribute is missing, so the lookup calls
# __getattr__ again, until RecursionError.
MINI_GETATTR_RECURSES = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
-        state = vars(self)
-        for registry in ("_parameters", "_buffers", "_modules"):
-            entries = state.get(registry, {})
+        for entries in (self._parameters, self._buffers, self._modules):
""",
)

# The name checks of rule 1 run before the removal: a Parameter with a bad name leaves the old attribute in
# place, where nn.Module has already removed it when it raises KeyError.
MINI_CHECKS_BEFORE_REMOVAL = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
                 raise AttributeError("cannot assign parameters before MiniModule.__init__() call")
+            if "." in name or name == "" or (hasattr(self, name) and name not in params and name not in state
+                                             and name not in buffers and name not in modules):
+                raise KeyError(f"bad parameter name {name!r}")
@@
-            if "." in name or name == "" or (hasattr(self, name) and name not in params):
-                raise KeyError(f"bad parameter name {name!r}")
""",
)

SOLUTION.student(
    "parameter_checks_before_removal", {"mini_module": MINI_CHECKS_BEFORE_REMOVAL}, (2, 3.33, 0, 0, 0, 0, 0, 0)
)

# __delattr__ removes a buffer but leaves its name in _non_persistent_buffers_set.
MINI_DELATTR_KEEPS_MARK = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
-                if registry == "_buffers":
-                    self._non_persistent_buffers_set.discard(name)
""",
)

# __init__ starts from a clean instance dict: attributes set before __init__ (or kept across a second __init__)
# are lost, where nn.Module.__init__ only writes its own slots.
MINI_INIT_CLEARS_DICT = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
         fresh = (True, {}, {}, set(), OrderedDict(), OrderedDict(), {})
+        vars(self).clear()
""",
)

SOLUTION.student(
    "init_clears_dict",
    {"mini_module": MINI_INIT_CLEARS_DICT},
    (0, 3.33, 0, 0, 0, 0, 0, 0),
    breaks={"test_mini_module_hidden": 1},
)

# register_buffer only ever adds to _non_persistent_buffers_set: registering a non-persistent buffer again as
# persistent leaves it non-persistent.
MINI_BUFFER_NEVER_UNMARKS = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
-        if persistent:
-            self._non_persistent_buffers_set.discard(name)
-        else:
+        if not persistent:
""",
)

# ---------------------------------------------------------------------------------------------------------
# Part 2: Traversal
# ---------------------------------------------------------------------------------------------------------

# A correct part 2 without recursion: a stack for the pre-order walk, lists for the results.
TRAVERSAL_CORRECT = '''class Traversal:
    """Part 2: the methods that walk a tree of MiniModules. Attached to MiniModule below."""

    def named_modules(self):
        """(qualified name, module) for self and every module below it, each module once."""
        found, seen, stack = [], set(), [("", self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            found.append((name, module))
            children = [(f"{name}.{key}" if name else key, child)
                        for key, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))  # the first child is popped first
        return found

    def named_parameters(self):
        """(qualified name, parameter) for every parameter of the tree, each Parameter object once."""
        return self._named_members("_parameters")

    def named_buffers(self):
        """(qualified name, buffer) for every buffer of the tree, persistent or not, each tensor object once."""
        return self._named_members("_buffers")

    def _named_members(self, registry):
        found, seen = [], set()
        for prefix, module in self.named_modules():
            for key, value in vars(module)[registry].items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                found.append((f"{prefix}.{key}" if prefix else key, value))
        return found
'''

SOLUTION.student(
    "parameter_keeps_submodule",
    {"mini_module": MINI_PARAMETER_KEEPS_SUBMODULE, "traversal": TRAVERSAL_CORRECT},
    (2, 3.33, 2, 4, 0, 0, 0, 0),
    breaks={"test_mini_module_hidden": 2},
)

# named_parameters walks _modules on its own, without remembering anything: a shared submodule's
# parameters come out under every name, and a tied parameter twice.
TRAVERSAL_PARAMETERS_NOT_DEDUPLICATED = SOLUTION.edited_answer(
    TRAVERSAL_CORRECT,
    """
-        return self._named_members("_parameters")
+        def walk(module, prefix):
+            for key, parameter in module._parameters.items():
+                if parameter is not None:
+                    yield prefix + key, parameter
+            for key, child in module._modules.items():
+                if child is not None:
+                    yield from walk(child, prefix + key + ".")
+
+        return list(walk(self, ""))
""",
)

SOLUTION.student(
    "parameters_not_deduplicated",
    {"mini_module": MINI_CORRECT, "traversal": TRAVERSAL_PARAMETERS_NOT_DEDUPLICATED},
    (2, 4, 0, 3.43, 0, 0, 0, 0),
    breaks={"test_traversal_hidden": 4},
)

# Breadth first: a queue instead of a stack. Right on flat trees, wrong order (and wrong names for shared
# modules) as soon as a subtree is deeper than its neighbours.
TRAVERSAL_BREADTH_FIRST = SOLUTION.edited_answer(
    TRAVERSAL_CORRECT,
    """
-            name, module = stack.pop()
+            name, module = stack.pop(0)
@@
-            stack.extend(reversed(children))  # the first child is popped first
+            stack.extend(children)
""",
)

SOLUTION.student(
    "breadth_first_walk",
    {"traversal": TRAVERSAL_BREADTH_FIRST},
    (0, 0, 2, 3.43, 0, 0, 0, 0),
    breaks={"test_traversal_hidden": 2},
)

# Pairs as lists: [name, module] reads like a pair, but nn.Module gives tuples.
TRAVERSAL_LIST_PAIRS = SOLUTION.edited_answer(
    TRAVERSAL_CORRECT,
    """
-            found.append((name, module))
+            found.append([name, module])
@@
-                found.append((f"{prefix}.{key}" if prefix else key, value))
+                found.append([f"{prefix}.{key}" if prefix else key, value])
""",
)

SOLUTION.student(
    "list_pairs", {"traversal": TRAVERSAL_LIST_PAIRS}, (0, 0, 0, 3.43, 0, 0, 0, 0), breaks={"test_traversal_hidden": 1}
)

# named_modules remembers nothing: a shared submodule is yielded (and walked) once per name.
TRAVERSAL_MODULES_NOT_DEDUPLICATED = SOLUTION.edited_answer(
    TRAVERSAL_CORRECT,
    """
-            if id(module) in seen:
-                continue
""",
)

SOLUTION.student(
    "modules_not_deduplicated",
    {"traversal": TRAVERSAL_MODULES_NOT_DEDUPLICATED},
    (0, 0, 0, 3.43, 0, 0, 0, 0),
    breaks={"test_traversal_hidden": 3},
)

# named_buffers leaves out the non-persistent buffers, as state_dict() does: persistence is state_dict's business.
TRAVERSAL_BUFFERS_PERSISTENT_ONLY = SOLUTION.edited_answer(
    TRAVERSAL_CORRECT,
    """
-                if value is None or id(value) in seen:
+                if value is None or id(value) in seen or key in vars(module)["_non_persistent_buffers_set"]:
""",
)

# named_modules marks each module it reaches in the module itself and never clears the mark: the first call is
# right, every later call finds the tree already walked.
TRAVERSAL_MARKS_STAY = SOLUTION.edited_answer(
    TRAVERSAL_CORRECT,
    """
-            if id(module) in seen:
+            if vars(module).get("_walked"):
@@
-            seen.add(id(module))
+            vars(module)["_walked"] = True
""",
)

SOLUTION.student(
    "walk_marks_stay",
    {"mini_module": MINI_CORRECT, "traversal": TRAVERSAL_MARKS_STAY},
    (2, 4, 0, 3.43, 0, 0, 0, 0),
    breaks={"test_traversal_hidden": 6},
)

# ---------------------------------------------------------------------------------------------------------
# Part 3: StateDict
# ---------------------------------------------------------------------------------------------------------

# A correct part 3 with a helper method (attached too) and state_dict recursing through the children.
STATE_DICT_CORRECT = '''class StateDict:
    """Part 3: saving and loading. Attached to MiniModule below."""

    def _own_tensors(self):
        own = OrderedDict((key, value) for key, value in self._parameters.items() if value is not None)
        for key, value in self._buffers.items():
            if value is not None and key not in self._non_persistent_buffers_set:
                own[key] = value
        return own

    def state_dict(self, prefix=""):
        """A new OrderedDict {qualified key: detached tensor} of every parameter and persistent buffer."""
        result = OrderedDict((prefix + key, value.detach()) for key, value in self._own_tensors().items())
        for key, child in self._modules.items():
            if child is not None:
                result.update(child.state_dict(prefix + key + "."))
        return result

    def load_state_dict(self, state_dict, strict=True):
        """Copy the checkpoint's tensors into the tree in place; return LoadResult or raise RuntimeError."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"a checkpoint must be a mapping, not {type(state_dict).__name__}")
        checkpoint = dict(state_dict)
        missing, unexpected, errors = [], [], []

        def visit(module, prefix):
            own = module._own_tensors()
            for name, tensor in own.items():
                key = prefix + name
                if key not in checkpoint:
                    missing.append(key)
                    continue
                value = checkpoint[key]
                if not isinstance(value, torch.Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                elif value.shape != tensor.shape:
                    errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {tensor.shape}.")
                else:
                    with torch.no_grad():
                        tensor.copy_(value)
            for key in checkpoint:
                if not key.startswith(prefix):
                    continue
                rest = key[len(prefix):]
                if "." in rest:
                    if rest.split(".", 1)[0] not in module._modules:
                        unexpected.append(key)
                elif rest not in own:
                    unexpected.append(key)
            for name, child in module._modules.items():
                if child is not None:
                    visit(child, prefix + name + ".")

        visit(self, "")
        messages = []
        if strict and missing:
            messages.append("Missing key(s) in state_dict: " + ", ".join(f'"{key}"' for key in missing) + ". ")
        if strict and unexpected:
            messages.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{key}"' for key in unexpected) + ". ")
        messages.extend(errors)
        if messages:
            raise RuntimeError("Error(s) in loading state_dict for " + type(self).__name__ + ":\\n\\t"
                               + "\\n\\t".join(messages))
        return LoadResult(missing, unexpected)
'''

SOLUTION.student(
    "module_before_parameter_name",
    {"mini_module": MINI_MODULE_BEFORE_PARAMETER_NAME, "state_dict": STATE_DICT_CORRECT},
    (2, 3.33, 0, 0, 2, 4, 0, 0),
)
SOLUTION.student(
    "buffer_never_unmarks",
    {"mini_module": MINI_BUFFER_NEVER_UNMARKS, "state_dict": STATE_DICT_CORRECT},
    (2, 3.33, 0, 0, 2, 4, 0, 0),
    breaks={"test_mini_module_hidden": 5},
)

# state_dict() saves every buffer, the non-persistent ones included.
STATE_DICT_KEEPS_NON_PERSISTENT = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        result = OrderedDict((prefix + key, value.detach()) for key, value in self._own_tensors().items())
+        result = OrderedDict((prefix + key, value.detach()) for key, value in self._parameters.items()
+                             if value is not None)
+        for key, value in self._buffers.items():
+            if value is not None:
+                result[prefix + key] = value.detach()
""",
)

SOLUTION.student(
    "state_dict_keeps_non_persistent",
    {"traversal": TRAVERSAL_CORRECT, "state_dict": STATE_DICT_KEEPS_NON_PERSISTENT},
    (0, 0, 2, 4, 0, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 1},
)

# Under strict=True only missing keys raise: unexpected keys are returned as if strict were False.
STATE_DICT_STRICT_IGNORES_UNEXPECTED = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        if strict and unexpected:
+        if strict and unexpected and not unexpected:
""",
)

SOLUTION.student(
    "strict_ignores_unexpected",
    {"state_dict": STATE_DICT_STRICT_IGNORES_UNEXPECTED},
    (0, 0, 0, 0, 0, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 7},
)

# Checks everything first and copies only when the whole load succeeds: tidy, but nn.Module copies every
# matching entry before it raises, so after a failed strict load the two models differ.
STATE_DICT_COPIES_ONLY_WHEN_CLEAN = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        missing, unexpected, errors = [], [], []
+        missing, unexpected, errors, pending = [], [], [], []
@@
-                    with torch.no_grad():
-                        tensor.copy_(value)
+                    pending.append((tensor, value))
@@
         messages.extend(errors)
+        if not messages:
+            with torch.no_grad():
+                for tensor, value in pending:
+                    tensor.copy_(value)
""",
)

# Unexpected keys as "every key of the checkpoint that state_dict() does not have", in checkpoint order:
# the order differs from nn.Module's (module by module), and a key under a None submodule is reported.
STATE_DICT_UNEXPECTED_BY_SET_DIFFERENCE = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-            for key in checkpoint:
-                if not key.startswith(prefix):
-                    continue
-                rest = key[len(prefix):]
-                if "." in rest:
-                    if rest.split(".", 1)[0] not in module._modules:
-                        unexpected.append(key)
-                elif rest not in own:
-                    unexpected.append(key)
+            if module is self:
+                known = set(self.state_dict())
+                unexpected.extend(key for key in checkpoint if key not in known)
""",
)

SOLUTION.student(
    "unexpected_by_set_difference",
    {"state_dict": STATE_DICT_UNEXPECTED_BY_SET_DIFFERENCE},
    (0, 0, 0, 0, 2, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 6},
)

# state_dict() borrows named_modules' memo: a submodule registered under two names is saved under the first only.
STATE_DICT_SKIPS_SHARED = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    '''
-    def state_dict(self, prefix=""):
+    def state_dict(self, prefix="", seen=None):
@@
         """A new OrderedDict {qualified key: detached tensor} of every parameter and persistent buffer."""
+        seen = set() if seen is None else seen
+        seen.add(id(self))
@@
-            if child is not None:
-                result.update(child.state_dict(prefix + key + "."))
+            if child is not None and id(child) not in seen:
+                result.update(child.state_dict(prefix + key + ".", seen))
''',
)

SOLUTION.student(
    "state_dict_skips_shared",
    {"state_dict": STATE_DICT_SKIPS_SHARED},
    (0, 0, 0, 0, 0, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 2},
)

# The values are the registered tensors themselves, not detached: a saved Parameter still requires grad.
STATE_DICT_NOT_DETACHED = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        result = OrderedDict((prefix + key, value.detach()) for key, value in self._own_tensors().items())
+        result = OrderedDict((prefix + key, value) for key, value in self._own_tensors().items())
""",
)

SOLUTION.student(
    "state_dict_not_detached",
    {"traversal": TRAVERSAL_CORRECT, "state_dict": STATE_DICT_NOT_DETACHED},
    (0, 0, 2, 4, 0, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 3},
)

# No mapping check: dict(state_dict) happily turns a list of (key, tensor) pairs into a checkpoint.
STATE_DICT_ACCEPTS_PAIRS = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        if not isinstance(state_dict, Mapping):
-            raise TypeError(f"a checkpoint must be a mapping, not {type(state_dict).__name__}")
""",
)

SOLUTION.student(
    "load_accepts_pairs",
    {"state_dict": STATE_DICT_ACCEPTS_PAIRS},
    (0, 0, 0, 0, 2, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 4},
)

# Assigns the checkpoint's tensor as the data instead of copying into it: the module keeps its tensor object,
# but takes the checkpoint's dtype (and memory).
STATE_DICT_ASSIGNS_DATA = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-                    with torch.no_grad():
-                        tensor.copy_(value)
+                    tensor.data = value
""",
)

SOLUTION.student(
    "load_assigns_data",
    {"state_dict": STATE_DICT_ASSIGNS_DATA},
    (0, 0, 0, 0, 2, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 5},
)

# Returns a plain tuple (missing, unexpected) instead of the LoadResult named tuple.
STATE_DICT_RETURNS_TUPLE = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        return LoadResult(missing, unexpected)
+        return missing, unexpected
""",
)

SOLUTION.student(
    "load_returns_tuple",
    {"state_dict": STATE_DICT_RETURNS_TUPLE},
    (0, 0, 0, 0, 2, 3.56, 0, 0),
    breaks={"test_state_dict_hidden": 8},
)

# ---------------------------------------------------------------------------------------------------------
# Part 4: HookHandle and ModesAndHooks
# ---------------------------------------------------------------------------------------------------------

# A correct part 4: itertools.count for the ids, a stack for train(), one registration helper (attached too).
MODES_CORRECT = '''import itertools


class HookHandle:
    """What the two register methods return; remove() takes the hook out of its table."""

    ids = itertools.count()

    def __init__(self, table):
        """Remember the table; take a new id from a counter shared by every handle."""
        self.table = table
        self.key = next(HookHandle.ids)

    def remove(self):
        """Delete the entry of this handle from its table, if it is still there."""
        if self.key in self.table:
            del self.table[self.key]


class ModesAndHooks:
    """Part 4: the training flag, forward hooks and calling a module. Attached to MiniModule below."""

    def train(self, mode=True):
        """Set training to mode on self and every module below it; return self."""
        if type(mode) is not bool:
            raise ValueError(f"mode must be True or False, got {mode!r}")
        stack = [self]
        while stack:
            module = stack.pop()
            module.training = mode
            stack.extend(child for child in module._modules.values() if child is not None)
        return self

    def eval(self):
        """The same as self.train(False)."""
        return self.train(False)

    def _add_hook(self, table, hook):
        handle = HookHandle(table)
        table[handle.key] = hook
        return handle

    def register_forward_pre_hook(self, hook):
        """Add hook(module, args), run before forward; return its HookHandle."""
        return self._add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """Add hook(module, args, output), run after forward; return its HookHandle."""
        return self._add_hook(self._forward_hooks, hook)

    def __call__(self, *args, **kwargs):
        """module(*args, **kwargs): the pre-hooks, forward, then the forward hooks."""
        for hook in tuple(self._forward_pre_hooks.values()):
            new_args = hook(self, args)
            if new_args is not None:
                args = new_args if isinstance(new_args, tuple) else (new_args,)
        result = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            replaced = hook(self, args, result)
            if replaced is not None:
                result = replaced
        return result
'''

SOLUTION.student(
    "getattr_recurses",
    {"mini_module": MINI_GETATTR_RECURSES, "modes_and_hooks": MODES_CORRECT},
    (0, 3.33, 0, 0, 0, 0, 2, 4),
    breaks={"test_mini_module_hidden": 3},
)
SOLUTION.student(
    "copies_only_when_clean",
    {"state_dict": STATE_DICT_COPIES_ONLY_WHEN_CLEAN, "modes_and_hooks": MODES_CORRECT},
    (0, 0, 0, 0, 2, 3.11, 2, 4),
)
SOLUTION.student(
    "delattr_keeps_mark",
    {"mini_module": MINI_DELATTR_KEEPS_MARK, "modes_and_hooks": MODES_CORRECT},
    (0, 3.33, 0, 0, 0, 0, 2, 4),
    breaks={"test_mini_module_hidden": 4},
)
SOLUTION.student(
    "buffers_persistent_only",
    {"traversal": TRAVERSAL_BUFFERS_PERSISTENT_ONLY, "modes_and_hooks": MODES_CORRECT},
    (0, 0, 0, 3.43, 0, 0, 2, 4),
    breaks={"test_traversal_hidden": 5},
)
# Not a wrong answer: parts 2 and 4 done, parts 1 and 3 left as released. Parts 2 and 4 must still earn
# their 12 points: the parts are graded independently.
SOLUTION.student(
    "parts_2_and_4_only", {"traversal": TRAVERSAL_CORRECT, "modes_and_hooks": MODES_CORRECT}, (0, 0, 2, 4, 0, 0, 2, 4)
)
SOLUTION.control(
    "alternative_correct",
    {
        "mini_module": MINI_CORRECT,
        "traversal": TRAVERSAL_CORRECT,
        "state_dict": STATE_DICT_CORRECT,
        "modes_and_hooks": MODES_CORRECT,
    },
)

# train() sets the flag of the module it is called on and stops there, like `module.training = mode`.
MODES_TRAIN_ROOT_ONLY = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-            stack.extend(child for child in module._modules.values() if child is not None)
""",
)

SOLUTION.student(
    "train_sets_root_only",
    {"mini_module": MINI_CORRECT, "modes_and_hooks": MODES_TRAIN_ROOT_ONLY},
    (2, 4, 0, 0, 0, 0, 0, 3),
)

# remove() deletes without looking: the second call raises KeyError.
MODES_REMOVE_RAISES_SECOND_TIME = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-        if self.key in self.table:
-            del self.table[self.key]
+        del self.table[self.key]
""",
)

SOLUTION.student(
    "remove_raises_second_time", {"modes_and_hooks": MODES_REMOVE_RAISES_SECOND_TIME}, (0, 0, 0, 0, 0, 0, 0, 3.5)
)

# Ignores a pre-hook that returns an empty tuple, where nn.Module calls forward with no argument (a review).
MODES_TRUTHY_PRE_RESULT = SOLUTION.edited(
    "modes_and_hooks",
    """
             result = hook(self, args)
-            if result is not None:
+            if result is not None and (not isinstance(result, tuple) or result):
""",
)

SOLUTION.student(
    "modes_truthy_pre_result",
    {"modes_and_hooks": MODES_TRUTHY_PRE_RESULT},
    (0, 0, 0, 0, 0, 0, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 5},
)

# The key of a new hook is the size of its table: after a removal, a new hook can take the key of one that
# is still there and overwrite it, and an old handle then removes a newer hook.
MODES_KEYS_BY_TABLE_LENGTH = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-        self.key = next(HookHandle.ids)
+        self.key = len(table)
""",
)

SOLUTION.student(
    "hook_keys_by_table_length",
    {"state_dict": STATE_DICT_CORRECT, "modes_and_hooks": MODES_KEYS_BY_TABLE_LENGTH},
    (0, 0, 0, 0, 2, 4, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 3},
)

# `mode not in (True, False)` lets 1 and 0 through, since 1 == True and 0 == False.
MODES_TRAIN_ACCEPTS_INTS = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-        if type(mode) is not bool:
+        if mode not in (True, False):
""",
)

SOLUTION.student(
    "train_accepts_ints",
    {"modes_and_hooks": MODES_TRAIN_ACCEPTS_INTS},
    (0, 0, 0, 0, 0, 0, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 1},
)

# __call__ hands the forward hooks the arguments as they came in, not as the pre-hooks left them.
MODES_FORWARD_HOOKS_SEE_ORIGINAL_ARGS = SOLUTION.edited_answer(
    MODES_CORRECT,
    '''
         """module(*args, **kwargs): the pre-hooks, forward, then the forward hooks."""
+        original = args
@@
-            replaced = hook(self, args, result)
+            replaced = hook(self, original, result)
''',
)

SOLUTION.student(
    "forward_hooks_see_original_args",
    {"traversal": TRAVERSAL_CORRECT, "modes_and_hooks": MODES_FORWARD_HOOKS_SEE_ORIGINAL_ARGS},
    (0, 0, 2, 4, 0, 0, 0, 3.5),
    breaks={"test_modes_and_hooks_hidden": 7},
)

# eval() sets the flag of the module it is called on only, instead of calling train(False).
MODES_EVAL_ROOT_ONLY = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-        return self.train(False)
+        self.training = False
+        return self
""",
)

SOLUTION.student(
    "eval_root_only",
    {"modes_and_hooks": MODES_EVAL_ROOT_ONLY},
    (0, 0, 0, 0, 0, 0, 0, 3.5),
    breaks={"test_modes_and_hooks_hidden": 2},
)

# remove() looks its hook up by value: it deletes the first entry holding the same callable, which is another
# handle's entry when one callable was registered twice.
MODES_REMOVE_BY_CALLABLE = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-    def __init__(self, table):
+    def __init__(self, table, hook=None):
@@
         self.table = table
+        self.hook = hook
@@
-        if self.key in self.table:
-            del self.table[self.key]
+        for key, hook in self.table.items():
+            if hook is self.hook:
+                del self.table[key]
+                break
@@
-        handle = HookHandle(table)
+        handle = HookHandle(table, hook)
""",
)

SOLUTION.student(
    "remove_by_callable",
    {"mini_module": MINI_CORRECT, "modes_and_hooks": MODES_REMOVE_BY_CALLABLE},
    (2, 4, 0, 0, 0, 0, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 4},
)

# Every pre-hook gets the arguments the module was called with, not the ones the previous pre-hook returned.
MODES_PRE_HOOKS_SEE_ORIGINAL_ARGS = SOLUTION.edited_answer(
    MODES_CORRECT,
    '''
         """module(*args, **kwargs): the pre-hooks, forward, then the forward hooks."""
+        original = args
@@
-            new_args = hook(self, args)
+            new_args = hook(self, original)
''',
)

SOLUTION.student(
    "pre_hooks_see_original_args",
    {"modes_and_hooks": MODES_PRE_HOOKS_SEE_ORIGINAL_ARGS},
    (0, 0, 0, 0, 0, 0, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 5},
)

# The keyword arguments never reach forward.
MODES_KWARGS_DROPPED = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-        result = self.forward(*args, **kwargs)
+        result = self.forward(*args)
""",
)

SOLUTION.student(
    "kwargs_dropped",
    {"modes_and_hooks": MODES_KWARGS_DROPPED},
    (0, 0, 0, 0, 0, 0, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 6},
)

# ---------------------------------------------------------------------------------------------------------
# Shortcuts the contract forbids: borrowing nn.Module's machinery (each part's last rule)
# ---------------------------------------------------------------------------------------------------------

# register_buffer is nn.Module's own function, captured when the class body runs: it behaves exactly as the
# contract asks, and is what rule 6 forbids.
MINI_BORROWS_REGISTER_BUFFER = (
    MINI_CORRECT[: MINI_CORRECT.index("    def register_buffer")]
    + "    register_buffer = nn.Module.register_buffer  # the real one does the checks in the right order\n"
)

SOLUTION.student(
    "borrows_register_buffer",
    {"mini_module": MINI_BORROWS_REGISTER_BUFFER, "traversal": TRAVERSAL_CORRECT},
    (0, 0, 2, 4, 0, 0, 0, 0),
    breaks={"test_mini_module_hidden": 6},
)

# The whole class derived from nn.Module, the five methods written out (what the contract forbids first of all).
MINI_DERIVES_FROM_MODULE = SOLUTION.edited_answer(
    MINI_CORRECT,
    """
-class MiniModule:
+class MiniModule(nn.Module):
""",
)

SOLUTION.student("derives_from_module", {"mini_module": MINI_DERIVES_FROM_MODULE}, (0, 0, 0, 0, 0, 0, 0, 0))

# named_modules hands the walk to nn.Module.named_modules (its memo does the de-duplication).
_NAMED_MODULES = TRAVERSAL_CORRECT[
    TRAVERSAL_CORRECT.index("    def named_modules") : TRAVERSAL_CORRECT.index("    def named_param")
]
TRAVERSAL_BORROWS_NAMED_MODULES = TRAVERSAL_CORRECT.replace(
    _NAMED_MODULES,
    '''    def named_modules(self, *walk):
        """(qualified name, module) for self and every module below it, each module once."""
        return list(nn.Module.named_modules(self, *walk))  # the children call back with (memo, prefix)

''',
)

SOLUTION.student(
    "borrows_named_modules",
    {"traversal": TRAVERSAL_BORROWS_NAMED_MODULES, "state_dict": STATE_DICT_CORRECT},
    (0, 0, 0, 0, 2, 4, 0, 0),
    breaks={"test_traversal_hidden": 7},
)

# state_dict saves each module's own tensors with nn.Module._save_to_state_dict, called on a MiniModule.
STATE_DICT_BORROWS_SAVE = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        result = OrderedDict((prefix + key, value.detach()) for key, value in self._own_tensors().items())
+        result = OrderedDict()
+        nn.Module._save_to_state_dict(self, result, prefix, False)
""",
)

SOLUTION.student(
    "borrows_save_to_state_dict",
    {"state_dict": STATE_DICT_BORROWS_SAVE},
    (0, 0, 0, 0, 0, 0, 0, 0),
    breaks={"test_state_dict_hidden": 9},
)

# HookHandle is torch's RemovableHandle under another name: ids from torch's counter, remove() from torch.
_HOOK_HANDLE = MODES_CORRECT[MODES_CORRECT.index("class HookHandle:") : MODES_CORRECT.index("class ModesAndHooks:")]
MODES_HANDLE_FROM_TORCH = MODES_CORRECT.replace(
    _HOOK_HANDLE,
    '''class HookHandle(torch.utils.hooks.RemovableHandle):
    """What the two register methods return; remove() takes the hook out of its table."""

    @property
    def key(self):
        return self.id


''',
)

SOLUTION.student("handle_from_torch", {"modes_and_hooks": MODES_HANDLE_FROM_TORCH}, (0, 0, 0, 0, 0, 0, 0, 0))

# eval is nn.Module's own (it only calls self.train(False), which is this part's): right in every case, and what
# rule 8 forbids.
MODES_BORROWS_EVAL = SOLUTION.edited_answer(
    MODES_CORRECT,
    '''
-    def eval(self):
-        """The same as self.train(False)."""
-        return self.train(False)
+    eval = nn.Module.eval  # nn.Module's is just self.train(False)
''',
)

SOLUTION.student(
    "borrows_eval",
    {"modes_and_hooks": MODES_BORROWS_EVAL},
    (0, 0, 0, 0, 0, 0, 0, 0),
    breaks={"test_modes_and_hooks_hidden": 8},
)

# A reviewer's answer (issue 25): __getattr__ is nn.Module's, found while it runs through a name built from strings,
# so nothing of nn.Module is held; the run-time half of rule 6 sees its code run.
MINI_GETATTR_BY_STRING = (
    MINI_CORRECT[: MINI_CORRECT.index("    def __getattr__")]
    + '''    def __getattr__(self, name):
        """Called by Python only when normal lookup fails: look in the registries."""
        return vars(getattr(torch.nn, "Mod" + "ule"))["__get" + "attr__"](self, name)

'''
    + MINI_CORRECT[MINI_CORRECT.index("    def __delattr__") :]
)

SOLUTION.student(
    "getattr_by_string",
    {"mini_module": MINI_GETATTR_BY_STRING, "state_dict": STATE_DICT_CORRECT},
    (0, 0, 0, 0, 2, 4, 0, 0),
)

# The same borrowing, out of the watch's sight (issue 25's reviews): nn.Module's register_buffer, found by a name
# built from strings, run with the profiler switched off; named_modules compiled from torch's source when the cell
# runs; _save_to_state_dict run in a thread that _thread starts; the handle a RemovableHandle made through importlib.
# The grading sandbox's guard sees each (each part's last rule).
MINI_REGISTER_BUFFER_PROFILER_OFF = (
    MINI_CORRECT[: MINI_CORRECT.index("    def register_buffer")]
    + '''\
    def register_buffer(self, name, tensor, persistent=True):
        """nn.Module's own, run with the profiler switched off."""
        import sys

        profile = sys.getprofile()
        sys.setprofile(None)
        try:
            return vars(getattr(nn, "Mod" + "ule"))["register_" + "buffer"](self, name, tensor, persistent)
        finally:
            sys.setprofile(profile)
'''
)

TRAVERSAL_NAMED_MODULES_FROM_SOURCE = """import inspect
import textwrap

_copied = {}
exec("from __future__ import annotations\\n"
     + textwrap.dedent(inspect.getsource(vars(getattr(nn, "Mod" + "ule"))["named_" + "modules"])), _copied)


""" + TRAVERSAL_CORRECT.replace(_NAMED_MODULES, '    named_modules = _copied["named_modules"]\n\n')

STATE_DICT_SAVE_IN_RAW_THREAD = SOLUTION.edited_answer(
    STATE_DICT_CORRECT,
    """
-        result = OrderedDict((prefix + key, value.detach()) for key, value in self._own_tensors().items())
+        import _thread
+
+        result, done = OrderedDict(), _thread.allocate_lock()
+        save = vars(getattr(nn, "Mod" + "ule"))["_save_to_" + "state_dict"]
+        done.acquire()
+        _thread.start_new_thread(lambda: (save(self, result, prefix, False), done.release()), ())
+        done.acquire()
""",
)

MODES_HANDLE_WRAPS_REMOVABLE = SOLUTION.edited_answer(
    MODES_CORRECT,
    """
-        self.table = table
-        self.key = next(HookHandle.ids)
+        import importlib
+
+        self.inner = getattr(importlib.import_module("torch.utils." + "hooks"), "Removable" + "Handle")(table)
+        self.table, self.key = table, self.inner.id
""",
)

for _student, _answers, _points, _rule in (
    (
        "register_buffer_profiler_off",
        {"mini_module": MINI_REGISTER_BUFFER_PROFILER_OFF},
        (0, 0, 0, 0, 0, 0, 0, 0),
        {"test_mini_module_hidden": 6},
    ),
    (
        "named_modules_from_source",
        {"traversal": TRAVERSAL_NAMED_MODULES_FROM_SOURCE},
        (0, 0, 0, 0, 0, 0, 0, 0),
        {"test_traversal_hidden": 7},
    ),
    (
        "save_in_raw_thread",
        {"state_dict": STATE_DICT_SAVE_IN_RAW_THREAD},
        (0, 0, 0, 0, 0, 0, 0, 0),
        {"test_state_dict_hidden": 9},
    ),
    (
        "handle_wraps_removable",
        {"modes_and_hooks": MODES_HANDLE_WRAPS_REMOVABLE},
        (0, 0, 0, 0, 0, 0, 0, 0),
        {"test_modes_and_hooks_hidden": 8},
    ),
):
    SOLUTION.student(_student, _answers, _points, breaks=_rule)


# ---------------------------------------------------------------------------------------------------------
# Issue 28: answers an independent review wrote from the released notebook that once earned full marks. Each is the
# solution with one change; the other parts are the solution's.
# ---------------------------------------------------------------------------------------------------------

# Builds a child's name as (prefix + "." + key).lstrip("."), which also eats the leading dot of a root key such as
# ".a" (rule 2 uses a key as it is).
SOLUTION.student(
    "traversal_lstrip_prefix",
    {
        **SOLUTION.cells,
        "traversal": SOLUTION.edited(
            "traversal",
            """
-                    yield from walk(child, f"{prefix}.{key}" if prefix else key)
+                    yield from walk(child, f"{prefix}.{key}".lstrip("."))
""",
        ),
    },
    (2, 4, 2, 3.43, 2, 4, 2, 4),
    breaks={"test_traversal_hidden": 2},
)

# Remembers the parameters yielded by (shape, data_ptr) instead of by object: two distinct Parameters on one memory
# (a view), or two empty ones, are taken for one.
SOLUTION.student(
    "traversal_memo_by_memory",
    {
        **SOLUTION.cells,
        "traversal": SOLUTION.edited(
            "traversal",
            """
-                if parameter is not None and id(parameter) not in seen:
-                    seen.add(id(parameter))
+                if parameter is not None and (parameter.shape, parameter.data_ptr()) not in seen:
+                    seen.add((parameter.shape, parameter.data_ptr()))
""",
        ),
    },
    (2, 4, 2, 3.43, 2, 4, 2, 4),
    breaks={"test_traversal_hidden": 4},
)

# Tells a tensor by hasattr(value, "shape"): a numpy array of the right shape gets past error A, and copy_ then
# raises TypeError out of load_state_dict.
SOLUTION.student(
    "load_tensor_by_shape_attribute",
    {
        **SOLUTION.cells,
        "state_dict": SOLUTION.edited(
            "state_dict",
            """
-                if not isinstance(value, torch.Tensor):
+                if not hasattr(value, "shape"):
""",
        ),
    },
    (2, 4, 2, 4, 2, 3.56, 2, 4),
    breaks={"test_state_dict_hidden": 5},
)

# train() remembers the children it visited by their key: a second, different module under a key already seen
# (enc.inner, then head.inner) keeps its flag.
SOLUTION.student(
    "train_visited_by_key",
    {
        **SOLUTION.cells,
        "modes_and_hooks": SOLUTION.edited(
            "modes_and_hooks",
            """
-    def train(self, mode=True):
+    def train(self, mode=True, _seen=None):
@@
-        for child in self._modules.values():
-            if child is not None:
-                child.train(mode)
+        seen = set() if _seen is None else _seen
+        for key, child in self._modules.items():
+            if child is not None and key not in seen:
+                seen.add(key)
+                child.train(mode, seen)
""",
        ),
    },
    (2, 4, 2, 4, 2, 4, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 1},
)

# Tests type(result) is tuple: a named tuple from a pre-hook is wrapped into a one-item tuple.
SOLUTION.student(
    "pre_hook_exact_tuple",
    {
        **SOLUTION.cells,
        "modes_and_hooks": SOLUTION.edited(
            "modes_and_hooks",
            """
-                args = result if isinstance(result, tuple) else (result,)
+                args = result if type(result) is tuple else (result,)
""",
        ),
    },
    (2, 4, 2, 4, 2, 4, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 5},
)

# One counter for pre-hooks and another for forward hooks: a pre-hook, a forward hook, then a forward hook on another
# node get keys [0, 0, 1], where rule 3 asks for keys no handle had before, on any table (a review).
SOLUTION.student(
    "hook_keys_counter_per_table",
    {
        **SOLUTION.cells,
        "modes_and_hooks": SOLUTION.edited(
            "modes_and_hooks",
            """
-    def register_forward_pre_hook(self, hook):
+    pre_ids = 0
+    forward_ids = 0
+
+    def register_forward_pre_hook(self, hook):
@@
         handle = HookHandle(self._forward_pre_hooks)
+        handle.id = ModesAndHooks.pre_ids
+        ModesAndHooks.pre_ids += 1
@@
         handle = HookHandle(self._forward_hooks)
+        handle.id = ModesAndHooks.forward_ids
+        ModesAndHooks.forward_ids += 1
""",
        ),
    },
    (2, 4, 2, 4, 2, 4, 2, 3.5),
    breaks={"test_modes_and_hooks_hidden": 3},
)

# Loads with `tensor.data = value.to(tensor.dtype).clone()`: the same object, dtype and values, but new memory, so a
# state_dict() taken before the load (views of the old memory) keeps the old values, where nn.Module's copy_ in place
# reaches them (rule 5; a review).
SOLUTION.student(
    "load_assigns_converted_copy",
    {
        **SOLUTION.cells,
        "state_dict": SOLUTION.edited(
            "state_dict",
            """
-                    with torch.no_grad():  # copy_ into a Parameter that requires grad is refused otherwise
-                        tensor.copy_(value)
+                    tensor.data = value.to(tensor.dtype).clone()
""",
        ),
    },
    (2, 4, 2, 4, 2, 3.56, 2, 4),
    breaks={"test_state_dict_hidden": 5},
)

# Records error B for a value of another shape and tries to copy it all the same: a value that broadcasts changes the
# tensor (rule 5 copies only where the shape fits; a review).
SOLUTION.student(
    "load_copies_despite_mismatch",
    {
        **SOLUTION.cells,
        "state_dict": SOLUTION.edited(
            "state_dict",
            """
                     errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                   f"checkpoint, the shape in current model is {tensor.shape}.")
+                    try:
+                        with torch.no_grad():
+                            tensor.copy_(value)
+                    except RuntimeError:
+                        pass
""",
        ),
    },
    (2, 4, 2, 4, 2, 3.56, 2, 4),
    breaks={"test_state_dict_hidden": 5},
)

# Joins with a dot below the root whatever the parent's name: under a key "" of the root, a child "b" is named ".b",
# where nn.Module (and rule 2) gives just the key when the parent's name is "" (a review).
SOLUTION.student(
    "traversal_dot_by_depth",
    {
        **SOLUTION.cells,
        "traversal": SOLUTION.edited(
            "traversal",
            """
-                    yield from walk(child, f"{prefix}.{key}" if prefix else key)
+                    yield from walk(child, key if module is self else f"{prefix}.{key}")
""",
        ),
    },
    (2, 4, 2, 3.43, 2, 4, 2, 4),
    breaks={"test_traversal_hidden": 2},
)

ANSWERS, EXPECTED, BREAKS = SOLUTION.tables()
