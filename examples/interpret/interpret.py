"""Feature attributions of a trained checkpoint with captum, as a PNG heatmap and an HTML table.

    python examples/interpret/interpret.py --checkpoint /tmp/ckpt --out /tmp/interpret

The checkpoint (a file, or a folder with a ``latest`` pointer, as the train example writes)
carries the model's layer spec, so the model is rebuilt from data: this app needs none of
the code that defined it (the train example's ``load_model`` reads the checkpoint).
Integrated gradients attribute the class-1 logit to each input feature.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path

TRAIN = Path(__file__).resolve().parents[1] / "train"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True, help="checkpoint file or folder (fsspec)")
    parser.add_argument("--out", required=True, help="local folder for the PNG, HTML and JSON")
    parser.add_argument("--samples", type=int, default=16)
    ns = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    import torch
    from captum.attr import IntegratedGradients

    # the train example reads its own checkpoints (a file, or a folder and its latest)
    sys.path.insert(0, str(TRAIN))
    from trainer import load_model

    model = load_model(ns.checkpoint)
    features = int(model.to_spec()["input_shapes"][0][-1])  # the spec records the input shape
    x = torch.randn(ns.samples, features, generator=torch.Generator().manual_seed(7))
    attributions = IntegratedGradients(model).attribute(x, baselines=torch.zeros_like(x), target=1)
    per_sample = attributions.detach()
    importance = per_sample.abs().mean(0)

    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    # Symmetric limits keep zero attribution white, so sign and size read at a glance.
    limit = float(per_sample.abs().max()) or 1.0
    image = ax.imshow(per_sample.numpy(), cmap="coolwarm", aspect="auto", vmin=-limit, vmax=limit)
    ax.set_xlabel("feature")
    ax.set_ylabel("sample")
    ax.set_title("integrated gradients, class 1")
    fig.colorbar(image)
    fig.savefig(out / "attributions.png", dpi=80)
    plt.close(fig)

    rows = "".join(
        f"<tr><td>{i}</td><td>{v:.4f}</td></tr>" for i, v in enumerate(importance.tolist())
    )
    (out / "attributions.html").write_text(
        f"<html><body><h1>{html.escape(ns.checkpoint)}</h1>"
        "<table><tr><th>feature</th><th>mean |attribution|</th></tr>"
        f"{rows}</table></body></html>"
    )
    ranking = sorted(range(features), key=lambda i: -float(importance[i]))
    (out / "attributions.json").write_text(
        json.dumps({"importance": importance.tolist(), "ranking": ranking})
    )
    print(f"wrote {out}/attributions.png, .html, .json; most important features: {ranking[:2]}")


if __name__ == "__main__":
    main()
