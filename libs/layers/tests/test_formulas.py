"""Every shape formula against the shape torch actually produces, over keyword grids."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

import torchx.layers as L
from torchx.layers import Layer, TorchLayer

Case = tuple[str, Callable[[], Layer], list[tuple[int, ...]], torch.dtype]


def _real_shapes(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return tuple(out.shape)
    return [_real_shapes(o) for o in out]


def _grid(**axes: tuple[Any, ...]) -> Iterator[dict[str, Any]]:
    """Every combination of the keyword values, one dict each, in ``itertools.product`` order."""
    for values in itertools.product(*axes.values()):
        yield dict(zip(axes, values, strict=True))


def _cases() -> list[Case]:
    cases: list[Case] = []
    f32 = torch.float32

    def add(
        label: str, make: Callable[[], Layer], *shapes: tuple[int, ...], dtype: torch.dtype = f32
    ) -> None:
        cases.append((label, make, list(shapes), dtype))

    spatial = {1: (2, 4, 11), 2: (2, 4, 11, 9), 3: (2, 4, 7, 6, 5)}
    for n, shape in spatial.items():
        conv = getattr(L, f"Conv{n}d")
        for kw in _grid(
            kernel_size=(3,),
            stride=(1, 2),
            padding=(0, 1, "same", "valid"),
            dilation=(1, 2),
            groups=(1, 2),
            bias=(True, False),
            padding_mode=("zeros", "reflect"),
        ):
            if kw["padding"] == "same" and kw["stride"] != 1:
                continue
            if kw["padding_mode"] == "reflect" and (
                kw["padding"] in (0, "valid") or (n == 3 and kw["dilation"] == 2)
            ):
                continue
            add(f"Conv{n}d{kw}", lambda c=conv, kw=kw: c(6, **kw), shape)
        add(
            f"Conv{n}d-asym",
            lambda c=conv, n=n: c(2, kernel_size=(2,) * n, stride=(3,) + (1,) * (n - 1)),
            shape,
        )
        convt = getattr(L, f"ConvTranspose{n}d")
        for kw in _grid(
            kernel_size=(3,),
            stride=(1, 2, 3),
            padding=(0, 1),
            output_padding=(0, 1),
            dilation=(1, 2),
            groups=(1, 2),
        ):
            if kw["output_padding"] >= max(kw["stride"], kw["dilation"]):
                continue
            add(f"ConvTranspose{n}d{kw}", lambda c=convt, kw=kw: c(4, **kw), shape)

        for kw in _grid(
            kernel_size=(2, 3),
            stride=(None, 1, 2),
            padding=(0, 1),
            dilation=(1, 2),
            ceil_mode=(False, True),
            return_indices=(False, True),
        ):
            add(f"MaxPool{n}d{kw}", lambda n=n, kw=kw: getattr(L, f"MaxPool{n}d")(**kw), shape)
        for kw in _grid(
            kernel_size=(2, 3),
            stride=(None, 1, 2),
            padding=(0, 1),
            ceil_mode=(False, True),
            count_include_pad=(False, True),
        ):
            if n > 1:
                kw["divisor_override"] = 2
            add(f"AvgPool{n}d{kw}", lambda n=n, kw=kw: getattr(L, f"AvgPool{n}d")(**kw), shape)
        for kw in _grid(kernel_size=(2, 3), stride=(None, 1, 2), ceil_mode=(False, True)):
            add(f"LPPool{n}d{kw}", lambda n=n, kw=kw: getattr(L, f"LPPool{n}d")(2.0, **kw), shape)
        sizes: list[Any] = [1, 3, (2,) * n] + ([(None,) + (2,) * (n - 1)] if n > 1 else [])
        for size, ret in itertools.product(sizes, (False, True)):
            add(
                f"AdaptiveMaxPool{n}d{size}",
                lambda n=n, s=size, r=ret: getattr(L, f"AdaptiveMaxPool{n}d")(s, return_indices=r),
                shape,
            )
            add(
                f"AdaptiveAvgPool{n}d{size}",
                lambda n=n, s=size: getattr(L, f"AdaptiveAvgPool{n}d")(s),
                shape,
            )
        add(f"BatchNorm{n}d", lambda n=n: getattr(L, f"BatchNorm{n}d")(), shape)
        add(f"InstanceNorm{n}d", lambda n=n: getattr(L, f"InstanceNorm{n}d")(affine=True), shape)
        for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular"):
            cls = getattr(L, f"{kind}Pad{n}d")
            for pad in (1, tuple(range(1, 2 * n + 1))):
                args = (pad, 0.5) if kind == "Constant" else (pad,)
                add(f"{kind}Pad{n}d{pad}", lambda c=cls, a=args: c(*a), shape)
        for size, scale in ((None, 2), (None, 1.5), (5, None)):
            add(
                f"Upsample{n}d{size}{scale}",
                lambda s=size, f=scale: L.Upsample(size=s, scale_factor=f),
                shape,
            )
    add(
        "Upsample-bilinear",
        lambda: L.Upsample(scale_factor=(2, 3), mode="bilinear", align_corners=True),
        (2, 3, 4, 5),
    )
    add("UpsamplingNearest2d", lambda: L.UpsamplingNearest2d(scale_factor=2), (2, 3, 4, 5))
    add("UpsamplingBilinear2d", lambda: L.UpsamplingBilinear2d(size=(7, 3)), (2, 3, 4, 5))
    add(
        "FractionalMaxPool2d-size",
        lambda: L.FractionalMaxPool2d(2, output_size=(4, 3)),
        (2, 3, 9, 8),
    )
    add(
        "FractionalMaxPool2d-ratio",
        lambda: L.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True),
        (2, 3, 9, 8),
    )
    add(
        "FractionalMaxPool3d-ratio",
        lambda: L.FractionalMaxPool3d(2, output_ratio=(0.5, 0.6, 0.7)),
        (2, 3, 9, 8, 7),
    )

    for shape in ((3, 7), (3, 5, 7), (2, 3, 4, 7)):
        add(f"Linear{shape}", lambda: L.Linear(5), shape)
        add(f"Linear-nobias{shape}", lambda: L.Linear(5, bias=False), shape)
        add(f"Identity{shape}", lambda: L.Identity(), shape)
        add(f"LayerNorm{shape}", lambda: L.LayerNorm(), shape)
        if len(shape) > 2:
            add(
                f"LayerNorm2{shape}",
                lambda: L.LayerNorm(normalized_ndim=2, elementwise_affine=False),
                shape,
            )
        add(f"RMSNorm{shape}", lambda: L.RMSNorm(eps=1e-3), shape)
        add(f"Dropout{shape}", lambda: L.Dropout(0.2), shape)
        add(f"AlphaDropout{shape}", lambda: L.AlphaDropout(0.2), shape)
        add(f"FeatureAlphaDropout{shape}", lambda: L.FeatureAlphaDropout(0.2), shape)
        add(f"Flatten{shape}", lambda: L.Flatten(), shape)
        add(f"PReLU{shape}", lambda: L.PReLU(), shape)
        add(f"PReLU-shared{shape}", lambda: L.PReLU(0.1, shared=True), shape)
        add(f"Reshape{shape}", lambda: L.Reshape((-1,)), shape)
        add(f"View{shape}", lambda: L.View((7, -1)), shape)
        add(f"Embedding{shape}", lambda: L.Embedding(10, 4), shape, dtype=torch.int64)
    add("Bilinear", lambda: L.Bilinear(6), (3, 4), (3, 5))
    add("Bilinear3d", lambda: L.Bilinear(6, bias=False), (3, 2, 4), (3, 2, 5))
    add("Flatten-range", lambda: L.Flatten(2, 3), (2, 3, 4, 5, 6))
    add("Unflatten", lambda: L.Unflatten(1, (3, 4)), (2, 12, 5))
    add("Unflatten-last", lambda: L.Unflatten(-1, (2, -1)), (2, 12, 6))
    add("Reshape-2d", lambda: L.Reshape((4, 3, 5)), (2, 60))
    add("Permute", lambda: L.Permute((0, 2, 3, 1)), (2, 3, 4, 5))
    add("Permute-neg", lambda: L.Permute((0, -1, 1)), (2, 3, 4))
    add("GroupNorm", lambda: L.GroupNorm(2), (2, 4, 5, 5))
    add("GroupNorm1d", lambda: L.GroupNorm(3, affine=False), (2, 6, 5))
    add("LocalResponseNorm", lambda: L.LocalResponseNorm(3), (2, 6, 5, 4))
    add("BatchNorm1d-2d", lambda: L.BatchNorm1d(momentum=None), (4, 6))
    for name in (
        "Threshold",
        "ReLU",
        "RReLU",
        "Hardtanh",
        "ReLU6",
        "Sigmoid",
        "Hardsigmoid",
        "Tanh",
        "SiLU",
        "Mish",
        "Hardswish",
        "ELU",
        "CELU",
        "SELU",
        "GELU",
        "Hardshrink",
        "LeakyReLU",
        "LogSigmoid",
        "Softplus",
        "Softshrink",
        "Softsign",
        "Tanhshrink",
        "Softmin",
        "Softmax",
        "LogSoftmax",
    ):
        args: tuple[Any, ...] = (0.1, 0.0) if name == "Threshold" else ()
        kwargs: dict[str, Any] = {"dim": 1} if name in ("Softmin", "Softmax", "LogSoftmax") else {}
        add(name, lambda n=name, a=args, k=kwargs: getattr(L, n)(*a, **k), (2, 3, 4))
    add("GELU-tanh", lambda: L.GELU(approximate="tanh"), (2, 3))
    add("Softmax2d", lambda: L.Softmax2d(), (2, 3, 4, 5))
    add("GLU", lambda: L.GLU(), (2, 3, 8))
    add("GLU-dim1", lambda: L.GLU(dim=1), (2, 6, 5))
    add("Dropout1d", lambda: L.Dropout1d(), (2, 3, 4))
    add("Dropout2d", lambda: L.Dropout2d(), (2, 3, 4, 5))
    add("Dropout3d", lambda: L.Dropout3d(), (2, 3, 4, 5, 6))
    add("PixelShuffle", lambda: L.PixelShuffle(2), (2, 8, 3, 5))
    add("PixelUnshuffle", lambda: L.PixelUnshuffle(2), (2, 3, 4, 6))
    add("EmbeddingBag", lambda: L.EmbeddingBag(10, 4, mode="sum"), (3, 5), dtype=torch.int64)
    add("ChannelShuffle", lambda: L.ChannelShuffle(2), (2, 6, 3, 4))
    add("ChannelShuffle1d", lambda: L.ChannelShuffle(3), (2, 6, 5))
    add("CrossMapLRN2d", lambda: L.CrossMapLRN2d(3, alpha=1e-3), (2, 6, 5, 4))
    fold_size = (7, 6)
    for kernel, dilation, padding, stride in itertools.product(
        (2, (2, 3)), (1, 2), (0, 1), (1, (2, 1))
    ):
        kw = dict(kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)
        add(f"Unfold{kw}", lambda kw=kw: L.Unfold(**kw), (2, 3, 9, 8))
        k = (kernel, kernel) if isinstance(kernel, int) else kernel
        s2 = (stride, stride) if isinstance(stride, int) else stride
        blocks = 1
        for size, kk, st in zip(fold_size, k, s2, strict=True):
            blocks *= (size + 2 * padding - dilation * (kk - 1) - 1) // st + 1
        add(f"Fold{kw}", lambda kw=kw: L.Fold(fold_size, **kw), (2, 3 * k[0] * k[1], blocks))

    for rnn, seq, state, bi, layers in itertools.product(
        ("RNN", "GRU", "LSTM"), (False, True), (False, True), (False, True), (1, 2)
    ):
        add(
            f"{rnn}-{seq}-{state}-{bi}-{layers}",
            lambda r=rnn, s=seq, st=state, b=bi, n=layers: getattr(L, r)(
                5, num_layers=n, bidirectional=b, return_sequences=s, return_state=st
            ),
            (2, 7, 3),
        )
    add(
        "LSTM-proj",
        lambda: L.LSTM(6, proj_size=2, return_sequences=True, return_state=True),
        (2, 7, 3),
    )
    add("RNN-relu", lambda: L.RNN(4, nonlinearity="relu", dropout=0.0), (2, 7, 3))

    for weights, average, bias_kv, zero in itertools.product(
        (False, True), (False, True), (False, True), (False, True)
    ):
        kw = dict(
            need_weights=weights,
            average_attn_weights=average,
            add_bias_kv=bias_kv,
            add_zero_attn=zero,
        )
        add(f"MHA-self{kw}", lambda kw=kw: L.MultiheadAttention(2, **kw), (2, 5, 8))
        add(
            f"MHA-qkv{kw}",
            lambda kw=kw: L.MultiheadAttention(2, **kw),
            (2, 5, 8),
            (2, 3, 6),
            (2, 3, 4),
        )
    add("MHA-qkv2", lambda: L.MultiheadAttention(4, need_weights=True), (2, 5, 8), (2, 3, 6))
    add("Encoder", lambda: L.TransformerEncoderLayer(2, dim_feedforward=16), (2, 5, 8))
    add(
        "Encoder-normfirst",
        lambda: L.TransformerEncoderLayer(4, 16, 0.0, "gelu", norm_first=True),
        (2, 5, 8),
    )
    add("Decoder", lambda: L.TransformerDecoderLayer(2, dim_feedforward=16), (2, 5, 8), (2, 3, 8))

    stack_kw: dict[str, Any] = dict(dim_feedforward=16, dropout=0.0)
    for norm, norm_first in itertools.product((False, True), (False, True)):
        add(
            f"TransformerEncoder-{norm}-{norm_first}",
            lambda n=norm, f=norm_first: L.TransformerEncoder(
                L.TransformerEncoderLayer(2, norm_first=f, **stack_kw),
                2,
                norm=L.LayerNorm() if n else None,
            ),
            (2, 5, 8),
        )
        add(
            f"TransformerDecoder-{norm}-{norm_first}",
            lambda n=norm, f=norm_first: L.TransformerDecoder(
                L.TransformerDecoderLayer(2, norm_first=f, **stack_kw),
                2,
                L.RMSNorm() if n else None,
            ),
            (2, 5, 8),
            (2, 3, 8),
        )
        add(
            f"Transformer-{norm_first}",
            lambda f=norm_first: L.Transformer(2, 1, 2, norm_first=f, **stack_kw),
            (2, 3, 8),
            (2, 5, 8),
        )

    for merge in ("Add", "Multiply", "Average", "Maximum", "Minimum"):
        add(merge, lambda m=merge: getattr(L, m)(), (2, 3, 4), (2, 3, 4), (2, 1, 4))
    add("Subtract", lambda: L.Subtract(), (2, 3, 4), (2, 3, 1))
    add("Concat", lambda: L.Concat(), (2, 3, 4), (2, 3, 5))
    add("Concat-dim1", lambda: L.Concat(dim=1), (2, 3, 4), (2, 2, 4), (2, 1, 4))
    return cases


CASES = _cases()


def test_the_grid_is_large() -> None:
    assert len(CASES) > 1000


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_formula_matches_torch(case: Case) -> None:
    _, make, shapes, dtype = case
    layer = make()
    assert isinstance(layer, TorchLayer)
    predicted = layer.build(*shapes)
    inputs = [torch.randint(0, 10, s) if dtype == torch.int64 else torch.randn(s) for s in shapes]
    torch.manual_seed(0)
    with torch.no_grad():
        real = layer(*inputs)
    assert predicted == _real_shapes(real)


def test_every_layer_in_the_grid_has_its_own_formula() -> None:
    # a class inheriting TorchLayer._formula would silently use the meta fallback
    classes = {type(c[1]()) for c in CASES}
    assert len(classes) > 100
    assert all(cls._formula is not TorchLayer._formula for cls in classes)


_UNPOOL_SHAPES = {1: (2, 3, 11), 2: (2, 3, 9, 8), 3: (2, 2, 7, 6, 5)}


def _unpool_cases() -> list[tuple[int, int, int | None, int, bool]]:
    cases = []
    for n, kernel, stride, padding, to_input in itertools.product(
        (1, 2, 3), (2, 3), (None, 1, 2), (0, 1), (False, True)
    ):
        st = stride or kernel
        sizes = _UNPOOL_SHAPES[n][2:]
        pooled = [(s + 2 * padding - kernel) // st + 1 for s in sizes]
        default = [(p - 1) * st - 2 * padding + kernel for p in pooled]
        too_small = any(d < s for d, s in zip(default, sizes, strict=True))
        fits = all(d - st < s < d + st for d, s in zip(default, sizes, strict=True))
        # torch needs output_size when the default cannot hold every index
        if (to_input and fits) or not (to_input or too_small):
            cases.append((n, kernel, stride, padding, to_input))
    return cases


@pytest.mark.parametrize(("n", "kernel", "stride", "padding", "to_input"), _unpool_cases())
def test_max_unpool_formula_matches_torch(
    n: int, kernel: int, stride: int | None, padding: int, to_input: bool
) -> None:
    shape = _UNPOOL_SHAPES[n]
    pool = getattr(L, f"MaxPool{n}d")(kernel, stride, padding, return_indices=True)
    pooled, indices = pool(torch.randn(shape))
    out_size = list(shape[2:]) if to_input else None
    unpool = getattr(L, f"MaxUnpool{n}d")(kernel, stride, padding, output_size=out_size)
    predicted = unpool.build(tuple(pooled.shape), tuple(indices.shape))
    real = unpool(pooled, indices)
    assert predicted == tuple(real.shape)
    # every pooled maximum lands back where it came from
    assert torch.equal(real.flatten(2).gather(2, indices.flatten(2)), pooled.flatten(2))
