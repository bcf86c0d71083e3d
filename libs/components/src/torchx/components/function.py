"""Python functions as apps: the job that runs one call written by ``torchx.runner.Executor``.

The job runs ``python -m torchx.runtime.function CALL_URL`` (from the
torchx-runtime-function distribution, which the image needs), under torchrun when it has
several processes, so every rank runs the function with torchrun's environment.
"""

from __future__ import annotations

from torchx.components._common import IMAGE, fill_shared_arg_help, role_resource, sized_role
from torchx.components.dist import Topology, _torchrun_role
from torchx.specs import AppDef, SpecsError

__all__ = ["IMAGE", "RUNTIME_MODULE", "call"]

# The module that runs inside the job (torchx-runtime-function).
RUNTIME_MODULE = "torchx.runtime.function"


def call(
    url: str,
    python: str = "python",
    image: str = IMAGE,
    name: str = "function",
    num_replicas: int = 1,
    nproc_per_node: int = 1,
    h: str | None = None,
    cpu: float = -1,
    gpu: int = -1,
    memMB: int = -1,
    env: dict[str, str] | None = None,
    mounts: list[str] | None = None,
    rdzv_port: int = 29500,
) -> AppDef:
    """Runs the Python call written in folder URL and writes its outcome there.

    Args:
        url: the call's folder (a path or an fsspec URL every node can reach)
        python: the Python interpreter to run it with
        name: the app and role name
        num_replicas: how many nodes run the function
        nproc_per_node: processes per node; several processes (or nodes) run under torchrun
        rdzv_port: the rendezvous port on the first node when there are several nodes
    """
    if not url:
        raise SpecsError("function.call url", url, "give the call's folder")
    for field, value in (("num_replicas", num_replicas), ("nproc_per_node", nproc_per_node)):
        if value < 1:
            raise SpecsError(f"function.call --{field}", value, "expected 1 or more")
    if num_replicas == 1 and nproc_per_node == 1:
        program = ["-m", RUNTIME_MODULE, url]
        role = sized_role(
            name,
            image,
            python,
            program,
            role_resource(h, cpu, gpu, memMB, where="function.call"),
            env,
            mounts,
        )
        return AppDef(name=name, roles=[role])
    return _torchrun_role(
        name=name,
        program=["-m", RUNTIME_MODULE],
        role_name=name,
        script_args=(url,),
        topology=Topology(num_replicas, num_replicas, nproc_per_node),
        image=image,
        h=h,
        cpu=cpu,
        gpu=gpu,
        memMB=memMB,
        env=env,
        max_retries=0,
        rdzv_backend="c10d",
        rdzv_port=rdzv_port,
        mounts=mounts,
        debug=False,
        where="function.call",
        tee=3,
        launcher=(python, "-m", "torch.distributed.run"),
    )


fill_shared_arg_help(call, per="node")
