"""torchx.layers speed: steady-state calls and build time, as ratios against baselines.

1. Forward (no_grad) and forward+backward of the seed CNN and a ResNet-18, built
   with torchx.layers vs the same hand-written nn.Module (same weights). Target <= 1.02.
2. Build time (shape inference + construction) vs torch Lazy modules materialized
   by the cheapest dry run (no_grad, smallest input that sizes every parameter).
   Targets: seed CNN <= 0.7; ResNet-18 <= 0.5 against a dry run on a real-sized
   batch (2x3x224x224), the last line. Both sides end with the same torch
   modules, initialized by the same reset_parameters. For the seed CNN the Lazy
   side is nn.Lazy* modules and one no_grad forward on a 1x3x32x32 tensor. Each
   side's time includes freeing the model it made (the result is dropped at once).

Every line is a paired measurement: in each round both sides run ``inner`` times
back to back (their mean is the round's time), the side that goes first alternates
from round to round, and the ratio reported is the median of the per-round ratios.
The garbage collector stays on for both sides. The seed CNN build runs inner=10 (a
build is about a millisecond, so ten per side keep timer and scheduler noise small);
a ResNet build is long enough to be timed one at a time.

Run: uv run python benchmarks/layers_speed.py [--quick] [--device cuda:0]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

import torchx.layers as L

# --- the seed CNN --------------------------------------------------------------------


def cnn_layers() -> L.Sequential:
    model = L.Sequential(
        L.Conv2d(20, kernel_size=5, stride=2, padding=1), L.ReLU(),
        L.Conv2d(30, kernel_size=7), L.BatchNorm2d(), L.ReLU(),
        L.Conv2d(40, kernel_size=3), L.BatchNorm2d(), L.ReLU(),
        L.Flatten(), L.Linear(80), L.ReLU(), L.Linear(10),
    )  # fmt: skip
    model.build((None, 3, 32, 32))
    return model


def cnn_hand() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 20, kernel_size=5, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(20, 30, kernel_size=7), nn.BatchNorm2d(30), nn.ReLU(),
        nn.Conv2d(30, 40, kernel_size=3), nn.BatchNorm2d(40), nn.ReLU(),
        nn.Flatten(), nn.Linear(1960, 80), nn.ReLU(), nn.Linear(80, 10),
    )  # fmt: skip


def cnn_lazy(x: torch.Tensor) -> nn.Module:
    model = nn.Sequential(
        nn.LazyConv2d(20, kernel_size=5, stride=2, padding=1), nn.ReLU(),
        nn.LazyConv2d(30, kernel_size=7), nn.LazyBatchNorm2d(), nn.ReLU(),
        nn.LazyConv2d(40, kernel_size=3), nn.LazyBatchNorm2d(), nn.ReLU(),
        nn.Flatten(), nn.LazyLinear(80), nn.ReLU(), nn.LazyLinear(10),
    )  # fmt: skip
    with torch.no_grad():  # the dry run materializes the parameters; no graph needed
        model(x)
    return model


# --- ResNet-18 -----------------------------------------------------------------------

STAGES = ((64, 1), (128, 2), (256, 2), (512, 2))


def resnet_layers(size: int) -> L.Functional:
    x = L.Placeholder((None, 3, size, size))
    h = L.ReLU()(L.BatchNorm2d()(L.Conv2d(64, 7, stride=2, padding=3, bias=False)(x)))
    h = L.MaxPool2d(3, stride=2, padding=1)(h)
    for channels, stride in STAGES:
        for block in range(2):
            s = stride if block == 0 else 1
            y = L.ReLU()(L.BatchNorm2d()(L.Conv2d(channels, 3, stride=s, padding=1, bias=False)(h)))
            y = L.BatchNorm2d()(L.Conv2d(channels, 3, padding=1, bias=False)(y))
            if s != 1 or h.shape[1] != channels:
                h = L.BatchNorm2d()(L.Conv2d(channels, 1, stride=s, bias=False)(h))
            h = L.ReLU()(y + h)
    h = L.AdaptiveAvgPool2d(1)(h).flatten()
    return L.Functional(x, L.Linear(1000)(h))


class Block(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, lazy: bool = False) -> None:
        super().__init__()
        conv: Callable[..., nn.Module] = (
            (lambda _i, o, k, **kw: nn.LazyConv2d(o, k, **kw)) if lazy else nn.Conv2d
        )
        bn: Callable[[int], nn.Module] = (
            (lambda _c: nn.LazyBatchNorm2d()) if lazy else nn.BatchNorm2d
        )
        self.conv1 = conv(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = bn(cout)
        self.relu = nn.ReLU()
        self.conv2 = conv(cout, cout, 3, padding=1, bias=False)
        self.bn2 = bn(cout)
        self.down: nn.Module | None = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(conv(cin, cout, 1, stride=stride, bias=False), bn(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        shortcut = x if self.down is None else self.down(x)
        return self.relu(y + shortcut)  # type: ignore[no-any-return]


class ResNet18(nn.Module):
    def __init__(self, lazy: bool = False) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.LazyConv2d(64, 7, stride=2, padding=3, bias=False)
            if lazy
            else nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
            nn.LazyBatchNorm2d() if lazy else nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        blocks: list[nn.Module] = []
        cin = 64
        for channels, stride in STAGES:
            blocks += [Block(cin, channels, stride, lazy), Block(channels, channels, 1, lazy)]
            cin = channels
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.LazyLinear(1000) if lazy else nn.Linear(512, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))  # type: ignore[no-any-return]


def resnet_lazy(x: torch.Tensor) -> nn.Module:
    model = ResNet18(lazy=True)
    with torch.no_grad():
        model(x)
    return model


#: steady-state forward and forward+backward against the hand-written model
STEADY_TARGET = 1.02

# --- timing --------------------------------------------------------------------------


def _copy_weights(src: nn.Module, dst: nn.Module) -> None:
    a, b = list(src.state_dict().values()), dst.state_dict()
    assert len(a) == len(b), "architectures differ"
    dst.load_state_dict(dict(zip(b.keys(), a, strict=True)))


def paired_ratio(
    ours: Callable[[], object], base: Callable[[], object], rounds: int, inner: int
) -> tuple[float, float, float]:
    """Median per-call times (ours, baseline) and the median of per-round ratios.

    Rounds alternate which side runs first, so drift on a shared machine hits both.
    """
    for _ in range(3):
        ours()
        base()
    ratios, t_ours, t_base = [], [], []
    for r in range(rounds):
        pair = []
        for fn in (ours, base) if r % 2 == 0 else (base, ours):
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            pair.append((time.perf_counter() - start) / inner)
        o, b = (pair[0], pair[1]) if r % 2 == 0 else (pair[1], pair[0])
        t_ours.append(o)
        t_base.append(b)
        ratios.append(o / b)
    return statistics.median(t_ours), statistics.median(t_base), statistics.median(ratios)


def _report(
    name: str,
    what: str,
    ours: float,
    base_name: str,
    base: float,
    ratio: float,
    target: float | None,
) -> None:
    verdict = (
        "" if target is None else f" (target <= {target}: {'ok' if ratio <= target else 'OVER'})"
    )
    print(
        f"{name:14s} {what:17s} layers {ours * 1e3:9.3f} ms  "
        f"{base_name} {base * 1e3:9.3f} ms  ratio {ratio:.3f}{verdict}"
    )


def _no_sync() -> None:
    pass


def bench_steady(
    name: str,
    ours: nn.Module,
    hand: nn.Module,
    x: torch.Tensor,
    rounds: int,
    inner: int,
    sync: Callable[[], None] = _no_sync,
) -> None:
    _copy_weights(ours, hand)
    ours.to(x.device)
    hand.to(x.device)
    ours.eval()
    hand.eval()
    with torch.no_grad():
        assert torch.allclose(ours(x), hand(x), atol=1e-5)

        def fwd_ours() -> object:
            out = ours(x)
            sync()
            return out

        def fwd_hand() -> object:
            out = hand(x)
            sync()
            return out

        o, b, r = paired_ratio(fwd_ours, fwd_hand, rounds, inner)
    _report(name, "forward", o, "hand", b, r, STEADY_TARGET)
    ours.train()
    hand.train()

    def step_ours() -> object:
        ours(x).sum().backward()
        sync()
        return None

    def step_hand() -> object:
        hand(x).sum().backward()
        sync()
        return None

    o, b, r = paired_ratio(step_ours, step_hand, rounds, inner)
    _report(name, "forward+backward", o, "hand", b, r, STEADY_TARGET)


def bench_build(
    name: str,
    ours: Callable[[], object],
    lazy: Callable[[], object],
    rounds: int,
    target: float | None,
    baseline: str = "lazy+dry-run",
    inner: int = 1,
) -> None:
    o, b, r = paired_ratio(ours, lazy, rounds, inner)
    _report(name, "build", o, baseline, b, r, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument(
        "--resnet-size", type=int, default=64, help="ResNet input H=W for steady state"
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="where the steady-state lines run: cpu or cuda:<n> (builds always run on the CPU)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rounds = 5 if args.quick else 21
    device = torch.device(args.device)
    # a GPU runs kernels asynchronously: each timed call waits for its own to finish
    sync = torch.cuda.synchronize if device.type == "cuda" else _no_sync
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), rounds={rounds}, "
        f"steady state on {device}"
    )

    x_cnn = torch.randn(8, 3, 32, 32, device=device)
    bench_steady("seed CNN", cnn_layers(), cnn_hand(), x_cnn, rounds, 20, sync)
    size = args.resnet_size
    x_res = torch.randn(2, 3, size, size, device=device)
    bench_steady(f"ResNet-18@{size}", resnet_layers(size), ResNet18(), x_res, rounds, 3, sync)

    one = torch.randn(1, 3, 32, 32)
    bench_build("seed CNN", cnn_layers, lambda: cnn_lazy(one), rounds, 0.7, inner=10)
    # No ResNet parameter depends on H and W (the pooling before the classifier is
    # adaptive), so the cheapest dry run that materializes them all is the fair
    # baseline: 1x1 images, two of them (batch norm in training mode needs more than
    # one value per channel). A 224x224 dry run would charge Lazy for a real forward.
    tiny = torch.randn(2, 3, 1, 1)
    few = max(5, rounds // 3)
    bench_build("ResNet-18@224", lambda: resnet_layers(224), lambda: resnet_lazy(tiny), few, None)
    # What a Lazy user usually writes: a dry run on a real-sized example batch. Reported
    # too, since it is the cost people pay in practice; the line above is the lower bound.
    real = torch.randn(2, 3, 224, 224)
    bench_build(
        "ResNet-18@224",
        lambda: resnet_layers(224),
        lambda: resnet_lazy(real),
        few,
        0.5,
        baseline="lazy+dry-run@224",
    )


if __name__ == "__main__":
    main()
