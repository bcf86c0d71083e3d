"""Device scopes and data parallel helpers for PyTorch.

``with device_scope("cuda:0"): ...`` sends every tensor factory in the block to that device;
:class:`torchx.nn.Module` instances called inside move themselves there once.
"""

from torchx.devices._errors import DeviceUnavailableError, GPUFallbackWarning
from torchx.devices._parallel import (
    DataParallel,
    DistributedDataParallel,
    DistributedEnv,
    distributed_env,
)
from torchx.devices._placement import DeviceSpec
from torchx.devices._policy import (
    MissingGPUPolicy,
    get_missing_gpu_policy,
    reset_missing_gpu_policy,
    set_missing_gpu_policy,
)
from torchx.devices._scope import DeviceScope, current_device, current_scope, device_scope

__all__ = [
    "DataParallel",
    "DeviceScope",
    "DeviceSpec",
    "DeviceUnavailableError",
    "DistributedDataParallel",
    "DistributedEnv",
    "GPUFallbackWarning",
    "MissingGPUPolicy",
    "current_device",
    "current_scope",
    "device_scope",
    "distributed_env",
    "get_missing_gpu_policy",
    "reset_missing_gpu_policy",
    "set_missing_gpu_policy",
]
