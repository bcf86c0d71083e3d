"""Evaluates a checkpoint of the train example and writes a JSON report.

    python examples/train/evaluate.py --checkpoint /tmp/ckpt --report /tmp/report.json

``--checkpoint`` is a checkpoint file or a checkpoint folder (its ``latest`` is used);
``--data`` is a data set written by make_data.py (empty: the trainer's synthetic data, whose
first fifth is the validation split); ``--report`` is where the report goes. All three are
fsspec URLs. The model is rebuilt from the layer spec stored in the checkpoint.
"""

from __future__ import annotations

import argparse
import json


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", required=True, help="checkpoint file or folder (fsspec)")
    p.add_argument("--data", default="", help="data set URL; empty: the synthetic data")
    p.add_argument("--report", required=True, help="where to write the JSON report (fsspec)")
    ns = p.parse_args(argv)

    import fsspec
    import torch
    from trainer import load_checkpoint, make_dataset, model_from, read_data

    url, ckpt = load_checkpoint(ns.checkpoint, "--checkpoint")
    model = model_from(ckpt)

    data = read_data(ns.data) if ns.data else make_dataset(2048)
    n_val = len(data["x"]) // 5
    x, y = data["x"][:n_val], data["y"][:n_val]
    with torch.no_grad():
        logits = model(x)
    report = {
        "checkpoint": url,
        "step": int(ckpt["step"]),
        "examples": len(y),
        "loss": torch.nn.functional.cross_entropy(logits, y).item(),
        "accuracy": (logits.argmax(1) == y).float().mean().item(),
    }
    fs, path = fsspec.core.url_to_fs(ns.report)
    fs.pipe_file(path, json.dumps(report, indent=2).encode())
    print("report " + json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
