"""Synthetic wrong answers to exercise 2 and the points each graded cell must give them.

Each answer is the whole solution cell as a student would type it (signature and docstring included).
A solution cell a student does not list keeps the released stub (`raise NotImplementedError()`).
The points in EXPECTED were checked by executing the source notebook with these cells swapped in:
a graded cell earns its points exactly when it runs without an error.
"""

ASSIGNMENT = "ex02_routing"

# ---------------------------------------------------------------------------------------------------------
# Part 1: predict_setattr
# ---------------------------------------------------------------------------------------------------------

# Treats None as "nothing to register" and calls it a plain attribute. The visible cell assigns no None, so it
# passes; the hidden cases put None on parameter, buffer and submodule names, which keep their slots.
PREDICT_IGNORES_NONE = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    if value is None:
        return "attribute"  # None is not a tensor or a module: nothing to register
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
        return "TypeError"
    if isinstance(value, nn.Module):
        return "submodule" if modules is not None else "AttributeError"
    if modules is not None and name in modules:
        return "TypeError"
    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
        if not isinstance(value, torch.Tensor):
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

# Tests "is the value a Module?" before the guard on parameter names, so a module assigned to the name of a
# parameter becomes a "submodule" instead of the TypeError. The visible cell has no such case.
PREDICT_MODULE_BEFORE_PARAMETER = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")
    bad_name = name == "" or "." in name
    on_class = any(name in vars(klass) for klass in type(module).__mro__)
    if isinstance(value, nn.Module):
        return "submodule" if modules is not None else "AttributeError"
    if isinstance(value, nn.Parameter):
        if params is None:
            return "AttributeError"
        if bad_name or (name not in params and on_class):
            return "KeyError"
        return "ValueError" if value.grad_fn is not None else "parameter"
    if params is not None and name in params:
        return "parameter" if value is None else "TypeError"
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

# Enters the buffer branch only for an nn.Buffer value: a plain tensor (or None) assigned to the name of an
# existing buffer is predicted to be a plain attribute, but it replaces the buffer.
PREDICT_FORGETS_BUFFER_NAME = '''def predict_setattr(module, name, value):
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
    if isinstance(value, nn.Buffer):
        if buffers is None:
            return "AttributeError"
        if bad_name or (name not in buffers and hasattr(module, name)):
            return "KeyError"
        return "buffer" if value.persistent else "non-persistent buffer"
    found = getattr(type(module), name, None)
    if isinstance(found, property) and found.fset is None:
        return "AttributeError"
    return "attribute"
'''

# Knows that None keeps a parameter slot, but not that anything else on that name is refused: a tensor, an int
# or a module assigned to a parameter's name falls through to the later branches.
PREDICT_FORGETS_PARAMETER_TYPEERROR = '''def predict_setattr(module, name, value):
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
    if params is not None and name in params and value is None:
        return "parameter"
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

# Runs register_parameter's "already exists" check on the module as it is now, with hasattr. But the Parameter
# branch first clears the name from __dict__, _buffers and _modules, so a Parameter over a plain attribute, a
# buffer or a submodule is registered, not refused.
PREDICT_HASATTR_BEFORE_CLEARING = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")
    bad_name = name == "" or "." in name
    if isinstance(value, nn.Parameter):
        if params is None:
            return "AttributeError"
        if bad_name or (name not in params and hasattr(module, name)):
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

# Takes a buffer's persistence from the module's non-persistent set even when the value carries an nn.Buffer
# tag, whose own `persistent` wins.
PREDICT_PERSISTENCE_FROM_SET = '''def predict_setattr(module, name, value):
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
        if name in state["_non_persistent_buffers_set"]:
            return "non-persistent buffer"
        return "buffer"
    found = getattr(type(module), name, None)
    if isinstance(found, property) and found.fset is None:
        return "AttributeError"
    return "attribute"
'''

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
PREDICT_SETATTR_ON_BARE_TWIN = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    twin = object.__new__(type(module))
    for key, item in vars(module).items():
        vars(twin)[key] = type(item)(item) if isinstance(item, (dict, set)) else item
    try:
        nn.Module.__setattr__(twin, name, value)
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

# Reasons right, but returns the exception class itself (KeyError) where the contract asks for its name
# ("KeyError").
PREDICT_RETURNS_EXCEPTION_CLASS = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")

    def on_class(attr):
        # hasattr(module, attr) once attr is gone from __dict__ and the registries: only the class can supply it.
        return any(attr in vars(klass) for klass in type(module).__mro__)

    def bad_name(attr):
        return "." in attr or attr == ""

    # 1. A Parameter value: clear name from __dict__, buffers and modules, then register_parameter.
    if isinstance(value, nn.Parameter):
        if params is None:
            return AttributeError  # cannot assign parameters before Module.__init__() call
        if bad_name(name):
            return KeyError
        if name not in params and on_class(name):
            return KeyError  # attribute 'name' already exists
        if value.grad_fn is not None:
            return ValueError  # cannot assign a non-leaf tensor to a parameter
        return "parameter"
    # 2. The name of a parameter slot: only None may go there, and the slot stays.
    if params is not None and name in params:
        return "parameter" if value is None else TypeError
    # 3. A Module value: clear the name from __dict__, parameters and buffers, write _modules[name].
    if isinstance(value, nn.Module):
        return AttributeError if modules is None else "submodule"
    # 4. The name of a child-module slot: only None may go there.
    if modules is not None and name in modules:
        return "submodule" if value is None else TypeError
    # 5. An nn.Buffer value, or the name of an existing buffer: register_buffer.
    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
        if value is not None and not isinstance(value, torch.Tensor):
            return TypeError
        if buffers is None:
            return AttributeError  # cannot assign buffer before Module.__init__() call
        if bad_name(name):
            return KeyError
        if name not in buffers and hasattr(module, name):
            return KeyError  # attribute 'name' already exists (nothing was cleared first)
        if isinstance(value, nn.Buffer):
            persistent = value.persistent
        else:
            persistent = name not in state["_non_persistent_buffers_set"]
        return "buffer" if persistent else "non-persistent buffer"
    # 6. Everything else: object.__setattr__, which honours data descriptors found on the class.
    for klass in type(module).__mro__:
        if name in vars(klass):
            attr = vars(klass)[name]
            if isinstance(attr, property) and attr.fset is None:
                return AttributeError  # a property without a setter
            break
    return "attribute"
'''

# Checks the names already registered (parameter, submodule, buffer) before looking at a Module value: a module
# assigned to a submodule's or a buffer's name is predicted refused (TypeError), but the Module branch comes
# first and replaces it.
PREDICT_BUFFER_NAME_BEFORE_MODULE = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")

    def on_class(attr):
        # hasattr(module, attr) once attr is gone from __dict__ and the registries: only the class can supply it.
        return any(attr in vars(klass) for klass in type(module).__mro__)

    def bad_name(attr):
        return "." in attr or attr == ""

    # 1. A Parameter value: clear name from __dict__, buffers and modules, then register_parameter.
    if isinstance(value, nn.Parameter):
        if params is None:
            return "AttributeError"  # cannot assign parameters before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        if name not in params and on_class(name):
            return "KeyError"  # attribute 'name' already exists
        if value.grad_fn is not None:
            return "ValueError"  # cannot assign a non-leaf tensor to a parameter
        return "parameter"
    # 2. The name of a parameter slot: only None may go there, and the slot stays.
    if params is not None and name in params:
        return "parameter" if value is None else "TypeError"
    # 4. The name of a child-module slot: only None may go there.
    if modules is not None and name in modules:
        return "submodule" if value is None else "TypeError"
    # 5. An nn.Buffer value, or the name of an existing buffer: register_buffer.
    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
        if value is not None and not isinstance(value, torch.Tensor):
            return "TypeError"
        if buffers is None:
            return "AttributeError"  # cannot assign buffer before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        if name not in buffers and hasattr(module, name):
            return "KeyError"  # attribute 'name' already exists (nothing was cleared first)
        if isinstance(value, nn.Buffer):
            persistent = value.persistent
        else:
            persistent = name not in state["_non_persistent_buffers_set"]
        return "buffer" if persistent else "non-persistent buffer"
    # 3. A Module value: clear the name from __dict__, parameters and buffers, write _modules[name].
    if isinstance(value, nn.Module):
        return "AttributeError" if modules is None else "submodule"
    # 6. Everything else: object.__setattr__, which honours data descriptors found on the class.
    for klass in type(module).__mro__:
        if name in vars(klass):
            attr = vars(klass)[name]
            if isinstance(attr, property) and attr.fset is None:
                return "AttributeError"  # a property without a setter
            break
    return "attribute"
'''

# Looks for the nearest property in the MRO and skips whatever else the classes define: a subclass's class attribute
# that hides a base class's property without a setter is predicted to refuse the assignment (AttributeError), but
# object.__setattr__ sees the class attribute first, which is no descriptor, and stores the value.
PREDICT_FIRST_PROPERTY_IN_MRO = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")

    def on_class(attr):
        # hasattr(module, attr) once attr is gone from __dict__ and the registries: only the class can supply it.
        return any(attr in vars(klass) for klass in type(module).__mro__)

    def bad_name(attr):
        return "." in attr or attr == ""

    # 1. A Parameter value: clear name from __dict__, buffers and modules, then register_parameter.
    if isinstance(value, nn.Parameter):
        if params is None:
            return "AttributeError"  # cannot assign parameters before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        if name not in params and on_class(name):
            return "KeyError"  # attribute 'name' already exists
        if value.grad_fn is not None:
            return "ValueError"  # cannot assign a non-leaf tensor to a parameter
        return "parameter"
    # 2. The name of a parameter slot: only None may go there, and the slot stays.
    if params is not None and name in params:
        return "parameter" if value is None else "TypeError"
    # 3. A Module value: clear the name from __dict__, parameters and buffers, write _modules[name].
    if isinstance(value, nn.Module):
        return "AttributeError" if modules is None else "submodule"
    # 4. The name of a child-module slot: only None may go there.
    if modules is not None and name in modules:
        return "submodule" if value is None else "TypeError"
    # 5. An nn.Buffer value, or the name of an existing buffer: register_buffer.
    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
        if value is not None and not isinstance(value, torch.Tensor):
            return "TypeError"
        if buffers is None:
            return "AttributeError"  # cannot assign buffer before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        if name not in buffers and hasattr(module, name):
            return "KeyError"  # attribute 'name' already exists (nothing was cleared first)
        if isinstance(value, nn.Buffer):
            persistent = value.persistent
        else:
            persistent = name not in state["_non_persistent_buffers_set"]
        return "buffer" if persistent else "non-persistent buffer"
    # 6. Everything else: object.__setattr__, which honours the properties found on the class.
    for klass in type(module).__mro__:
        attr = vars(klass).get(name)
        if isinstance(attr, property):  # the nearest property decides
            return "attribute" if attr.fset is not None else "AttributeError"
    return "attribute"
'''

# Takes every property for read-only: a property with a setter is predicted to refuse the assignment
# (AttributeError), but object.__setattr__ calls its setter.
PREDICT_EVERY_PROPERTY_READ_ONLY = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")

    def on_class(attr):
        # hasattr(module, attr) once attr is gone from __dict__ and the registries: only the class can supply it.
        return any(attr in vars(klass) for klass in type(module).__mro__)

    def bad_name(attr):
        return "." in attr or attr == ""

    # 1. A Parameter value: clear name from __dict__, buffers and modules, then register_parameter.
    if isinstance(value, nn.Parameter):
        if params is None:
            return "AttributeError"  # cannot assign parameters before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        if name not in params and on_class(name):
            return "KeyError"  # attribute 'name' already exists
        if value.grad_fn is not None:
            return "ValueError"  # cannot assign a non-leaf tensor to a parameter
        return "parameter"
    # 2. The name of a parameter slot: only None may go there, and the slot stays.
    if params is not None and name in params:
        return "parameter" if value is None else "TypeError"
    # 3. A Module value: clear the name from __dict__, parameters and buffers, write _modules[name].
    if isinstance(value, nn.Module):
        return "AttributeError" if modules is None else "submodule"
    # 4. The name of a child-module slot: only None may go there.
    if modules is not None and name in modules:
        return "submodule" if value is None else "TypeError"
    # 5. An nn.Buffer value, or the name of an existing buffer: register_buffer.
    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
        if value is not None and not isinstance(value, torch.Tensor):
            return "TypeError"
        if buffers is None:
            return "AttributeError"  # cannot assign buffer before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        if name not in buffers and hasattr(module, name):
            return "KeyError"  # attribute 'name' already exists (nothing was cleared first)
        if isinstance(value, nn.Buffer):
            persistent = value.persistent
        else:
            persistent = name not in state["_non_persistent_buffers_set"]
        return "buffer" if persistent else "non-persistent buffer"
    # 6. Everything else: object.__setattr__, which honours data descriptors found on the class.
    for klass in type(module).__mro__:
        if name in vars(klass):
            attr = vars(klass)[name]
            if isinstance(attr, property):
                return "AttributeError"  # a property without a setter
            break
    return "attribute"
'''

# Right predictions, but mimics the Parameter branch's clearing on the module itself: a Parameter
# assigned over a plain attribute, a buffer or a submodule removes that entry from the real module.
PREDICT_CLEARS_FOR_REAL = '''def predict_setattr(module, name, value):
    """Say what setattr(module, name, value) would do, without doing it."""
    state = vars(module)
    params = state.get("_parameters")
    buffers = state.get("_buffers")
    modules = state.get("_modules")

    def on_class(attr):
        # hasattr(module, attr) once attr is gone from __dict__ and the registries: only the class can supply it.
        return any(attr in vars(klass) for klass in type(module).__mro__)

    def bad_name(attr):
        return "." in attr or attr == ""

    # 1. A Parameter value: clear name from __dict__, buffers and modules, then register_parameter.
    if isinstance(value, nn.Parameter):
        if params is None:
            return "AttributeError"  # cannot assign parameters before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        for registry in (state, buffers, modules):  # the Parameter branch clears the name everywhere else first
            registry.pop(name, None)
        if name not in params and on_class(name):
            return "KeyError"  # attribute 'name' already exists
        if value.grad_fn is not None:
            return "ValueError"  # cannot assign a non-leaf tensor to a parameter
        return "parameter"
    # 2. The name of a parameter slot: only None may go there, and the slot stays.
    if params is not None and name in params:
        return "parameter" if value is None else "TypeError"
    # 3. A Module value: clear the name from __dict__, parameters and buffers, write _modules[name].
    if isinstance(value, nn.Module):
        return "AttributeError" if modules is None else "submodule"
    # 4. The name of a child-module slot: only None may go there.
    if modules is not None and name in modules:
        return "submodule" if value is None else "TypeError"
    # 5. An nn.Buffer value, or the name of an existing buffer: register_buffer.
    if isinstance(value, nn.Buffer) or (buffers is not None and name in buffers):
        if value is not None and not isinstance(value, torch.Tensor):
            return "TypeError"
        if buffers is None:
            return "AttributeError"  # cannot assign buffer before Module.__init__() call
        if bad_name(name):
            return "KeyError"
        if name not in buffers and hasattr(module, name):
            return "KeyError"  # attribute 'name' already exists (nothing was cleared first)
        if isinstance(value, nn.Buffer):
            persistent = value.persistent
        else:
            persistent = name not in state["_non_persistent_buffers_set"]
        return "buffer" if persistent else "non-persistent buffer"
    # 6. Everything else: object.__setattr__, which honours data descriptors found on the class.
    for klass in type(module).__mro__:
        if name in vars(klass):
            attr = vars(klass)[name]
            if isinstance(attr, property) and attr.fset is None:
                return "AttributeError"  # a property without a setter
            break
    return "attribute"
'''

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
    from_class = hasattr(type(module), name)
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

# Walks the right entries but reads each value back through getattr(submodule, name): same values on ordinary
# modules (so the visible cell passes), but it runs the module's attribute machinery, which the hidden
# Watched modules record.
FIND_WITH_GETATTR = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):
            found.append(where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    for prefix, submodule in module.named_modules():
        for name in vars(submodule):
            if name not in slots:
                visit(getattr(submodule, name), f"{prefix}.{name}" if prefix else name)
    return sorted(found)
'''

# Decides "registered" by what state_dict() saves: every buffer is collected, and the non-persistent ones
# (never saved) come out as unregistered although they are in _buffers.
FIND_NON_PERSISTENT_AS_UNREGISTERED = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    saved = set(module.state_dict())
    slots = set(vars(nn.Module()))
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):
            found.append(where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    for prefix, submodule in module.named_modules():
        qualified = (lambda name: f"{prefix}.{name}") if prefix else (lambda name: name)
        for name, buffer in vars(submodule)["_buffers"].items():
            if buffer is not None:
                found.append(qualified(name))
        for name, item in vars(submodule).items():
            if name not in slots:
                visit(item, qualified(name))
    return sorted(name for name in found if name not in saved)
'''

# named_modules(remove_duplicate=False): a shared submodule is reported once per name it is registered under.
FIND_SHARED_UNDER_EVERY_NAME = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):
            found.append(where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    for prefix, submodule in module.named_modules(remove_duplicate=False):
        for name, item in vars(submodule).items():
            if name not in slots:
                visit(item, f"{prefix}.{name}" if prefix else name)
    return sorted(found)
'''

# Walks the tree level by level: each module is visited once, but a shared submodule gets the first name a
# breadth-first walk reaches, not the first name named_modules() (depth-first) gives it.
FIND_BREADTH_FIRST = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))
    found, seen = [], set()

    def visit(item, where):
        if isinstance(item, torch.Tensor):
            found.append(where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    queue = [("", module)]
    while queue:
        prefix, current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        for name, item in vars(current).items():
            if name not in slots:
                visit(item, f"{prefix}.{name}" if prefix else name)
        for name, child in vars(current)["_modules"].items():
            if child is not None:
                queue.append((f"{prefix}.{name}" if prefix else name, child))
    return sorted(found)
'''

# Also walks the plain attributes of modules found inside lists and dicts, which the contract excludes.
FIND_WALKS_MODULES_IN_LISTS = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):
            found.append(where)
        elif isinstance(item, nn.Module):
            for name, inner in vars(item).items():
                if name not in slots:
                    visit(inner, f"{where}.{name}")
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    for prefix, submodule in module.named_modules():
        for name, item in vars(submodule).items():
            if name not in slots:
                visit(item, f"{prefix}.{name}" if prefix else name)
    return sorted(found)
'''

# Writes every dict key between quotes by hand instead of using repr: 7 becomes '7'.
FIND_QUOTES_KEYS_BY_HAND = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):
            found.append(where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}['{key}']")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    for prefix, submodule in module.named_modules():
        for name, item in vars(submodule).items():
            if name not in slots:
                visit(item, f"{prefix}.{name}" if prefix else name)
    return sorted(found)
'''

# Compares exact types: misses OrderedDicts and named tuples, which the contract includes. The visible cell
# holds only plain dicts, lists and tuples.
FIND_EXACT_TYPES = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))
    found = []

    def visit(item, where):
        if type(item) in (torch.Tensor, nn.Parameter):
            found.append(where)
        elif type(item) is dict:
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif type(item) in (list, tuple):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    for prefix, submodule in module.named_modules():
        for name, item in vars(submodule).items():
            if name not in slots:
                visit(item, f"{prefix}.{name}" if prefix else name)
    return sorted(found)
'''

# Leaves out every tensor object that is also registered somewhere (a list holding the module's own weight):
# the contract counts places, not objects.
FIND_SKIPS_REGISTERED_OBJECTS = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))
    registered = {id(tensor) for tensor in module.parameters()} | {id(tensor) for tensor in module.buffers()}
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):
            if id(item) not in registered:
                found.append(where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    for prefix, submodule in module.named_modules():
        for name, item in vars(submodule).items():
            if name not in slots:
                visit(item, f"{prefix}.{name}" if prefix else name)
    return sorted(found)
'''

# Finds the right places but returns them in the order it met them, not sorted with sorted().
FIND_UNSORTED = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))  # the 17 names nn.Module.__init__ writes: registries, hook tables, flags
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):  # Parameters and nn.Buffer-tagged tensors included
            found.append(where)
        elif isinstance(item, nn.Module):
            return  # a module held outside _modules is not walked
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    # named_modules() follows _modules only, yields a shared submodule once, and skips None entries.
    for prefix, submodule in module.named_modules():
        for name, item in vars(submodule).items():  # vars(): no getattr, no property, no __getattr__
            if name not in slots:
                visit(item, f"{prefix}.{name}" if prefix else name)
    return found
'''

# Takes every name that starts with an underscore for a slot: a plain attribute such as `_buffers_old`
# or `_cache` is never looked into.
FIND_SKIPS_PRIVATE_NAMES = '''def find_unregistered_tensors(module):
    """Sorted qualified names of the tensors that the module tree holds outside its registries."""
    slots = set(vars(nn.Module()))  # the 17 names nn.Module.__init__ writes: registries, hook tables, flags
    found = []

    def visit(item, where):
        if isinstance(item, torch.Tensor):  # Parameters and nn.Buffer-tagged tensors included
            found.append(where)
        elif isinstance(item, nn.Module):
            return  # a module held outside _modules is not walked
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(inner, f"{where}[{key!r}]")
        elif isinstance(item, (list, tuple)):
            for index, inner in enumerate(item):
                visit(inner, f"{where}[{index}]")

    # named_modules() follows _modules only, yields a shared submodule once, and skips None entries.
    for prefix, submodule in module.named_modules():
        for name, item in vars(submodule).items():  # vars(): no getattr, no property, no __getattr__
            if not name.startswith("_"):  # the slots are the private names
                visit(item, f"{prefix}.{name}" if prefix else name)
    return sorted(found)
'''

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

# The shortcut of the review (issue 25): nn.Module's own __setattr__ tried on a stand-in object, the function
# captured when the cell runs (a default value), so that a watch of nn.Module's methods during the call never
# sees it. Rule 8 sees the code that runs, rule 9 the reference it holds.
PREDICT_CAPTURED_SETATTR_ON_TWIN = PREDICT_SETATTR_ON_BARE_TWIN.replace(
    "def predict_setattr(module, name, value):",
    "def predict_setattr(module, name, value, _assign=nn.Module.__setattr__):",
).replace("        nn.Module.__setattr__(twin, name, value)", "        _assign(twin, name, value)")

# Right in every case, but it reads the module's state through nn.Module.__getstate__, captured as a global: a
# function of nn.Module held by reference, which rule 9 forbids (nothing is assigned, so rule 8 holds).
PREDICT_STATE_BY_GETSTATE = (
    "_module_state = nn.Module.__getstate__  # a copy of vars(module), Demo's own __getstate__ bypassed\n\n\n"
    + PREDICT_CORRECT_BY_CURRENT_KIND.replace("    state = vars(module)\n", "    state = _module_state(module)\n", 1)
)

# student name -> {solution grade_id: full source of that solution cell}; unlisted cells keep the released stub.
ANSWERS = {
    "predict_ignores_none": {
        "predict_setattr": PREDICT_IGNORES_NONE,
        "find_unregistered_tensors": FIND_CORRECT_OWN_WALK,
    },
    "predict_module_before_parameter": {"predict_setattr": PREDICT_MODULE_BEFORE_PARAMETER},
    "predict_forgets_buffer_name": {
        "predict_setattr": PREDICT_FORGETS_BUFFER_NAME,
        "find_unregistered_tensors": FIND_WITH_GETATTR,
    },
    "predict_forgets_parameter_typeerror": {"predict_setattr": PREDICT_FORGETS_PARAMETER_TYPEERROR},
    "predict_hasattr_before_clearing": {"predict_setattr": PREDICT_HASATTR_BEFORE_CLEARING},
    "predict_persistence_from_set": {"predict_setattr": PREDICT_PERSISTENCE_FROM_SET},
    "predict_setattr_on_deepcopy": {
        "predict_setattr": PREDICT_SETATTR_ON_DEEPCOPY,
        "find_unregistered_tensors": FIND_CORRECT_OWN_WALK,
    },
    "predict_setattr_on_bare_twin": {"predict_setattr": PREDICT_SETATTR_ON_BARE_TWIN},
    "predict_returns_exception_class": {"predict_setattr": PREDICT_RETURNS_EXCEPTION_CLASS},
    "predict_buffer_name_before_module": {"predict_setattr": PREDICT_BUFFER_NAME_BEFORE_MODULE},
    "predict_every_property_read_only": {"predict_setattr": PREDICT_EVERY_PROPERTY_READ_ONLY},
    "predict_clears_for_real": {"predict_setattr": PREDICT_CLEARS_FOR_REAL},
    "predict_first_property_in_mro": {"predict_setattr": PREDICT_FIRST_PROPERTY_IN_MRO},
    "find_unsorted": {"find_unregistered_tensors": FIND_UNSORTED},
    "find_skips_private_names": {"find_unregistered_tensors": FIND_SKIPS_PRIVATE_NAMES},
    "find_with_getattr": {
        "predict_setattr": PREDICT_CORRECT_BY_CURRENT_KIND,
        "find_unregistered_tensors": FIND_WITH_GETATTR,
    },
    "find_non_persistent_as_unregistered": {"find_unregistered_tensors": FIND_NON_PERSISTENT_AS_UNREGISTERED},
    "find_shared_under_every_name": {"find_unregistered_tensors": FIND_SHARED_UNDER_EVERY_NAME},
    "find_breadth_first": {"find_unregistered_tensors": FIND_BREADTH_FIRST},
    "find_walks_modules_in_lists": {"find_unregistered_tensors": FIND_WALKS_MODULES_IN_LISTS},
    "find_quotes_keys_by_hand": {"find_unregistered_tensors": FIND_QUOTES_KEYS_BY_HAND},
    "find_exact_types": {"find_unregistered_tensors": FIND_EXACT_TYPES},
    "find_skips_registered_objects": {"find_unregistered_tensors": FIND_SKIPS_REGISTERED_OBJECTS},
    "predict_captured_setattr_on_twin": {"predict_setattr": PREDICT_CAPTURED_SETATTR_ON_TWIN},
    "predict_state_by_getstate": {
        "predict_setattr": PREDICT_STATE_BY_GETSTATE,
        "find_unregistered_tensors": FIND_CORRECT_OWN_WALK,
    },
    # Not a wrong answer: a control, written differently from the instructor's solution, that must get 12/12.
    "alternative_correct": {
        "predict_setattr": PREDICT_CORRECT_BY_CURRENT_KIND,
        "find_unregistered_tensors": FIND_CORRECT_OWN_WALK,
    },
}


def _points(predict_visible, predict_hidden, find_visible, find_hidden):
    return {
        "test_predict_setattr_visible": predict_visible,
        "test_predict_setattr_hidden": predict_hidden,
        "test_find_unregistered_tensors_visible": find_visible,
        "test_find_unregistered_tensors_hidden": find_hidden,
    }


# student name -> {test grade_id: points that cell must earn}; all four test cells listed for every student.
EXPECTED = {
    "predict_ignores_none": _points(2, 0, 2, 4),
    "predict_module_before_parameter": _points(2, 0, 0, 0),
    "predict_forgets_buffer_name": _points(0, 0, 2, 0),
    "predict_forgets_parameter_typeerror": _points(0, 0, 0, 0),
    "predict_hasattr_before_clearing": _points(0, 0, 0, 0),
    "predict_persistence_from_set": _points(0, 0, 0, 0),
    "predict_setattr_on_deepcopy": _points(0, 0, 2, 4),
    "predict_setattr_on_bare_twin": _points(0, 0, 0, 0),  # rule 8 broken: the part earns nothing
    "find_with_getattr": _points(2, 4, 2, 0),
    "find_non_persistent_as_unregistered": _points(0, 0, 0, 0),
    "find_shared_under_every_name": _points(0, 0, 2, 0),
    "find_breadth_first": _points(0, 0, 2, 0),
    "find_walks_modules_in_lists": _points(0, 0, 0, 0),
    "find_quotes_keys_by_hand": _points(0, 0, 0, 0),
    "find_exact_types": _points(0, 0, 2, 0),
    "find_skips_registered_objects": _points(0, 0, 2, 0),
    "predict_returns_exception_class": _points(0, 0, 0, 0),
    "predict_buffer_name_before_module": _points(0, 0, 0, 0),
    "predict_every_property_read_only": _points(2, 0, 0, 0),
    "predict_clears_for_real": _points(0, 0, 0, 0),
    "predict_first_property_in_mro": _points(2, 0, 0, 0),
    "find_unsorted": _points(0, 0, 0, 0),
    "find_skips_private_names": _points(0, 0, 2, 0),
    "predict_captured_setattr_on_twin": _points(0, 0, 0, 0),
    "predict_state_by_getstate": _points(0, 0, 2, 4),
    "alternative_correct": _points(2, 4, 2, 4),
}

# test grade_id -> {clause of the part's contract: the scripted student whose answer breaks that clause alone}.
BREAKS = {
    "test_predict_setattr_hidden": {
        1: "predict_returns_exception_class",
        2: "predict_hasattr_before_clearing",
        3: "predict_module_before_parameter",
        4: "predict_buffer_name_before_module",
        5: "predict_persistence_from_set",
        6: "predict_every_property_read_only",
        7: "predict_clears_for_real",
        8: "predict_setattr_on_bare_twin",
        9: "predict_state_by_getstate",
    },
    "test_find_unregistered_tensors_hidden": {
        1: "find_unsorted",
        2: "find_breadth_first",
        3: "find_skips_private_names",
        4: "find_exact_types",
        5: "find_quotes_keys_by_hand",
        6: "find_skips_registered_objects",
        7: "find_with_getattr",
    },
}
