"""A sweep's workspace, built into its trials' images once rather than once per trial."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.runner._runner import Runner
    from torchx.runner._sweep import Sweep
    from torchx.runner._sweep_record import SweepRecord
    from torchx.specs import ComponentSchema


def build_workspace_once(
    runner: Runner, schema: ComponentSchema, record: SweepRecord, sweep: Sweep
) -> None:
    """Build ``record``'s workspace into the trials' role images once per distinct image
    (one build where no trial sweeps the image): every trial then runs the built images,
    where a build per trial would ship the same files again each time. A workspace that
    builds no image (Slurm's copy at submit, Ray's working_dir) stays for each trial's
    dryrun: it names the same directory for all of them."""
    from torchx.runner._sweep_plan import trial_app
    from torchx.workspace.api import WorkspaceMixin

    workspace = record.workspace
    if not workspace or not isinstance(runner._scheduler(record.scheduler), WorkspaceMixin):
        return
    merged = runner._cfg(record.scheduler, record.cfg)
    images: dict[str, str] = {}
    for index in range(len(record.trials)):
        app = trial_app(runner, schema, record, index, sweep)
        app.roles = [r for r in app.roles if r.image not in images]
        if not app.roles:
            continue
        built, _ = runner._with_workspace(app, record.scheduler, merged, workspace)
        pairs = zip(app.roles, built.roles, strict=True)
        images.update({old.image: new.image for old, new in pairs})
        if images == {image: image for image in images}:
            return  # the workspace goes in by run option, not into the image
    record.images = images
    record.built_workspace, record.workspace = workspace, None


__all__ = ["build_workspace_once"]
