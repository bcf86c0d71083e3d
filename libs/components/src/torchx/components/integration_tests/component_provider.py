"""Providers of the AppDefs that ``integ_tests`` runs: one per builtin component.

A provider gets the scheduler and image in its constructor, may prepare files in
``setUp`` and remove them in ``tearDown``, and returns the app from ``get_app_def``.
Paths are local temporary files on the local schedulers, and plain names elsewhere (the
app runs in the image's working directory).
"""

from __future__ import annotations

import abc
import os
import tempfile

from torchx.components import dist as dist_components
from torchx.components import serve as serve_components
from torchx.components import utils as utils_components
from torchx.specs import AppDef

# Schedulers whose apps run on this machine and see its temporary directory.
_LOCAL = ("local_cwd", "local_dir", "ray")

# What the DDP provider runs: every rank adds 1 and checks that the sum is the world size.
_WORLD_SIZE_PROGRAM = """\
import os

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo")
t = torch.ones(1)
dist.all_reduce(t)
size = dist.get_world_size()
assert int(t.item()) == size, f"all_reduce gave {t.item()}, world size {size}"
print(f"rank {dist.get_rank()}: world size {size}")
dist.destroy_process_group()
"""


class ComponentProvider(abc.ABC):
    """Makes one component's AppDef for ``scheduler`` and ``image``."""

    def __init__(self, scheduler: str, image: str) -> None:
        self._scheduler = scheduler
        self._image = image

    @abc.abstractmethod
    def get_app_def(self) -> AppDef:
        """The app to run."""

    def setUp(self) -> None:  # noqa: B027 -- optional to override
        """Prepare what the app needs (nothing by default)."""

    def tearDown(self) -> None:  # noqa: B027
        """Remove what ``setUp`` made (nothing by default)."""


class DDPComponentProvider(ComponentProvider):
    """``dist.ddp``: two processes under torchrun that all-reduce a tensor (needs torch
    in the image)."""

    def __init__(self, scheduler: str, image: str) -> None:
        super().__init__(scheduler, image)
        self._dir = ""

    def setUp(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="torchx_integ_ddp_")
        with open(os.path.join(self._dir, "compute_world_size.py"), "w") as f:
            f.write(_WORLD_SIZE_PROGRAM)

    def get_app_def(self) -> AppDef:
        script = (
            os.path.join(self._dir, "compute_world_size.py")
            if self._scheduler in _LOCAL
            else "compute_world_size.py"
        )
        return dist_components.ddp(
            script=script,
            name="ddp-trainer",
            image=self._image,
            cpu=1,
            j="1x2",
            env={"LOGLEVEL": "INFO"},
        )


class ServeComponentProvider(ComponentProvider):
    """``serve.torchserve`` in dry-run mode (no TorchServe is needed)."""

    def get_app_def(self) -> AppDef:
        return serve_components.torchserve(
            model_path="dummy_path",
            management_api="http://localhost:8081",
            image=self._image,
            dryrun=True,
        )


class BoothComponentProvider(ComponentProvider):
    """``utils.booth`` at (1, 2)."""

    def get_app_def(self) -> AppDef:
        return utils_components.booth(x1=1.0, x2=2.0, image=self._image)


class ShComponentProvider(ComponentProvider):
    """``utils.sh echo test``."""

    def get_app_def(self) -> AppDef:
        return utils_components.sh("echo", "test", image=self._image)


class TouchComponentProvider(ComponentProvider):
    """``utils.touch`` of a temporary file (removed in ``tearDown``)."""

    def __init__(self, scheduler: str, image: str) -> None:
        super().__init__(scheduler, image)
        self._file_path = ""

    def setUp(self) -> None:
        name = "torchx_touch_test.txt"
        local = self._scheduler in _LOCAL
        self._file_path = os.path.join(tempfile.gettempdir(), name) if local else name

    def get_app_def(self) -> AppDef:
        return utils_components.touch(file=self._file_path, image=self._image)


class CopyComponentProvider(ComponentProvider):
    """``utils.copy`` of a small file."""

    def __init__(self, scheduler: str, image: str) -> None:
        super().__init__(scheduler, image)
        self._dir = ""
        self._src_path = ""
        self._dst_path = ""

    def setUp(self) -> None:
        if self._scheduler in _LOCAL:
            self._dir = tempfile.mkdtemp(prefix="torchx_integ_copy_")
            self._src_path = os.path.join(self._dir, "torchx_copy_test.txt")
            self._dst_path = self._src_path + ".copy"
            with open(self._src_path, "w") as f:
                f.write("test data")
        else:
            self._src_path, self._dst_path = "README.md", "README.md.copy"

    def get_app_def(self) -> AppDef:
        return utils_components.copy(src=self._src_path, dst=self._dst_path, image=self._image)


__all__ = [
    "BoothComponentProvider",
    "ComponentProvider",
    "CopyComponentProvider",
    "DDPComponentProvider",
    "ServeComponentProvider",
    "ShComponentProvider",
    "TouchComponentProvider",
]
