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


def test_ch07_one_class_per_module_cached_right_inverse_and_stacking() -> None:
    class Doubled(nn.Module):
        def forward(self, x):
            return 2 * x

        def right_inverse(self, x):
            return x / 2

    layer = nn.Linear(3, 3)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    generated = type(layer)
    with parametrize.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    bias, values = layer.bias, layer.bias.detach().clone()
    parametrize.register_parametrization(layer, "bias", Doubled())
    assert type(layer) is generated and layer.parametrizations.bias.original is bias
    assert torch.allclose(bias, values / 2), "right_inverse rewrites original at registration"
    read = layer.weight.detach().clone()
    parametrize.register_parametrization(layer, "weight", Doubled())
    assert torch.allclose(layer.weight, 2 * read), "stacking runs no right_inverse on original"
    parametrize.remove_parametrizations(layer, "bias")
    assert type(layer) is generated
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear


def test_ch07_lazy_hooks_saving_buffers_dtype_and_draws() -> None:
    lazy = nn.LazyLinear(3)
    assert list(lazy._forward_pre_hooks_with_kwargs) == list(lazy._forward_pre_hooks)
    assert "_save_to_state_dict" in vars(LazyModuleMixin) and lazy.state_dict()["weight"] is lazy.weight
    with pytest.raises(ValueError, match="uninitialized parameter"):
        lazy.weight.detach()
    norm = nn.LazyBatchNorm1d()
    norm.load_state_dict(nn.BatchNorm1d(3).state_dict())
    assert type(norm.running_mean) is torch.Tensor and isinstance(norm, LazyModuleMixin)
    converted = nn.LazyLinear(3).double()
    converted(torch.ones(2, 4, dtype=torch.float64))
    assert converted.weight.dtype == torch.float64
    on_meta = nn.LazyLinear(3).to("meta")
    assert type(on_meta.weight) is nn.Parameter and tuple(on_meta.weight.shape) == (0,)
    torch.manual_seed(0)
    with_lazy = nn.Sequential(nn.LazyLinear(2), nn.Linear(2, 2))
    with_lazy(torch.ones(1, 3))
    torch.manual_seed(0)
    assert torch.equal(with_lazy[1].weight, nn.Linear(2, 2).weight), "the eager layer draws first"


def test_ch01_deepcopy_shares_function_hooks_and_copies_callable_objects() -> None:
    class CallableHook:
        def __call__(self, module, args):
            return None

    layer = nn.Linear(2, 2)
    for hook in (lambda module, args: None, CallableHook()):
        layer.register_forward_pre_hook(hook)
    copied = copy.deepcopy(layer)
    shared = [
        a is b for a, b in zip(layer._forward_pre_hooks.values(), copied._forward_pre_hooks.values(), strict=True)
    ]
    assert shared == [True, False]


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
    during = []
    layer.register_forward_pre_hook(lambda module, args: during.append(("wieght" in vars(module), module.weight)))
    functional_call(layer, {"wieght": torch.zeros(2, 2)}, (torch.ones(1, 2),))  # a plain attribute for the call
    assert during == [(True, own)] and "wieght" not in vars(layer) and layer.weight is own
    shared = nn.Linear(2, 2)
    own = shared.weight
    given = torch.zeros(2, 2)
    functional_call(nn.Sequential(shared, nn.ReLU(), shared), {"0.weight": given}, (torch.ones(1, 2),))
    assert shared.weight is given, "fixed upstream? chapter 8, section 3 says a module registered twice keeps it"
    shared.weight = own
    functional_call(
        nn.Sequential(shared, nn.ReLU(), shared), {"0.weight": given}, (torch.ones(1, 2),), tie_weights=False
    )
    assert shared.weight is own
    with pytest.raises(ValueError, match=r"multiple values for keys \['0.weight', '2.weight'\], which are tied"):
        functional_call(
            nn.Sequential(shared, nn.ReLU(), shared),
            {"0.weight": given, "2.weight": torch.ones(2, 2)},
            (torch.ones(1, 2),),
        )


def test_ch08_functional_call_buffers_and_parametrized_names() -> None:
    norm = nn.BatchNorm1d(2)
    stats = {"running_mean": torch.zeros(2), "running_var": torch.ones(2), "num_batches_tracked": torch.tensor(0)}
    functional_call(norm, stats, (torch.tensor([[1.0, 2.0], [3.0, 4.0]]),))
    assert int(stats["num_batches_tracked"]) == 1 and int(norm.num_batches_tracked) == 0
    layer = nn.Linear(2, 2)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        functional_call(layer, {"weight": torch.zeros(2, 2)}, (torch.ones(1, 2),))
    out = functional_call(layer, {"parametrizations.weight.original": torch.zeros(2, 2)}, (torch.ones(1, 2),))
    assert torch.equal(out, layer.bias.expand(1, 2))

    class Doubled(nn.Module):
        def forward(self, x):
            return 2 * x

        def right_inverse(self, x):
            return x / 2

    doubled = nn.Linear(2, 2)
    parametrize.register_parametrization(doubled, "weight", Doubled())
    original = doubled.parametrizations.weight.original
    fours = torch.full((2, 2), 4.0, requires_grad=True)
    functional_call(doubled, {"weight": fours}, (torch.ones(1, 2),)).sum().backward()
    assert fours.grad is None and original.grad is not None  # the setter wrote into original in place


def test_ch08_assign_dtype_and_the_future_switches() -> None:
    with torch.device("meta"):
        model = nn.Linear(3, 2)
    model.load_state_dict({key: value.double() for key, value in nn.Linear(3, 2).state_dict().items()}, assign=True)
    assert model.weight.dtype == torch.float64
    with torch.device("meta"):
        small = nn.Linear(3, 2)
    before = small.weight
    small.to_empty(device="cpu")
    assert small.weight is not before
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        with torch.device("meta"):
            swapped = nn.Linear(3, 2)
        before = swapped.weight
        swapped.to_empty(device="cpu")
        assert swapped.weight is before
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        plain = nn.Linear(2, 2)
        before = plain.weight
        plain.double()
        assert plain.weight is not before
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(False)


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
    block = nn.Sequential(shared)
    visits.clear()
    nn.Sequential(nn.Sequential(block), nn.Sequential(block)).apply(lambda m: visits.append(m is shared))
    assert sum(visits) == 2, "chapter 8, section 5: once per path from the root, one parent or not"
    visits.clear()
    nn.Sequential(block, nn.ReLU(), block).apply(lambda m: visits.append(m is shared))
    assert sum(visits) == 1, "chapter 8, section 5: children() yields a child registered twice in one parent once"
