"""torchx apps as Kubeflow Pipelines v2 stages.

Importing this module does not import kfp; the functions do, on first call.
"""

from torchx.pipelines.kfp._component import component_from_app
from torchx.pipelines.kfp._errors import KfpAdapterError
from torchx.pipelines.kfp._placeholders import input_path, output_path, param
from torchx.pipelines.kfp._resources import ACCELERATOR_TYPE, DEFAULT_ACCELERATOR
from torchx.pipelines.kfp._task import task_from_app


def __getattr__(name: str) -> str:
    # The adapter's version, as 0.7 offered it here; read from package metadata on first use.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from torchx.pipelines.kfp.version import __version__

    return __version__


__all__ = [
    "ACCELERATOR_TYPE",
    "DEFAULT_ACCELERATOR",
    "KfpAdapterError",
    "component_from_app",
    "input_path",
    "output_path",
    "param",
    "task_from_app",
]
