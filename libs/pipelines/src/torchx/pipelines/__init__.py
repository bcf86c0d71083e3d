"""torchx.pipelines: torchx apps as stages of ML pipelines.

Each supported platform is a subpackage with its own adapter; today that is Kubeflow
Pipelines v2 in :mod:`torchx.pipelines.kfp`. Importing this package imports no pipeline SDK.
"""

__all__: list[str] = []
