"""Metrics components."""

from __future__ import annotations

from torchx.components._common import IMAGE, fill_shared_arg_help, python_app
from torchx.specs import AppDef, SpecsError


def tensorboard(
    logdir: str,
    image: str = IMAGE,
    timeout: float = 3600,
    port: int = 6006,
    start_on_file: str = "",
    exit_on_file: str = "",
) -> AppDef:
    """Runs TensorBoard on a log directory, stopping after a timeout or when a file appears.

    The image needs the ``tensorboard`` package. The app runs ``python -m
    torchx.apps.utils.process_monitor``, which pytorch/torchx 0.7's image has too; as
    there, stopping TensorBoard at the timeout or the exit file ends the app with
    TensorBoard's exit status. ``torchx status`` shows its URL. Point ``--exit_on_file``
    at a file the training job writes when it is done, so TensorBoard stops with it.

    Args:
        logdir: the log directory (any path or URL TensorBoard reads)
        timeout: stop after this many seconds
        port: the port TensorBoard listens on
        start_on_file: wait for this file to exist before starting TensorBoard
        exit_on_file: stop TensorBoard once this file exists
    """
    if timeout <= 0:
        raise SpecsError("metrics.tensorboard --timeout", timeout, "expected seconds above 0")
    if not 0 < port < 65536:
        raise SpecsError("metrics.tensorboard --port", port, "expected a port from 1 to 65535")
    args = ["-m", "torchx.apps.utils.process_monitor", "--timeout", str(timeout)]
    args += ["--start_on_file", start_on_file, "--exit_on_file", exit_on_file]
    args += ["--", "tensorboard", "--bind_all", "--port", str(port), "--logdir", logdir]
    return python_app(
        "tensorboard",
        image,
        args,
        port_map={"http": port},
        # read by the runner: the status's UI URL, {host} being where the replica runs
        metadata={"ui_url": f"http://{{host}}:{port}/"},
    )


fill_shared_arg_help(tensorboard)
