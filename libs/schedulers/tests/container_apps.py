"""The trainer role that the container schedulers' request tests translate field by field."""

from __future__ import annotations

from typing import Any

from torchx.specs import BindMount, DeviceMount, Resource, RetryPolicy, Role, VolumeMount, macros


def trainer_role(**fields: Any) -> Role:
    """A role that uses every field a container request carries: macros in its args, an env
    entry, two replicas, a GPU and a named device, retries, one mount of each kind and a port.
    ``fields`` replace any of them."""
    role: dict[str, Any] = {
        "name": "trainer",
        "image": "registry.example.com/org/train:1.0",
        "entrypoint": "python",
        "args": ["-m", "train", "--rank", macros.replica_id, "--id", macros.app_id],
        "env": {"FOO": "bar"},
        "num_replicas": 2,
        "resource": Resource(cpu=2.5, gpu=1, memMB=4096, devices={"vpc.amazonaws.com/efa": 2}),
        "max_retries": 3,
        "retry_policy": RetryPolicy.ROLE,
        "mounts": [
            BindMount("/data", "/mnt/data", read_only=True),
            VolumeMount("ckpt-pvc", "/ckpt"),
            DeviceMount("/dev/fuse", "/dev/fuse", "rw"),
        ],
        "port_map": {"tcp": 29500},
    }
    role.update(fields)
    return Role(**role)
