"""Serving components."""

from __future__ import annotations

from torchx.components._common import IMAGE
from torchx.specs import AppDef, Resource, Role, SpecsError

DEFAULT_PORT = 8222


def torchserve(
    model_path: str,
    management_api: str,
    image: str = IMAGE,
    params: dict[str, str] | None = None,
    port: int = DEFAULT_PORT,
    dryrun: bool = False,
) -> AppDef:
    """Registers a model archive (.mar) with a running TorchServe's management API.

    A model at an http(s) URL is registered by that URL. Any other fsspec path is served
    for the duration of the upload by a small HTTP server in the app, on ``--port``, so
    TorchServe can fetch it.

    Args:
        model_path: the .mar file: an http(s) URL or any fsspec path
        management_api: the management API's address, e.g. http://torchserve:8081
        image: the image to run in
        params: registration parameters, e.g. initial_workers=1,synchronous=true
        port: the port the model is served on when it is not at a URL (0: any free)
        dryrun: print the registration request instead of sending it
    """
    if not management_api.startswith(("http://", "https://")):
        raise SpecsError(
            "serve.torchserve --management_api", management_api, "expected an http(s) URL"
        )
    if not 0 <= port < 65536:
        raise SpecsError(
            "serve.torchserve --port", port, "expected a port from 0 (any free) to 65535"
        )
    args = [
        "-m",
        "torchx.components._torchserve_upload",
        "--model_path",
        model_path,
        "--management_api",
        management_api,
        "--port",
        str(port),
    ]
    for key, value in (params or {}).items():
        args += ["--param", f"{key}={value}"]
    if dryrun:
        args.append("--dryrun")
    # The app's shape (names, resource, port name) is pytorch/torchx's, so tooling that
    # looks up the ``worker`` role of ``torchx-torchserve`` keeps working.
    return AppDef(
        name="torchx-torchserve",
        roles=[
            Role(
                name="worker",
                image=image,
                entrypoint="python",
                args=args,
                port_map={"model-download": port},
                resource=Resource(cpu=1, gpu=0, memMB=1024),
            )
        ],
    )
