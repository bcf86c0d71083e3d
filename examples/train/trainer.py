"""A trainer app: a torchx.layers classifier, fsspec data and checkpoints, TensorBoard metrics.

Runs alone (one process) or under torchrun (``dist.ddp``), where it trains with
DistributedDataParallel over gloo on CPU (nccl on GPUs):

    python examples/train/trainer.py --steps 200 --checkpoint_dir /tmp/ckpt --tb_dir /tmp/tb
    python examples/train/trainer.py --steps 400 --checkpoint_dir /tmp/ckpt --resume /tmp/ckpt

Preemption: when the scheduler warns (Slurm's signal ahead of the time limit, a pod's
SIGTERM, ``torchx requeue``), the ranks agree to stop after the same step, rank 0
checkpoints, and the app exits asking to be run again (torchx.runtime.preemption). The
next attempt resumes from --checkpoint_dir by itself; each step's batch is drawn from a
generator seeded by the step, so a requeued run ends with the weights of an uninterrupted
one.

Data, checkpoints and the resume path are fsspec URLs (a local path, ``memory://...``,
``s3://...``). Each checkpoint holds the model's layer spec next to its weights, so other
apps (evaluate, interpret, package) rebuild the model without the code that defined it:
``load_model`` here reads a checkpoint file or folder and does that.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time
from typing import Any

NUM_FEATURES = 8
# The label depends on these features only; the interpret example should find them.
INFORMATIVE_FEATURES = (0, 3)
LATEST = "latest"  # a small file in the checkpoint folder naming the newest checkpoint


def make_dataset(n: int, seed: int = 0) -> dict[str, Any]:
    """Features ~ N(0, 1); label 1 when x0 + 2*x3 > 0, so only features 0 and 3 matter."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, NUM_FEATURES, generator=gen)
    y = (x[:, 0] + 2 * x[:, 3] > 0).long()
    return {"x": x, "y": y}


def write_torch(url: str, obj: Any) -> None:
    """torch.save to any fsspec URL, in one write so a reader never sees half a file."""
    import fsspec
    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    fs, path = fsspec.core.url_to_fs(url)
    parent = os.path.dirname(path.rstrip("/"))
    if parent:
        fs.makedirs(parent, exist_ok=True)
    fs.pipe_file(path, buf.getvalue())


def read_torch(url: str) -> Any:
    import fsspec
    import torch

    with fsspec.open(url, "rb") as f:
        return torch.load(io.BytesIO(f.read()), weights_only=True)


def read_data(url: str) -> Any:
    """The data set at ``url`` (make_data.py writes one); a missing one is named, not a
    traceback."""
    try:
        return read_torch(url)
    except FileNotFoundError:
        raise SystemExit(
            f"--data: no data set at {url!r}; write one with make_data.py, or leave --data "
            "out for synthetic data"
        ) from None


def resolve_checkpoint(url: str, option: str = "--resume") -> str:
    """A checkpoint file, or a checkpoint folder whose ``latest`` names the newest one;
    ``option`` is the flag that gave ``url``, named when there is none."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(url)
    if fs.isdir(path):
        pointer = f"{path.rstrip('/')}/{LATEST}"
        if not fs.exists(pointer):
            raise SystemExit(f"{option}: {url!r} is a folder without a {LATEST!r} checkpoint")
        name = fs.cat_file(pointer).decode().strip()
        if not fs.exists(f"{path.rstrip('/')}/{name}"):
            raise SystemExit(
                f"{option}: {url!r} names {name!r} in {LATEST!r}, which is not there; give a "
                "checkpoint file, or a folder whose latest checkpoint is whole"
            )
        return f"{url.rstrip('/')}/{name}"
    if not fs.exists(path):
        raise SystemExit(f"{option}: no checkpoint at {url!r}; give a checkpoint file or folder")
    return url


def load_checkpoint(url: str, option: str) -> tuple[str, dict[str, Any]]:
    """The checkpoint file ``url`` names (a file, or a folder's latest) and its contents;
    ``option`` is the flag that gave ``url``, named when there is none."""
    found = resolve_checkpoint(url, option)
    return found, read_torch(found)


def model_from(ckpt: dict[str, Any]) -> Any:
    """A checkpoint's model, rebuilt from its layer spec, with its weights, in eval mode."""
    import torchx.layers as L

    model = L.from_spec(ckpt["spec"])
    model.load_state_dict(ckpt["model"])
    return model.eval()


def load_model(url: str, option: str = "--checkpoint") -> Any:
    """The model of a checkpoint file or folder (see ``model_from``)."""
    return model_from(load_checkpoint(url, option)[1])


def save_checkpoint(checkpoint_dir: str, state: dict[str, Any]) -> str:
    import fsspec

    name = f"step_{state['step']:06d}.pt"
    write_torch(f"{checkpoint_dir.rstrip('/')}/{name}", state)
    # The pointer moves only after the checkpoint is whole, so a kill never leaves it dangling.
    fs, path = fsspec.core.url_to_fs(checkpoint_dir)
    fs.pipe_file(f"{path.rstrip('/')}/{LATEST}", name.encode())
    return name


def build_model(hidden: int) -> Any:
    import torchx.layers as L

    model = L.Sequential(L.Linear(hidden), L.ReLU(), L.Linear(hidden), L.ReLU(), L.Linear(2))
    model.build((None, NUM_FEATURES))  # parameters exist now, before DDP wraps them
    return model


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="", help="dataset URL (make_data.py); empty: synthesize")
    p.add_argument("--steps", type=int, default=200, help="train until this global step")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--checkpoint_dir", default="", help="fsspec URL; empty: no checkpoints")
    p.add_argument("--save_every", type=int, default=50)
    p.add_argument("--resume", default="", help="checkpoint file or folder to continue from")
    p.add_argument("--tb_dir", default="", help="TensorBoard log dir; empty: no event files")
    p.add_argument("--tracker_base", default="", help="report the result to this tracker")
    p.add_argument("--trial_id", default="", help="the tracker key for --tracker_base")
    p.add_argument("--step_delay", type=float, default=0.0, help="seconds to pause each step")
    ns = p.parse_args(argv)
    if ns.steps < 1:
        p.error(f"--steps: got {ns.steps}; expected 1 or more")
    if ns.tracker_base and not ns.trial_id:
        p.error("--trial_id: required with --tracker_base")
    return ns


def record_run(ns: argparse.Namespace, result: dict[str, float | int]) -> None:
    """Record this run (settings, result, outputs) in the trackers of the launcher's
    .torchxconfig; a no-op when torchx did not launch the app or no tracker is configured."""
    from torchx.tracker import app_run_from_env

    run = app_run_from_env()
    run.add_metadata(lr=ns.lr, hidden=ns.hidden, batch_size=ns.batch_size, **result)
    if ns.checkpoint_dir:
        run.add_artifact(
            "checkpoint", resolve_checkpoint(ns.checkpoint_dir), {"step": result["step"]}
        )
    if ns.tb_dir:
        run.add_artifact("tensorboard", ns.tb_dir)


def stop_here(warned: bool, distributed: bool, device: str) -> bool:
    """Whether every rank stops before this step: the warning reaches ranks at slightly
    different steps, so they agree (any rank warned) before anyone leaves a collective."""
    if not distributed:
        return warned
    import torch
    import torch.distributed as dist

    flag = torch.tensor([int(warned)], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def main(argv: list[str] | None = None) -> None:
    ns = parse_args(argv)

    import torch
    import torch.distributed as dist

    import torchx.devices as tx
    import torchx.runtime.preemption as preemption

    env = tx.distributed_env() if int(os.environ.get("WORLD_SIZE", "1")) > 1 else None
    rank, world = (env.rank, env.world_size) if env else (0, 1)
    device = f"cuda:{env.local_rank if env else 0}" if torch.cuda.is_available() else "cpu"

    data = read_data(ns.data) if ns.data else make_dataset(2048)
    n_val = len(data["x"]) // 5
    x_val, y_val = data["x"][:n_val], data["y"][:n_val]
    x_train, y_train = data["x"][n_val:], data["y"][n_val:]

    torch.manual_seed(0)  # the same initial weights on every rank
    model = build_model(ns.hidden)
    opt = torch.optim.SGD(model.parameters(), lr=ns.lr, momentum=0.9)
    step = 0
    resume = ns.resume
    if not resume and preemption.attempt() > 0 and ns.checkpoint_dir:
        # a requeued run: continue from the last checkpoint, if the first run made one
        import fsspec

        fs, path = fsspec.core.url_to_fs(ns.checkpoint_dir)
        if fs.exists(f"{path.rstrip('/')}/{LATEST}"):
            resume = ns.checkpoint_dir
    if resume:
        ckpt_url, ckpt = load_checkpoint(resume, "--resume")
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optim"])
        step = int(ckpt["step"])
        if rank == 0:
            print(f"resumed from {ckpt_url} at step {step}", flush=True)

    def on_warning(at: int, saved: str) -> None:
        print(f"step {at}: warned, saved {saved}", flush=True)
        # each attempt that was cut short is recorded in the launcher's trackers too
        from torchx.tracker import app_run_from_env

        app_run_from_env().add_metadata(**{f"attempt_{preemption.attempt()}_stopped_at_step": at})

    def checkpoint() -> str:
        state = {
            "step": step,
            "model": model.state_dict(),
            "optim": opt.state_dict(),
            "spec": model.to_json(),
        }
        return save_checkpoint(ns.checkpoint_dir, state)

    with tx.device_scope(device):
        net = tx.DistributedDataParallel(model) if env else model.to(device)
        writer = None
        if ns.tb_dir and rank == 0:
            from torch.utils.tensorboard import SummaryWriter

            # purge_step drops events a killed run logged past the checkpoint we resumed from.
            writer = SummaryWriter(ns.tb_dir, purge_step=step + 1 if resume else None)
        gen = torch.Generator()
        if ns.checkpoint_dir and rank == 0:
            preemption.on_preempt(lambda: on_warning(step, checkpoint()))
        loss = torch.tensor(0.0)
        while step < ns.steps:
            if stop_here(preemption.preempted(), env is not None, device):
                preemption.requeue()  # rank 0 checkpoints first (on_preempt)
            gen.manual_seed(1000 * rank + step)  # this step's batch, however the run was cut
            idx = torch.randint(len(x_train), (ns.batch_size,), generator=gen, device="cpu")
            xb, yb = x_train[idx].to(device), y_train[idx].to(device)
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(xb), yb)
            loss.backward()
            opt.step()
            step += 1
            if writer:
                writer.add_scalar("loss/train", loss.item(), step)
            if ns.checkpoint_dir and rank == 0 and (step % ns.save_every == 0 or step == ns.steps):
                print(f"step {step}: saved {checkpoint()}", flush=True)
            if ns.step_delay:
                time.sleep(ns.step_delay)

        with torch.no_grad():
            logits = model(x_val.to(device))
            val_loss = torch.nn.functional.cross_entropy(logits, y_val.to(device)).item()
            accuracy = (logits.argmax(1) == y_val.to(device)).float().mean().item()
        if writer:
            writer.add_scalar("loss/val", val_loss, step)
            writer.add_scalar("accuracy/val", accuracy, step)
            writer.close()

    result = {
        "step": step,
        "val_loss": val_loss,
        "accuracy": accuracy,
        "world_size": world,
        "attempt": preemption.attempt(),
    }
    if rank == 0:
        print("done " + json.dumps(result), flush=True)
        record_run(ns, result)
        if ns.tracker_base:
            from torchx.runtime.tracking import FsspecResultTracker

            FsspecResultTracker(ns.tracker_base)[ns.trial_id] = {
                "val_loss": val_loss,
                "accuracy": accuracy,
                "lr": ns.lr,
                "hidden": ns.hidden,
            }
    if env:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
