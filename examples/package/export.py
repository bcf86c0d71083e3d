"""Packages a trained checkpoint for inference: torch.export, TorchScript and a TorchServe .mar.

    python examples/package/export.py --checkpoint /tmp/ckpt --out /tmp/model

Writes ``model.pt2`` (``torch.export``, loads with ``torch.export.load``), ``model.ts``
(TorchScript, loads without Python model code, also from C++) and ``classifier.mar`` (a
TorchServe archive of the TorchScript model with ``handler.py``) when ``torch-model-archiver``
is installed. Each file is checked to give the checkpoint's own outputs before it is kept.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

HANDLER = Path(__file__).resolve().with_name("handler.py")
TRAIN = Path(__file__).resolve().parents[1] / "train"


def archiver() -> list[str] | None:
    """The torch-model-archiver command, or None when it is not installed."""
    exe = shutil.which("torch-model-archiver")
    if exe:
        return [exe]
    try:
        import model_archiver  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "model_archiver.model_packaging"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True, help="checkpoint file or folder (fsspec)")
    parser.add_argument("--out", required=True, help="local folder for the packaged model")
    parser.add_argument("--name", default="classifier", help="the model's name in TorchServe")
    ns = parser.parse_args()

    import torch

    # the train example reads its own checkpoints (a file, or a folder and its latest)
    sys.path.insert(0, str(TRAIN))
    from trainer import load_model

    model = load_model(ns.checkpoint)
    features = int(model.to_spec()["input_shapes"][0][-1])
    example = torch.randn(4, features, generator=torch.Generator().manual_seed(0))
    expected = model(example)
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)

    batch = torch.export.Dim("batch", min=1)
    exported = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
    torch.export.save(exported, out / "model.pt2")
    again = torch.export.load(out / "model.pt2").module()
    torch.testing.assert_close(again(example), expected)
    print(f"wrote {out / 'model.pt2'}")

    with warnings.catch_warnings():
        # TorchServe's archives take TorchScript, which torch now marks deprecated on every
        # call; that choice is this example's (see its README), so the warnings are left out
        warnings.filterwarnings("ignore", r"`torch\.jit\.", FutureWarning)
        scripted = torch.jit.trace(model, example)
        scripted.save(str(out / "model.ts"))
        torch.testing.assert_close(torch.jit.load(str(out / "model.ts"))(example), expected)
    print(f"wrote {out / 'model.ts'}")

    command = archiver()
    if command is None:
        print("torch-model-archiver is not installed: no .mar written")
        return
    subprocess.run(
        [*command, "--model-name", ns.name, "--version", "1.0",
         "--serialized-file", str(out / "model.ts"), "--handler", str(HANDLER),
         "--export-path", str(out), "--force"],
        check=True,
    )  # fmt: skip
    print(f"wrote {out / (ns.name + '.mar')}")


if __name__ == "__main__":
    main()
