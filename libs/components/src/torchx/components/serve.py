"""Serving components."""

from __future__ import annotations

from torchx.components._common import IMAGE, fill_shared_arg_help, python_app
from torchx.specs import AppDef, Resource, SpecsError

__all__ = ["torchserve"]

DEFAULT_PORT = 8222


def torchserve(
    model_path: str,
    management_api: str,
    image: str = IMAGE,
    params: dict[str, str] | None = None,
    dryrun: bool = False,
    port: int = DEFAULT_PORT,
) -> AppDef:
    """Registers a model archive (.mar) with a running TorchServe's management API.

    A model at an http(s) URL is registered by that URL. Any other fsspec path is served
    for the duration of the upload by a small HTTP server in the app, on ``--port``, so
    TorchServe can fetch it. The app runs ``python -m torchx.apps.serve.serve``, which
    pytorch/torchx 0.7's image has too.

    Args:
        model_path: the .mar file: an http(s) URL or any fsspec path
        management_api: the management API's address, e.g. http://torchserve:8081
        params: registration parameters, e.g. initial_workers=1,synchronous=true
        dryrun: start the app but register nothing
        port: the port the model is served on when it is not at a URL (0: any free)
    """
    if not management_api.startswith(("http://", "https://")):
        raise SpecsError(
            "serve.torchserve --management_api", management_api, "expected an http(s) URL"
        )
    if not 0 <= port < 65536:
        raise SpecsError(
            "serve.torchserve --port", port, "expected a port from 0 (any free) to 65535"
        )
    args = ["-m", "torchx.apps.serve.serve", "--model_path", model_path]
    args += ["--management_api", management_api]
    if params:
        # The app takes only TorchServe's registration parameters: say so now, not
        # in the app's log once it is scheduled.
        from torchx.apps.serve.serve import TORCHSERVE_PARAMS

        for key, value in params.items():
            if key not in TORCHSERVE_PARAMS:
                raise SpecsError(
                    "serve.torchserve --params",
                    key,
                    f"expected one of {', '.join(TORCHSERVE_PARAMS)}",
                )
            args += [f"--{key}", str(value)]
    if port != DEFAULT_PORT:
        args += ["--port", str(port)]
    if dryrun:
        args.append("--dryrun")
    # The app's shape (names, resource, port name) is pytorch/torchx's, so tooling that
    # looks up the ``worker`` role of ``torchx-torchserve`` keeps working.
    return python_app(
        "torchx-torchserve",
        image,
        args,
        role_name="worker",
        size=Resource(cpu=1, gpu=0, memMB=1024),
        port_map={"model-download": port},
    )


fill_shared_arg_help(torchserve)
