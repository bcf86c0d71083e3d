"""pytorch/torchx 0.7.0's public surface is here: every module it exposes imports, and
every public name in it resolves.

``upstream_surface_0_7_0.json`` lists the modules an installed pytorch/torchx 0.7.0 can
import and the public names of each (modules that needed a dependency 0.7 did not install
carry an ``error`` entry and are not checked). The five cloud schedulers that
pytorch/torchx has since removed are not provided here (see MIGRATING.md).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

SURFACE = json.loads((Path(__file__).with_name("upstream_surface_0_7_0.json")).read_text())
NOT_PROVIDED = (
    "torchx.schedulers.aws_batch_scheduler",
    "torchx.schedulers.aws_sagemaker_scheduler",
    "torchx.schedulers.gcp_batch_scheduler",
    "torchx.schedulers.lsf_scheduler",
    "torchx.schedulers.kubernetes_mcad_scheduler",
)
CHECKED = sorted(
    m for m, info in SURFACE.items() if "names" in info and not m.startswith(NOT_PROVIDED)
)


def test_the_list_is_upstreams() -> None:
    # A truncated copy would make the check below pass vacuously.
    assert len(CHECKED) == 79
    assert sum(len(SURFACE[m]["names"]) for m in CHECKED) == 396


@pytest.mark.parametrize("module", CHECKED)
def test_module_and_its_names(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [n for n in SURFACE[module]["names"] if not hasattr(mod, n)]
    assert missing == [], f"{module} lacks {missing}"
