"""torchx.layers speed: steady-state calls and build time, as ratios against baselines.

1. Forward (no_grad) and forward+backward of the seed CNN and a ResNet-18, built
   with torchx.layers vs the same hand-written nn.Module (same weights). Target <= 1.02.
2. Per-call overhead: no_grad forwards of models so narrow that their kernels cost
   next to nothing (the seed CNN with 2 channels, a ResNet-18 with a stem of 2 on 8x8,
   batch 1), and of a hand-written nn.Module whose four Linear layers are torchx layers
   called one by one, vs the same hand-written models. What is timed is the Python
   work of the calls, as on a GPU, where a small forward is bound by it. Target <= 1.02
   for the two models; the third line has none: a layer called on its own is a module
   call of its own (its hooks, its shape check) around its torch module's call.
   On the CPU (one thread) the clock is the thread's CPU time.
3. Build time (shape inference + construction) vs torch Lazy modules materialized
   by the cheapest dry run (no_grad, smallest input that sizes every parameter).
   Targets: seed CNN <= 0.7; ResNet-18 <= 0.5 against a dry run on a real-sized
   batch (2x3x224x224), the last line. Both sides end with the same torch
   modules, initialized by the same reset_parameters. For the seed CNN the Lazy
   side is nn.Lazy* modules and one no_grad forward on a 1x3x32x32 tensor. Each
   side's time includes freeing the model it made (the result is dropped at once).

Each forward line of (1) is followed by a control line: the hand-written model timed
the same way against a copy of itself. How far its ratio is from 1.0 shows the noise of
the run (and any bias of the method) that the line above it carries too.

Every line is a paired measurement: in each round both sides run ``inner`` times
back to back (their mean is the round's time), the side that goes first alternates
from round to round (the steady and per-call lines have an even number of rounds, so
each side goes first as often), and the ratio reported is the median of the
per-round ratios.
The garbage collector stays on for both sides. The seed CNN build runs inner=10 (a
build is about a millisecond, so ten per side keep timer and scheduler noise small);
a ResNet build is long enough to be timed one at a time.

Run: uv run python benchmarks/layers_speed.py [--quick] [--device cuda:0]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

import torchx.layers as L

# --- the seed CNN --------------------------------------------------------------------


#: the seed CNN's widths (three convolutions, then the hidden features); the call
#: overhead lines run the same model with NARROW_CNN, where the kernels cost next to nothing
SEED_CNN = (20, 30, 40, 80)
NARROW_CNN = (2, 2, 2, 8)


def cnn_layers(widths: tuple[int, int, int, int] = SEED_CNN) -> L.Sequential:
    c1, c2, c3, hidden = widths
    model = L.Sequential(
        L.Conv2d(c1, kernel_size=5, stride=2, padding=1), L.ReLU(),
        L.Conv2d(c2, kernel_size=7), L.BatchNorm2d(), L.ReLU(),
        L.Conv2d(c3, kernel_size=3), L.BatchNorm2d(), L.ReLU(),
        L.Flatten(), L.Linear(hidden), L.ReLU(), L.Linear(10),
    )  # fmt: skip
    model.build((None, 3, 32, 32))
    return model


def cnn_hand(widths: tuple[int, int, int, int] = SEED_CNN) -> nn.Module:
    c1, c2, c3, hidden = widths
    return nn.Sequential(
        nn.Conv2d(3, c1, kernel_size=5, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(c1, c2, kernel_size=7), nn.BatchNorm2d(c2), nn.ReLU(),
        nn.Conv2d(c2, c3, kernel_size=3), nn.BatchNorm2d(c3), nn.ReLU(),
        nn.Flatten(), nn.Linear(c3 * 7 * 7, hidden), nn.ReLU(), nn.Linear(hidden, 10),
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

#: (channels as a multiple of the stem's width, stride) of each stage
STAGES = ((1, 1), (2, 2), (4, 2), (8, 2))


def resnet_layers(size: int, width: int = 64) -> L.Functional:
    x = L.Placeholder((None, 3, size, size))
    h = L.ReLU()(L.BatchNorm2d()(L.Conv2d(width, 7, stride=2, padding=3, bias=False)(x)))
    h = L.MaxPool2d(3, stride=2, padding=1)(h)
    for scale, stride in STAGES:
        channels = scale * width
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
    def __init__(self, lazy: bool = False, width: int = 64) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.LazyConv2d(width, 7, stride=2, padding=3, bias=False)
            if lazy
            else nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
            nn.LazyBatchNorm2d() if lazy else nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        blocks: list[nn.Module] = []
        cin = width
        for scale, stride in STAGES:
            channels = scale * width
            blocks += [Block(cin, channels, stride, lazy), Block(channels, channels, 1, lazy)]
            cin = channels
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.LazyLinear(1000) if lazy else nn.Linear(cin, 1000)

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
    ours: Callable[[], object],
    base: Callable[[], object],
    rounds: int,
    inner: int,
    clock: Callable[[], float] = time.perf_counter,
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
            start = clock()
            for _ in range(inner):
                fn()
            pair.append((clock() - start) / inner)
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
    ours_name: str = "layers",
) -> None:
    verdict = (
        "" if target is None else f" (target <= {target}: {'ok' if ratio <= target else 'OVER'})"
    )
    print(
        f"{name:14s} {what:17s} {ours_name:6s} {ours * 1e3:9.3f} ms  "
        f"{base_name} {base * 1e3:9.3f} ms  ratio {ratio:.3f}{verdict}"
    )


def _no_sync() -> None:
    pass


def forward_ratio(
    ours: nn.Module,
    hand: nn.Module,
    x: torch.Tensor,
    rounds: int,
    inner: int,
    sync: Callable[[], None],
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float, float]:
    """paired_ratio of no_grad forwards of two models given the same weights, in eval
    mode on x's device."""
    _copy_weights(ours, hand)
    ours.to(x.device).eval()
    hand.to(x.device).eval()
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

        return paired_ratio(fwd_ours, fwd_hand, rounds, inner, clock)


def bench_steady(
    name: str,
    ours: nn.Module,
    hand: nn.Module,
    x: torch.Tensor,
    rounds: int,
    inner: int,
    sync: Callable[[], None] = _no_sync,
    clock: Callable[[], float] = time.perf_counter,
    backward: bool = True,
    target: float | None = STEADY_TARGET,
    control: bool = False,
) -> None:
    o, b, r = forward_ratio(ours, hand, x, rounds, inner, sync, clock)
    _report(name, "forward", o, "hand", b, r, target)
    if control:
        o, b, r = forward_ratio(hand, copy.deepcopy(hand), x, rounds, inner, sync, clock)
        _report(name, "forward control", o, "copy", b, r, None, ours_name="hand")
    if not backward:
        return
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


# --- per-call overhead ----------------------------------------------------------------
#
# The same models made so narrow (batch 1, a few channels) that their kernels cost next
# to nothing: what is left is the Python work of a call, which on a GPU is most of a small
# forward (kernels run asynchronously), so here any extra work of a built model's call
# shows as a ratio. The third model is a hand-written nn.Module whose parts are torchx
# layers, each called on its own (not through a container).


class MLP(nn.Module):
    def __init__(self, linear: Callable[[], nn.Module], act: Callable[[], nn.Module]) -> None:
        super().__init__()
        self.fc1, self.fc2, self.fc3, self.fc4 = linear(), linear(), linear(), linear()
        self.act = act()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.fc2(self.act(self.fc1(x))))
        return self.fc4(self.act(self.fc3(h)))  # type: ignore[no-any-return]


def mlp_layers(x: torch.Tensor) -> MLP:
    model = MLP(lambda: L.Linear(16), L.ReLU)
    with torch.no_grad():
        model(x)  # builds each layer
    return model


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
    # even, so that each side goes first in as many rounds as the other
    rounds = 6 if args.quick else 22
    device = torch.device(args.device)
    # a GPU runs kernels asynchronously: each timed call waits for its own to finish
    sync = torch.cuda.synchronize if device.type == "cuda" else _no_sync
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), rounds={rounds}, "
        f"steady state on {device}"
    )

    x_cnn = torch.randn(8, 3, 32, 32, device=device)
    bench_steady("seed CNN", cnn_layers(), cnn_hand(), x_cnn, rounds, 20, sync, control=True)
    size = args.resnet_size
    x_res = torch.randn(2, 3, size, size, device=device)
    bench_steady(
        f"ResNet-18@{size}", resnet_layers(size), ResNet18(), x_res, rounds, 3, sync, control=True
    )

    # On the CPU with one torch thread, the clock is this thread's CPU time, which other
    # processes competing for the cores do not inflate.
    one_thread = device.type == "cpu" and args.threads == 1
    clock = time.thread_time if one_thread else time.perf_counter
    calls = rounds * 2
    x_narrow = torch.randn(1, 3, 32, 32, device=device)
    bench_steady(
        "seed CNN w2", cnn_layers(NARROW_CNN), cnn_hand(NARROW_CNN), x_narrow,
        calls, 100, sync, clock, backward=False,
    )  # fmt: skip
    x_small = torch.randn(1, 3, 8, 8, device=device)
    bench_steady(
        "ResNet-18 w2@8", resnet_layers(8, width=2), ResNet18(width=2), x_small,
        calls, 20, sync, clock, backward=False,
    )  # fmt: skip
    x_mlp = torch.randn(1, 16)
    bench_steady(
        "MLP of layers", mlp_layers(x_mlp), MLP(lambda: nn.Linear(16, 16), nn.ReLU),
        x_mlp.to(device), calls, 200, sync, clock, backward=False, target=None,
    )  # fmt: skip

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
