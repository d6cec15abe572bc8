"""The version-dependent facts the chapters state, checked on the installed torch.

Each chapter shows its claims with executed cells, and strict nbval compares those outputs. The facts below are the
ones a torch upgrade is most likely to change (signatures, identities, class swaps, restore behaviour); checked
here directly, a change names the fact and the chapter to re-read, not only a differing cell output.
"""

from __future__ import annotations

import copy
import inspect

import pytest
import torch
import torch.nn.utils.parametrize as parametrize
from torch import nn
from torch.func import functional_call
from torch.nn.modules.lazy import LazyModuleMixin


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)


def test_ch01_ch02_registries_are_dicts_and_nn_buffer_exists() -> None:
    module = nn.Module()
    assert [type(vars(module)[name]) for name in ("_parameters", "_buffers", "_modules")] == [dict] * 3
    assert hasattr(nn, "Buffer") and "isinstance(value, Buffer)" in inspect.getsource(nn.Module.__setattr__)


def test_ch02_the_half_built_guards_sit_inside_the_branches() -> None:
    lines = [line.strip() for line in inspect.getsource(nn.Module.__setattr__).splitlines()]
    assert lines.index("if isinstance(value, Parameter):") + 1 == lines.index("if params is None:")
    assert lines.index("if isinstance(value, Module):") + 1 == lines.index("if modules is None:")

    class Early(nn.Module):
        def __init__(self):
            self.steps = nn.Buffer(torch.zeros(1))
            super().__init__()

    with pytest.raises(AttributeError, match="cannot assign buffer before Module.__init__"):
        Early()


def test_ch04_only_norm_classes_of_torch_nn_are_above_version_1() -> None:
    public = [obj for obj in vars(nn).values() if isinstance(obj, type) and issubclass(obj, nn.Module)]
    above = {cls.__name__ for cls in public if cls._version != 1}
    assert above and all("BatchNorm" in name or "InstanceNorm" in name for name in above)
    import torch.ao.nn.quantized as nnq

    assert (nnq.Linear._version, nnq.dynamic.Linear._version) == (3, 4)


def test_ch05_forward_options_are_keyword_only_backward_prepend_is_not() -> None:
    kinds = {
        name: inspect.signature(getattr(nn.Module, name)).parameters["prepend"].kind
        for name in (
            "register_forward_pre_hook",
            "register_forward_hook",
            "register_full_backward_pre_hook",
            "register_full_backward_hook",
        )
    }
    assert kinds["register_forward_pre_hook"] is kinds["register_forward_hook"] is inspect.Parameter.KEYWORD_ONLY
    assert kinds["register_full_backward_hook"] is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert kinds["register_full_backward_pre_hook"] is inspect.Parameter.POSITIONAL_OR_KEYWORD
    order = []
    layer = nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda m, gi, go: order.append("first"))
    layer.register_full_backward_hook(lambda m, gi, go: order.append("second"), True)
    layer(torch.ones(1, 2, requires_grad=True)).sum().backward()
    assert order == ["second", "first"]


def test_ch06_apply_keeps_parameters_only_on_the_set_data_path() -> None:
    layer = nn.Linear(2, 2)
    weight = layer.weight
    layer.double()
    assert layer.weight is weight
    layer.to("meta")
    assert layer.weight is not weight and type(layer.weight) is nn.Parameter


def test_ch07_parametrization_swaps_the_class_and_a_deep_copy_shares_it() -> None:
    layer = nn.Linear(3, 3)
    original = layer.weight
    slots = list(vars(layer))
    parametrize.register_parametrization(layer, "weight", Symmetric())
    assert type(layer).__name__ == "ParametrizedLinear" and type(layer).__bases__ == (nn.Linear,)
    assert isinstance(vars(type(layer))["weight"], property) and list(vars(layer)) == slots
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert layer.parametrizations.weight.original is original
    backup = copy.deepcopy(layer)
    assert type(backup) is type(layer)
    parametrize.remove_parametrizations(backup, "weight")
    assert "weight" not in vars(type(layer))


def test_ch07_lazy_modules_materialize_in_place_and_swap_on_the_first_call() -> None:
    lazy = nn.LazyLinear(3)
    weight = lazy.weight
    assert type(weight).__name__ == "UninitializedParameter"
    assert list(vars(lazy))[17:] == ["in_features", "out_features", "_load_hook", "_initialize_hook"]
    lazy(torch.ones(2, 4))
    assert type(lazy) is nn.Linear and lazy.weight is weight and type(weight) is nn.Parameter
    restored = nn.LazyLinear(3)
    restored.load_state_dict(nn.Linear(4, 3).state_dict())
    assert isinstance(restored, LazyModuleMixin) and restored.in_features == 0
    assert tuple(restored.weight.shape) == (3, 4)


def test_ch08_the_fast_path_and_functional_call() -> None:
    assert nn.Module.__call__ is nn.Module._wrapped_call_impl
    assert "return forward_call(*args, **kwargs)" in inspect.getsource(nn.Module._call_impl)
    layer = nn.Linear(2, 2)
    own = layer.weight
    functional_call(layer, {"wieght": torch.zeros(2, 2)}, (torch.ones(1, 2),))  # ignored without a word
    assert layer.weight is own
    shared = nn.Linear(2, 2)
    own = shared.weight
    given = torch.zeros(2, 2)
    functional_call(nn.Sequential(shared, nn.ReLU(), shared), {"0.weight": given}, (torch.ones(1, 2),))
    assert shared.weight is given, "fixed upstream? chapter 8, section 3 says a module registered twice keeps it"


def test_ch08_meta_load_without_assign_is_a_no_op_and_apply_visits_a_shared_module_twice() -> None:
    with torch.device("meta"):
        big = nn.Linear(4, 4)
    with pytest.warns(UserWarning, match="which is a no-op"):
        big.load_state_dict(nn.Linear(4, 4).state_dict())
    assert big.weight.device.type == "meta"
    big.load_state_dict(nn.Linear(4, 4).state_dict(), assign=True)
    assert big.weight.device.type == "cpu"
    shared = nn.Linear(1, 1)
    visits = []
    nn.Sequential(nn.Sequential(shared), nn.Sequential(shared)).apply(lambda m: visits.append(m is shared))
    assert sum(visits) == 2
