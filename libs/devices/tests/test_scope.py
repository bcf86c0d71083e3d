"""device_scope on this machine: CPU and the meta device (a real non-CPU device torch
always has), the GPU forms through the missing-GPU policy, threads and exceptions."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable

import pytest
import torch

import torchx.devices as tx

META = torch.device("meta")
CPU = torch.device("cpu")
HAS_GPU = torch.cuda.is_available()

FACTORIES: dict[str, Callable[[], torch.Tensor]] = {
    "zeros": lambda: torch.zeros(2, 3),
    "ones": lambda: torch.ones(2),
    "empty": lambda: torch.empty(4),
    "full": lambda: torch.full((2,), 1.5),
    "arange": lambda: torch.arange(5),
    "rand": lambda: torch.rand(3),
    "randn": lambda: torch.randn(3),
    "randint": lambda: torch.randint(0, 4, (3,)),
    "randperm": lambda: torch.randperm(4),
    "eye": lambda: torch.eye(3),
    "linspace": lambda: torch.linspace(0, 1, 5),
    "logspace": lambda: torch.logspace(0, 1, 5),
    "tensor": lambda: torch.tensor([1.0, 2.0]),
    "as_tensor": lambda: torch.as_tensor([1, 2]),
    "empty_strided": lambda: torch.empty_strided((2, 2), (2, 1)),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_land_on_the_scope_device(name: str) -> None:
    with tx.device_scope(META):
        inside = FACTORIES[name]()
    outside = FACTORIES[name]()
    assert inside.device == META
    assert outside.device == CPU


@pytest.mark.parametrize("form", [-1, "cpu", " CPU ", CPU, torch.device("cpu")])
def test_cpu_forms(form: object) -> None:
    with tx.device_scope(form) as scope:  # type: ignore[arg-type]
        assert torch.ones((3, 6)).device == CPU
        assert scope.device == CPU
        assert not scope.parallel
        assert tx.current_scope() is scope
        assert tx.current_device() == CPU


def test_new_and_like_follow_their_source_not_the_scope() -> None:
    source = torch.empty(0)
    with tx.device_scope(META):
        assert source.new_ones((3, 6)).device == CPU
        assert source.new_zeros(2).device == CPU
        assert torch.ones_like(source).device == CPU
        meta_source = torch.empty(0)
        assert meta_source.new_ones((3, 6)).device == META
        assert meta_source.new_full((2,), 3.0).device == META


def test_explicit_device_argument_wins() -> None:
    with tx.device_scope(META):
        assert torch.zeros(2, device="cpu").device == CPU


def test_the_scope_device_is_the_current_device() -> None:
    with tx.device_scope(META):
        assert tx.current_device() == META
    assert tx.current_device() == CPU


@pytest.mark.skipif(
    torch.__version__ < "2.8",  # a TorchVersion: compared as a version, not as text
    reason="torch.get_default_device() reads the torch.device context manager from torch 2.8 on",
)
def test_torch_sees_the_scope_device() -> None:
    with tx.device_scope(META):
        assert torch.get_default_device() == META
    assert torch.get_default_device() == CPU


def test_nesting_restores_each_level() -> None:
    with tx.device_scope(META) as outer:
        with tx.device_scope("cpu") as inner:
            assert torch.zeros(1).device == CPU
            assert tx.current_scope() is inner
            with tx.device_scope(META):
                assert torch.zeros(1).device == META
            assert torch.zeros(1).device == CPU
        assert tx.current_scope() is outer
        assert torch.zeros(1).device == META
    assert tx.current_scope() is None
    assert torch.zeros(1).device == CPU


def test_the_same_scope_object_can_be_entered_nested() -> None:
    scope = tx.device_scope(META)
    with scope, scope:
        assert torch.zeros(1).device == META
    with scope:
        assert torch.zeros(1).device == META
    assert torch.zeros(1).device == CPU


def test_exception_inside_restores_device_and_dtype() -> None:
    with pytest.raises(KeyError, match="boom"):  # noqa: SIM117
        with tx.device_scope(META, dtype=torch.float64):
            with tx.device_scope("cpu", dtype=torch.float16):
                raise KeyError("boom")
    assert tx.current_scope() is None
    made = torch.zeros(1)
    assert made.device == CPU
    assert made.dtype == torch.float32


def test_exception_in_inner_scope_keeps_outer_scope() -> None:
    with tx.device_scope(META, dtype=torch.float64):
        with pytest.raises(ValueError, match="inner"), tx.device_scope("cpu"):
            raise ValueError("inner")
        made = torch.zeros(1)
        assert made.device == META
        assert made.dtype == torch.float64


def test_leaving_out_of_order_is_refused() -> None:
    outer = tx.device_scope(META)
    inner = tx.device_scope("cpu")
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(RuntimeError, match="not the innermost scope"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    assert torch.zeros(1).device == CPU


def test_two_threads_with_different_scopes_do_not_interfere() -> None:
    both_inside = threading.Barrier(3)
    checked = threading.Barrier(3)
    seen: dict[str, tuple[torch.device, torch.dtype, object]] = {}
    errors: list[BaseException] = []

    def work(name: str, device: object, dtype: torch.dtype | None) -> None:
        try:
            with tx.device_scope(device, dtype=dtype) as scope:  # type: ignore[arg-type]
                both_inside.wait(timeout=30)
                made = torch.zeros(2)
                seen[name] = (made.device, made.dtype, tx.current_scope() is scope)
                checked.wait(timeout=30)
        except BaseException as exc:
            errors.append(exc)
            both_inside.abort()
            checked.abort()

    threads = [
        threading.Thread(target=work, args=("meta", META, None)),
        threading.Thread(target=work, args=("cpu64", "cpu", torch.float64)),
    ]
    for thread in threads:
        thread.start()
    both_inside.wait(timeout=30)
    # While both threads sit inside their scopes, this thread has none.
    main = torch.zeros(2)
    main_scope = tx.current_scope()
    checked.wait(timeout=30)
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert seen["meta"] == (META, torch.float32, True)
    assert seen["cpu64"] == (CPU, torch.float64, True)
    assert (main.device, main.dtype, main_scope) == (CPU, torch.float32, None)


def test_a_new_thread_does_not_inherit_the_scope() -> None:
    seen: list[torch.device] = []
    with tx.device_scope(META):
        thread = threading.Thread(target=lambda: seen.append(torch.zeros(1).device))
        thread.start()
        thread.join()
    assert seen == [CPU]


# dtype


def test_dtype_applies_inside_only() -> None:
    with tx.device_scope("cpu", dtype=torch.float64) as scope:
        assert scope.dtype == torch.float64
        assert torch.zeros(2).dtype == torch.float64
        assert torch.randn(2).dtype == torch.float64
        assert torch.nn.Linear(2, 3).weight.dtype == torch.float64
    assert torch.zeros(2).dtype == torch.float32
    assert torch.nn.Linear(2, 3).weight.dtype == torch.float32


def test_dtype_keeps_integer_and_explicit_results() -> None:
    with tx.device_scope("cpu", dtype=torch.float64):
        assert torch.arange(3).dtype == torch.int64
        assert torch.tensor([1, 2]).dtype == torch.int64
        assert torch.tensor([True]).dtype == torch.bool
        assert torch.full((2,), 7).dtype == torch.int64
        assert torch.zeros(2, dtype=torch.float16).dtype == torch.float16
        assert torch.randint(0, 3, (2,)).dtype == torch.int64


def test_dtype_reaches_value_inferred_floats_at_full_precision() -> None:
    with tx.device_scope("cpu", dtype=torch.float64):
        made = torch.tensor([0.1])
        assert made.dtype == torch.float64
        assert made.item() == 0.1  # made in float64, not widened from float32
        assert torch.arange(0, 1, 0.25).dtype == torch.float64
        assert torch.full((2,), 1.5).dtype == torch.float64
        assert torch.tensor([1j]).dtype == torch.complex128


def test_dtype_leaves_tensor_copies_alone() -> None:
    source = torch.ones(2, dtype=torch.float32)
    with tx.device_scope("cpu", dtype=torch.float64):
        assert torch.as_tensor(source).dtype == torch.float32
        assert torch.ones_like(source).dtype == torch.float32


def test_inner_dtype_wins_and_outer_dtype_comes_back() -> None:
    with tx.device_scope("cpu", dtype=torch.float64):
        with tx.device_scope("cpu", dtype=torch.float16):
            assert torch.zeros(1).dtype == torch.float16
        with tx.device_scope(META):
            made = torch.zeros(1)
            assert (made.device, made.dtype) == (META, torch.float64)
        assert torch.zeros(1).dtype == torch.float64


@pytest.mark.parametrize("bad", [torch.int32, torch.bool, "float64", 64])
def test_bad_dtype_names_the_field(bad: object) -> None:
    with pytest.raises(ValueError, match=r"dtype=.* is not a floating dtype; accepted: None"):
        tx.device_scope("cpu", dtype=bad)  # type: ignore[arg-type]


# bad device forms


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("tpu:0", ""),
        (-2, "negative indices other than -1"),
        (True, "a bool is not a device index"),
        ([], "empty"),
        ([0, 0], "repeats"),
        ([0, -1], "list item -1"),
        ("cuda:x", "GPU index 'x'"),
        ("gpu:-1", "GPU index '-1'"),
        (3.0, "type float"),
        (None, "type NoneType"),
    ],
)
def test_bad_device_names_the_value_and_what_is_accepted(bad: object, why: str) -> None:
    with pytest.raises(ValueError) as caught:
        tx.device_scope(bad)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(f"device={bad!r} is not a device")
    assert why in message
    assert "accepted: an int >= 0 (GPU index), -1 (CPU), 'cpu'" in message


# missing GPU policy


GPU_FORMS: list[object] = [0, 2, "cuda:0", "gpu:2", "cuda", "gpu", torch.device("cuda", 1)]
GPU_FORMS += [[0, 3, 5], "cuda:all", "gpu:all"]


# an mps scope on a machine without one used to enter, and fail only at the first tensor
# with torch's list of every backend
MPS_FORMS: list[object] = ["mps", torch.device("mps")]
_NO_GPU = pytest.mark.skipif(
    HAS_GPU, reason="exercises the missing-GPU path; this machine has a GPU"
)
_NO_MPS = pytest.mark.skipif(torch.backends.mps.is_available(), reason="this machine has MPS")
MISSING_FORMS = [pytest.param(f, marks=_NO_GPU, id=repr(f)) for f in GPU_FORMS]
MISSING_FORMS += [pytest.param(f, marks=_NO_MPS, id=repr(f)) for f in MPS_FORMS]


@pytest.mark.parametrize("form", MISSING_FORMS)
def test_missing_gpu_raises_by_default(form: object) -> None:
    with pytest.raises(tx.DeviceUnavailableError) as caught:
        tx.device_scope(form)  # type: ignore[arg-type]
    message = str(caught.value)
    if form in MPS_FORMS:
        asks, have = "the 'mps' device type", "torch.mps.is_available() is False"
    else:
        asks, have = "GPU", "0 CUDA device(s)"
    assert f"device={form!r} asks for {asks}" in message
    assert have in message
    assert "on_missing_gpu='cpu'" in message


@pytest.mark.parametrize("form", MISSING_FORMS)
def test_missing_gpu_falls_back_to_cpu_with_a_warning(form: object) -> None:
    with pytest.warns(tx.GPUFallbackWarning, match="running on the CPU") as record:
        scope = tx.device_scope(form, on_missing_gpu="cpu")  # type: ignore[arg-type]
    assert record[0].filename == __file__, "the warning points at the caller's line"
    assert scope.device == CPU
    assert scope.device_ids == ()
    with scope:
        assert torch.zeros(1).device == CPU


@pytest.mark.parametrize(("kind", "count", "form"), [("xpu", 1, "xpu:3"), ("mps", 1, "mps:1")])
def test_an_index_past_the_devices_of_another_type_is_missing(
    monkeypatch: pytest.MonkeyPatch, kind: str, count: int, form: str
) -> None:
    # the backend is there (patched so on any machine), but not that index: the scope
    # used to enter and fail only at the first tensor, as 'cuda:99' no longer does
    backend = getattr(torch, kind)
    monkeypatch.setattr(backend, "is_available", lambda: True)
    monkeypatch.setattr(backend, "device_count", lambda: count)
    with pytest.raises(tx.DeviceUnavailableError) as caught:
        tx.device_scope(form)
    message = str(caught.value)
    index = int(form.partition(":")[2])
    assert f"device={form!r} asks for {kind!r} device {index}" in message
    assert f"this machine has {count} of them" in message
    with pytest.warns(tx.GPUFallbackWarning, match="running on the CPU"):
        assert tx.device_scope(torch.device(kind, index), on_missing_gpu="cpu").device == CPU
    # the indices there are, and the type alone, are taken as given
    assert tx.device_scope(f"{kind}:{count - 1}").device == torch.device(kind, count - 1)
    assert tx.device_scope(kind).device == torch.device(kind)


@pytest.mark.skipif(HAS_GPU, reason="exercises the missing-GPU path; this machine has a GPU")
def test_process_wide_policy_from_code_and_from_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert tx.get_missing_gpu_policy() == "error"
    monkeypatch.setenv("TORCHX_MISSING_GPU", "cpu")
    assert tx.get_missing_gpu_policy() == "cpu"
    with pytest.warns(tx.GPUFallbackWarning):
        assert tx.device_scope(0).device == CPU
    tx.set_missing_gpu_policy("error")
    with pytest.raises(tx.DeviceUnavailableError):
        tx.device_scope(0)
    # An explicit argument beats the process-wide policy.
    with pytest.warns(tx.GPUFallbackWarning):
        tx.device_scope(0, on_missing_gpu="cpu")


def test_bad_policy_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"on_missing_gpu='ignore' .* accepted: 'error', 'cpu'"):
        tx.device_scope("cpu", on_missing_gpu="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"policy='warn' .* accepted: 'error', 'cpu'"):
        tx.set_missing_gpu_policy("warn")  # type: ignore[arg-type]
    monkeypatch.setenv("TORCHX_MISSING_GPU", "fallback")
    with pytest.raises(ValueError, match="TORCHX_MISSING_GPU='fallback'"):
        tx.get_missing_gpu_policy()
    if not HAS_GPU:  # the variable is read when a scope finds its GPU missing
        with pytest.raises(ValueError, match="TORCHX_MISSING_GPU='fallback'"):
            tx.device_scope(0)


def test_no_warning_when_the_device_is_there() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tx.device_scope("cpu", on_missing_gpu="cpu"):
            pass
