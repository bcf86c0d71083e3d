"""Modes and settings given to a model before its build hold for the modules it makes."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
from torch import nn

import torchx.layers as L

X = torch.randn(6, 3, 8, 8)


def _cnn() -> L.Sequential:
    return L.Sequential(
        L.Conv2d(4, 3), L.BatchNorm2d(), L.ReLU(), L.Flatten(), L.Dropout(0.5), L.Linear(5)
    )


def _natives(model: nn.Module) -> list[nn.Module]:
    return [m for m in model.modules() if not isinstance(m, L.Layer)]


@pytest.mark.parametrize("build", ["call", "build"])
def test_eval_before_the_build_holds_for_the_built_modules(build: str) -> None:
    model = _cnn().eval()
    if build == "call":
        model(X)
    else:
        model.build((None, 3, 8, 8))
    assert _natives(model) and not any(m.training for m in model.modules())
    bn = model[1].native_module()
    assert isinstance(bn, nn.BatchNorm2d)
    assert bn.num_batches_tracked.item() == 0  # no running statistics were updated
    assert torch.equal(model(X), model(X))  # dropout is off


def test_train_after_eval_before_the_build_is_training() -> None:
    model = _cnn().eval().train()
    model(X)
    assert all(m.training for m in model.modules())


def test_one_item_set_apart_keeps_its_own_mode() -> None:
    model = _cnn().eval()
    model[4].train()  # the Dropout only
    model.build((None, 3, 8, 8))
    assert model[4].native_module().training
    assert not model[1].native_module().training


def test_eval_before_the_build_matches_a_model_built_first() -> None:
    first = _cnn()
    first(X)
    first.eval()
    later = _cnn().eval()
    later.build((None, 3, 8, 8))
    later.load_state_dict(first.state_dict())
    assert torch.equal(later(X), first(X))


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("built", [True, False], ids=["built", "unbuilt"])
def test_spec_round_trip_then_weights_then_eval_gives_the_eval_outputs(
    fmt: str, built: bool
) -> None:
    original = _cnn()
    if built:
        original(X)  # the spec then carries the input shape
        text = original.to_json() if fmt == "json" else original.to_yaml()
    else:
        text = original.to_json() if fmt == "json" else original.to_yaml()
        original(X)
    original.eval()
    expected = original(X)
    again = L.from_spec(text)
    again.eval()  # before the build when the spec has no shapes: the usual order
    if not built:
        again.build((None, 3, 8, 8))
    again.load_state_dict(original.state_dict())
    assert torch.equal(again(X), expected)


def test_requires_grad_before_the_build_holds() -> None:
    model = _cnn().requires_grad_(False)
    model(X)
    params = list(model.parameters())
    assert params and not any(p.requires_grad for p in params)
    model.requires_grad_(True)
    assert all(p.requires_grad for p in model.parameters())


def test_one_frozen_layer_before_the_build_stays_frozen() -> None:
    model = _cnn()
    model[0].requires_grad_(False)
    model.build((None, 3, 8, 8))
    assert not any(p.requires_grad for p in model[0].native_module().parameters())
    assert all(p.requires_grad for p in model[5].native_module().parameters())


def test_requires_grad_reaches_a_plain_module_in_an_unbuilt_sequential() -> None:
    plain = nn.Linear(3, 3)
    model = L.Sequential(L.Linear(3), plain).requires_grad_(False)
    assert not plain.weight.requires_grad
    model.build((None, 4))
    assert not any(p.requires_grad for p in model.parameters())


@pytest.mark.parametrize(
    ("convert", "dtype"),
    [
        (lambda m: m.double(), torch.float64),
        (lambda m: m.half(), torch.float16),
        (lambda m: m.bfloat16(), torch.bfloat16),
        (lambda m: m.to(torch.float64), torch.float64),
        (lambda m: m.to(dtype=torch.float16).float(), torch.float32),
    ],
    ids=["double", "half", "bfloat16", "to-dtype", "half-then-float"],
)
def test_dtype_conversions_before_the_build_hold(convert: object, dtype: torch.dtype) -> None:
    model = _cnn()
    convert(model)  # type: ignore[operator]
    model.build((None, 3, 8, 8))
    assert {p.dtype for p in model.parameters()} == {dtype}
    bn = model[1].native_module()
    assert bn.num_batches_tracked.dtype == torch.int64  # integer buffers are left alone


def test_device_conversion_before_the_build_holds() -> None:
    model = _cnn().to("meta")
    model.build((None, 3, 8, 8))
    assert {p.device.type for p in model.parameters()} == {"meta"}
    back = _cnn().to("meta").to_empty(device="cpu")
    back.build((None, 3, 8, 8))
    assert {p.device.type for p in back.parameters()} == {"cpu"}
    both = _cnn().to("meta", torch.float64).to_empty(device="cpu")
    both.build((None, 3, 8, 8))
    assert {(p.device.type, p.dtype) for p in both.parameters()} == {("cpu", torch.float64)}


def test_leaving_meta_before_the_build_is_refused_as_torch_refuses_it() -> None:
    # a model on meta has no values to copy: torch says so, built or not
    with pytest.raises(NotImplementedError, match="meta"):
        nn.Linear(2, 2, device="meta").cpu()
    with pytest.raises(NotImplementedError, match="meta"):
        _cnn().to("meta").cpu()


def test_an_unbuilt_model_has_no_buffers_a_built_one_lacks() -> None:
    model = _cnn().half()
    model.build((None, 3, 8, 8))
    hand = nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Dropout(0.5),
        nn.Linear(144, 5),
    )  # fmt: skip
    assert [n for n, _ in model.named_buffers()] == [n for n, _ in hand.named_buffers()]
    assert model.state_dict().keys() == hand.state_dict().keys()


def test_conversions_reach_layers_held_by_a_plain_module() -> None:
    net = nn.Sequential(L.Conv2d(4, 3), nn.Flatten(), L.Linear(2)).to(torch.float64)
    net.bfloat16()
    out = net(X.bfloat16())
    assert out.dtype == torch.bfloat16
    assert {p.dtype for p in net.parameters()} == {torch.bfloat16}
    assert [n for n, _ in net.named_buffers()] == []  # each layer dropped its probe


def test_conversion_through_a_plain_parent_reaches_unbuilt_layers() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = _cnn()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.body(x)  # type: ignore[no-any-return]

    net = Net().double().eval()
    net(X.double())
    assert {p.dtype for p in net.parameters()} == {torch.float64}
    assert not any(m.training for m in net.modules())


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without a GPU")
def test_cuda_before_the_build_without_a_gpu_fails_at_once() -> None:
    with pytest.raises((RuntimeError, AssertionError)):
        _cnn().cuda()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_before_the_build_holds() -> None:
    model = _cnn().cuda()
    model.build((None, 3, 8, 8))
    assert {p.device.type for p in model.parameters()} == {"cuda"}


@pytest.mark.parametrize(
    "what", ["parameters", "named_parameters", "buffers", "named_buffers", "state_dict"]
)
def test_parameters_of_an_unbuilt_model_name_the_build(what: str) -> None:
    # state_dict() used to give {}: a checkpoint saved without weights
    with pytest.raises(RuntimeError, match=r"not built yet.*model\.build\(input_shape\)"):
        getattr(_cnn(), what)()


@pytest.mark.parametrize(
    "layer", [L.ReLU, L.Flatten, L.Dropout, lambda: L.MaxPool2d(2), lambda: L.Lambda(torch.abs)]
)
def test_a_plain_parent_of_an_unbuilt_layer_without_tensors_gives_its_state_dict(
    layer: Callable[[], nn.Module],
) -> None:
    # the parent asks each child for its state_dict; the unbuilt L layer used to refuse
    model = nn.Sequential(nn.Linear(3, 3), layer())
    assert list(model.state_dict()) == ["0.weight", "0.bias"]
    assert layer().state_dict() == {}
    model.load_state_dict(nn.Sequential(nn.Linear(3, 3)).state_dict())


def test_an_unbuilt_container_of_layers_without_tensors_loads_an_empty_state_dict() -> None:
    L.Sequential(L.ReLU(), L.Flatten()).load_state_dict({})
    assert L.Sequential(L.ReLU()).state_dict() == {}


@pytest.mark.parametrize("call", ["state_dict", "load_state_dict"])
def test_an_unbuilt_layer_with_tensors_is_refused_inside_a_container_or_a_plain_parent(
    call: str,
) -> None:
    args = ({},) if call == "load_state_dict" else ()
    for model in (
        L.Sequential(L.ReLU(), L.Linear(3)),
        L.TimeDistributed(L.Linear(3)),
        nn.Sequential(nn.Linear(3, 3), L.Linear(3)),
    ):
        if isinstance(model, nn.Sequential) and call == "load_state_dict":
            continue  # torch loads a plain parent's children without asking them
        with pytest.raises(RuntimeError, match=r"not built yet.*model\.build\(input_shape\)"):
            getattr(model, call)(*args)


def test_a_checkpoint_loaded_before_the_build_names_the_build() -> None:
    built = _cnn()
    built.build((None, 3, 8, 8))
    weights = built.state_dict()
    again = L.from_spec(_cnn().to_spec())  # a spec without input shapes: not built
    # it used to be torch's "Unexpected key(s) in state_dict: "0.weight", ..."
    with pytest.raises(RuntimeError, match=r"no parameters to load a state_dict into.*build"):
        again.load_state_dict(weights)
    again.build((None, 3, 8, 8))
    again.load_state_dict(weights)
    loaded = again.state_dict()
    assert list(loaded) == list(weights)
    assert all(torch.equal(loaded[k], weights[k]) for k in weights)


def test_an_optimizer_made_before_the_first_call_trains_the_model() -> None:
    torch.manual_seed(0)
    model = _cnn()
    with pytest.raises(RuntimeError, match="build"):
        torch.optim.SGD(model.parameters(), lr=0.05)
    model.build((None, 3, 8, 8))  # no data needed
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)  # before the first call
    before = [p.detach().clone() for p in model.parameters()]
    target = torch.randn(6, 5)
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    # the parameters the optimizer holds are the ones the model uses, and they moved
    held = [p for group in optimizer.param_groups for p in group["params"]]
    assert [id(p) for p in held] == [id(p) for p in model.parameters()]
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_summary_method_prints_the_table_with_trainable_totals() -> None:
    model = _cnn()
    lines: list[str] = []
    model.summary((None, 3, 8, 8), print_fn=lines.append)
    text = lines[0]
    assert "Sequential.0  Conv2d" in text and "(batch, 4, 6, 6)" in text
    total = sum(p.numel() for p in model.parameters())
    assert f"total params: {total:,}" in text
    assert f"trainable params: {total:,}" in text
    model[5].native_module().requires_grad_(False)
    frozen = sum(p.numel() for p in model[5].native_module().parameters())
    lines.clear()
    model.summary(print_fn=lines.append)
    assert f"non-trainable params: {frozen:,}" in lines[0]
    assert f"trainable params: {total - frozen:,}" in lines[0]


def test_summary_method_runs_no_forward_pass(capsys: pytest.CaptureFixture[str]) -> None:
    model = _cnn()
    calls: list[object] = []
    model.build((None, 3, 8, 8))
    for m in _natives(model):
        m.register_forward_hook(lambda *a: calls.append(a))
    model.summary()
    assert "total params" in capsys.readouterr().out
    assert calls == []


def test_summary_method_of_an_unbuilt_model_needs_a_shape() -> None:
    with pytest.raises(ValueError, match="input_shape"):
        _cnn().summary()


def test_ddp_refuses_an_unbuilt_model_by_name_and_trains_a_built_one(tmp_path: object) -> None:
    import torch.distributed as dist

    store = dist.FileStore(str(tmp_path) + "/store", 1)  # type: ignore[operator]
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        with pytest.raises(RuntimeError, match="build"):
            nn.parallel.DistributedDataParallel(_cnn())
        model = _cnn().eval().train()
        model.build((None, 3, 8, 8))
        ddp = nn.parallel.DistributedDataParallel(model)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
        ddp(X).sum().backward()
        optimizer.step()
    finally:
        dist.destroy_process_group()


def test_compile_after_eval_before_the_build_gives_the_eval_outputs() -> None:
    model = _cnn().eval()
    model.build((None, 3, 8, 8))
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    with torch.no_grad():
        assert torch.allclose(compiled(X), model(X))
        assert torch.allclose(compiled(X), compiled(X))  # eval: dropout off


def test_a_copied_unbuilt_model_keeps_the_default_dtype() -> None:
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        copied = copy.deepcopy(_cnn())
        copied.build((None, 3, 8, 8))
        converted = copy.deepcopy(_cnn().half())
        converted.build((None, 3, 8, 8))
    finally:
        torch.set_default_dtype(before)
    assert {p.dtype for p in copied.parameters()} == {torch.float64}
    assert {p.dtype for p in converted.parameters()} == {torch.float16}


def _zero_linear_weights(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.zeros_(module.weight)


@pytest.mark.parametrize("holder", ["sequential", "plain parent", "standalone"])
def test_apply_before_the_build_reaches_the_modules_it_makes(holder: str) -> None:
    seen: list[str] = []

    def record(module: nn.Module) -> None:
        seen.append(type(module).__name__)
        _zero_linear_weights(module)

    layer = L.Linear(5)
    model: nn.Module
    if holder == "sequential":
        model = L.Sequential(L.Flatten(), layer)
    elif holder == "plain parent":
        model = nn.Sequential(nn.Flatten(), layer)
    else:
        model = layer
    model.apply(record)
    assert "Linear" in seen and "Linear" not in [type(m).__name__ for m in _natives(model)]
    model(X.flatten(1) if holder == "standalone" else X)
    native = layer.native_module()
    assert isinstance(native, nn.Linear)
    assert torch.count_nonzero(native.weight) == 0  # the init ran on the built module
    assert torch.count_nonzero(native.bias) > 0  # and did only what it was asked


def test_apply_after_the_build_is_torchs() -> None:
    model = _cnn()
    model(X)
    model.apply(_zero_linear_weights)
    assert torch.count_nonzero(model[5].native_module().weight) == 0


def test_hooks_on_a_layer_of_a_built_model_fire_where_its_module_runs() -> None:
    model = _cnn()
    model(X)
    calls: list[str] = []
    handles = [
        model[0].register_forward_pre_hook(lambda m, args: calls.append("pre")),
        model[0].register_forward_hook(
            lambda m, args, out: calls.append(f"fwd {tuple(out.shape)}")
        ),
        model[5].register_full_backward_hook(lambda m, gin, gout: calls.append("bwd")),
        model[5].register_full_backward_pre_hook(lambda m, gout: calls.append("bwd-pre")),
    ]
    model(X).sum().backward()
    assert calls == ["pre", "fwd (6, 4, 6, 6)", "bwd-pre", "bwd"]
    for handle in handles:
        handle.remove()
    model(X).sum().backward()
    assert len(calls) == 4


def test_hooks_on_a_layer_of_a_functional_model_fire() -> None:
    x = L.Placeholder((None, 4))
    dense = L.Linear(3, name="dense")
    model = L.Functional(x, L.ReLU()(dense(x)))
    outputs: list[torch.Tensor] = []
    dense.register_forward_hook(lambda m, args, out: outputs.append(out))
    model(torch.randn(2, 4))
    assert len(outputs) == 1 and outputs[0].shape == (2, 3)


def test_a_hook_on_an_unbuilt_layer_names_the_build() -> None:
    with pytest.raises(RuntimeError, match=r"'Linear' is not built yet.*model\.build"):
        _cnn()[5].register_forward_hook(lambda m, args, out: None)
    model = _cnn()  # a container's own hooks need no build: it is what gets called
    shapes: list[tuple[int, ...]] = []
    model.register_forward_hook(lambda m, args, out: shapes.append(tuple(out.shape)))
    model(X)
    assert shapes == [(6, 5)]


def test_a_built_layer_shows_the_tensors_of_its_module() -> None:
    model = _cnn()
    # nothing is built yet; it used to be the bare "'Conv2d' object has no attribute 'weight'"
    with pytest.raises(AttributeError, match=r"no attribute 'weight': .*model\.build\(input_shape"):
        _ = model[0].weight
    # a typo gets the same line, which says it may be one: it used to say only "not built"
    with pytest.raises(AttributeError, match=r"no attribute 'out_chanels': check the spelling"):
        _ = model[0].out_chanels
    assert not hasattr(model[0], "weight")
    model(X)
    conv, bn = model[0].native_module(), model[1].native_module()
    assert model[0].weight is conv.weight and model[0].bias is conv.bias
    assert model[1].running_mean is bn.running_mean
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = model[0].no_such_thing
