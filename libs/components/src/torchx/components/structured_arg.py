"""Structured component arguments, under pytorch/torchx's module path: ``--name
EXPERIMENT/RUN`` and ``-j NNODESxNPROC`` as ``dist.ddp`` and ``dist.spmd`` read them, for
components written in their image."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

from torchx.components.dist import DEFAULT_EXPERIMENT, split_name
from torchx.specs import SpecsError, named_resources


@dataclass
class StructuredNameArgument:
    """``EXPERIMENT/RUN`` split; printed back as ``EXPERIMENT/RUN``."""

    experiment_name: str
    run_name: str

    def __str__(self) -> str:
        return f"{self.experiment_name or ''}/{self.run_name}"

    @staticmethod
    def parse_from(
        name: str,
        m: str | None = None,
        script: str | None = None,
        default_experiment_name: str = DEFAULT_EXPERIMENT,
    ) -> StructuredNameArgument:
        """The experiment and run of ``name`` (``EXP/RUN``, ``EXP/``, ``/RUN`` or ``RUN``).

        An empty run takes the module's last part (``m``) or the script's file name without
        its extension; exactly one of ``m`` and ``script`` must be given.
        """
        if bool(m) == bool(script):
            raise SpecsError(
                "program", f"m={m!r}, script={script!r}", "give exactly one of m and script"
            )
        program = m.rpartition(".")[2] if m else os.path.splitext(os.path.basename(script or ""))[0]
        experiment, run = split_name(name, program)
        if experiment == DEFAULT_EXPERIMENT:
            experiment = default_experiment_name
        return StructuredNameArgument(experiment, run)


@dataclass
class StructuredJArgument:
    """``-j``: nodes and processes per node; printed back as ``NxM``."""

    nnodes: int
    nproc_per_node: int

    def __str__(self) -> str:
        return f"{self.nnodes}x{self.nproc_per_node}"

    @staticmethod
    def parse_from(h: str, j: str) -> StructuredJArgument:
        """``-j N`` takes one process per GPU of the named resource ``h``; ``-j NxM`` is
        kept as given (with a warning when M is not that GPU count)."""
        gpus = named_resources[h].gpu
        nodes, sep, procs = j.partition("x")
        if not nodes.isdigit() or (sep and not procs.isdigit()):
            raise SpecsError("-j", j, "expected NNODES or NNODESxNPROC_PER_NODE, e.g. 2 or 2x8")
        if not sep:
            if gpus <= 0:
                raise SpecsError(
                    "-j",
                    j,
                    f"{h} has no GPU to count processes by; give -j {nodes}xNPROC_PER_NODE",
                )
            return StructuredJArgument(int(nodes), gpus)
        if int(procs) != gpus:
            warnings.warn(
                f"-j {j} runs {procs} processes per node on {h}, which has {gpus} GPU(s); "
                f"-j {nodes} runs one per GPU",
                stacklevel=2,
            )
        return StructuredJArgument(int(nodes), int(procs))


__all__ = ["StructuredJArgument", "StructuredNameArgument"]
