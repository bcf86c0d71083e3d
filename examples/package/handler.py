"""TorchServe handler for the packaged classifier: JSON rows of features in, class ids out.

TorchServe calls ``handle(data, context)`` per batch; ``context.system_properties`` and
``context.manifest`` say where the archive was unpacked and which file is the model.
"""

from __future__ import annotations

import json
import os
from typing import Any

_model: Any = None


def _load(context: Any) -> Any:
    import torch

    model_dir = context.system_properties.get("model_dir")
    serialized = context.manifest["model"]["serializedFile"]
    return torch.jit.load(os.path.join(model_dir, serialized)).eval()


def handle(data: list[dict[str, Any]] | None, context: Any) -> list[Any] | None:
    import torch

    global _model
    if _model is None:
        _model = _load(context)
    if data is None:  # TorchServe's warm-up call
        return None
    rows = []
    for request in data:
        body = request.get("data") or request.get("body")
        rows.append(json.loads(body) if isinstance(body, (bytes, bytearray, str)) else body)
    with torch.no_grad():
        logits = _model(torch.tensor(rows, dtype=torch.float32))
    return logits.argmax(1).tolist()
