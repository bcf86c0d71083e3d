"""Overheads of torchx.devices and torchx.nn, each against a baseline timed in the same run.

    uv run python benchmarks/devices_overhead.py [--device cpu|cuda:0] [--rounds 20]

1. per-call cost of torchx.nn.Module vs torch.nn.Module for a model already placed, outside
   and inside a scope (target: under 2 us extra per call);
2. entering and leaving a scope, vs torch's own ``with torch.device(...)`` and an empty ``with``;
3. a forward pass inside a scope vs outside.

Cases compared with each other are timed in turn within every round, so load on a shared
machine hits them alike; each figure is the best round (microseconds per call). On the CPU
the clock is the thread's CPU time (torch runs single-threaded here), which other processes
competing for the cores do not inflate; on a GPU it is wall time, with a synchronize per call.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import time
import timeit
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

import torchx.devices as tx
import torchx.nn as nnx

Case = tuple[Callable[[], contextlib.AbstractContextManager[Any]], Callable[[], object]]


class PlainNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))  # type: ignore[no-any-return]


class PlacedNet(nnx.Module):
    def __init__(self) -> None:
        self.fc1 = nn.Linear(16, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))  # type: ignore[no-any-return]


class PlainIdentity(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class PlacedIdentity(nnx.Module):
    def __init__(self) -> None:
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


CLOCK: Callable[[], float] = time.thread_time


def timed(cases: dict[str, Case], number: int, rounds: int) -> dict[str, float]:
    """Best-round microseconds per call of each case; every round runs all cases in turn."""
    best = {name: float("inf") for name in cases}
    for _ in range(rounds + 1):  # the first round warms caches and lazy imports
        for name, (context, fn) in cases.items():
            with context():
                seconds = timeit.Timer(fn, timer=CLOCK).timeit(number=number)
            best[name] = min(best[name], seconds / number * 1e6)
    return best


def _synced(device: torch.device, fn: Callable[[], object]) -> Callable[[], object]:
    if device.type != "cuda":
        return fn

    def run() -> None:
        fn()
        torch.cuda.synchronize()

    return run


def _table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    print(f"\n{title}")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        padded = zip(row[1:], widths[1:], strict=True)
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in padded]
        print("   " + "  ".join(cells))


def bench_module_call(device: torch.device, rounds: int) -> None:
    x = torch.randn(8, 16, device=device)
    scope = tx.device_scope(device)
    rows: list[tuple[str, ...]] = []
    for label, plain, placed in (
        ("identity", PlainIdentity().to(device), PlacedIdentity().to(device)),
        ("small MLP", PlainNet().to(device), PlacedNet().to(device)),
    ):
        call_plain = _synced(device, functools.partial(plain, x))
        call_placed = _synced(device, functools.partial(placed, x))
        with torch.no_grad():
            times = timed(
                {
                    "out/nn": (contextlib.nullcontext, call_plain),
                    "out/nnx": (contextlib.nullcontext, call_placed),
                    "in/nn": (lambda: scope, call_plain),
                    "in/nnx": (lambda: scope, call_placed),
                },
                number=3000,
                rounds=rounds,
            )
        for where in ("out", "in"):
            base, ours = times[f"{where}/nn"], times[f"{where}/nnx"]
            rows.append(
                (
                    f"{label}, {'outside' if where == 'out' else 'inside'} scope",
                    f"{base:.2f}",
                    f"{ours:.2f}",
                    f"{ours - base:+.2f}",
                    f"{ours / base:.3f}",
                )
            )
    _table(
        f"1. module call, model already on {device} (no_grad, batch 8)",
        ("model, where", "nn.Module us", "nnx.Module us", "extra us", "ratio"),
        rows,
    )


def bench_scope_enter_exit(device: torch.device, rounds: int) -> None:
    built = tx.device_scope(device)
    typed = tx.device_scope(device, dtype=torch.float64)
    torch_device = torch.device(device)

    def enter_leave(make: Callable[[], contextlib.AbstractContextManager[Any]]) -> Case:
        def run() -> None:
            with make():
                pass

        return contextlib.nullcontext, run

    times = timed(
        {
            "with nullcontext()": enter_leave(contextlib.nullcontext),
            "with torch.device(d)": enter_leave(lambda: torch_device),
            "with scope (prebuilt)": enter_leave(lambda: built),
            "with device_scope(d)": enter_leave(lambda: tx.device_scope(device)),
            "with scope + dtype": enter_leave(lambda: typed),
        },
        number=5000,
        rounds=rounds,
    )
    base = times["with torch.device(d)"]
    _table(
        f"2. enter + leave on {device} (device_scope(d) includes building the scope)",
        ("what", "us", "vs torch.device"),
        [(name, f"{us:.2f}", f"{us / base:.2f}x") for name, us in times.items()],
    )


def bench_forward_in_scope(device: torch.device, rounds: int) -> None:
    model = PlainNet().to(device)
    x = torch.randn(8, 16, device=device)
    forward = _synced(device, lambda: model(x))
    scope = tx.device_scope(device)
    typed = tx.device_scope(device, dtype=torch.float32)
    with torch.no_grad():
        times = timed(
            {
                "outside any scope": (contextlib.nullcontext, forward),
                "inside torch.device(d)": (lambda: torch.device(device), forward),
                "inside device_scope(d)": (lambda: scope, forward),
                "inside scope + dtype": (lambda: typed, forward),
            },
            number=3000,
            rounds=rounds,
        )
    base = times["outside any scope"]
    _table(
        f"3. forward of the small MLP (plain nn.Module: Linear, ReLU, Linear) on {device}",
        ("where", "us", "extra us", "ratio"),
        [(n, f"{us:.2f}", f"{us - base:+.2f}", f"{us / base:.3f}") for n, us in times.items()],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="torchx.devices overhead benchmarks")
    parser.add_argument("--device", default="cpu", help="cpu or cuda:<n> (default: cpu)")
    parser.add_argument("--rounds", type=int, default=20, help="timed rounds (default: 20)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    device = torch.device(args.device)
    global CLOCK
    CLOCK = time.perf_counter if device.type == "cuda" else time.thread_time
    clock = "wall" if device.type == "cuda" else "thread CPU"
    print(f"torch {torch.__version__}, {device}, best of {args.rounds} rounds, {clock} time")
    bench_module_call(device, args.rounds)
    bench_scope_enter_exit(device, args.rounds)
    bench_forward_in_scope(device, args.rounds)


if __name__ == "__main__":
    main()
