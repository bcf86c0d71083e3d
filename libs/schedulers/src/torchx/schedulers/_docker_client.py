"""The Docker SDK client that local_docker talks to, and its failures as one-line errors.

The engine is found the way the docker CLI finds it: ``DOCKER_HOST`` (with
``DOCKER_TLS_VERIFY`` and ``DOCKER_CERT_PATH``), else the context named by
``DOCKER_CONTEXT`` or by ``currentContext`` in the docker config (read through the SDK's
context support), else the default socket. ``ssh://`` hosts go through the SDK's ssh
transport, which runs the ``ssh`` program as the docker CLI does, so ``~/.ssh/config``,
agents and known hosts apply.

The SDK is imported here and only here, when an engine is about to be contacted.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from torchx.schedulers._errors import SchedulerError, require
from torchx.specs import SpecsError

BACKEND = "local_docker"
EXTRA = "docker"
DEFAULT_HOST = "unix:///var/run/docker.sock"


@dataclass(frozen=True)
class EngineAddress:
    """Where the engine listens; ``source`` names the setting it came from (for errors)."""

    base_url: str
    source: str
    tls: Any = None  # docker.tls.TLSConfig, or None for plain connections

    @property
    def over_ssh(self) -> bool:
        return self.base_url.startswith("ssh://")


def sdk() -> Any:
    """The ``docker`` module, or an error naming the extra that installs it."""
    return require("docker", scheduler=BACKEND, extra=EXTRA)


def resolve_engine(base_url: str | None = None) -> EngineAddress:
    """The engine ``base_url`` names, else the one the docker CLI would talk to."""
    if base_url:
        return EngineAddress(base_url, "base_url")
    docker = sdk()
    if os.environ.get("DOCKER_HOST"):
        try:
            found = docker.utils.kwargs_from_env()
        except docker.errors.TLSParameterError as e:
            folder = os.environ.get("DOCKER_CERT_PATH") or "~/.docker"
            raise SpecsError(
                "DOCKER_CERT_PATH",
                folder,
                f"a folder holding this client's cert.pem and key.pem and the engine's ca.pem "
                f"({e}); point DOCKER_CERT_PATH at it, or unset DOCKER_TLS_VERIFY for an "
                "engine without TLS",
            ) from None
        return EngineAddress(str(found["base_url"]), "DOCKER_HOST", found.get("tls"))
    name = os.environ.get("DOCKER_CONTEXT")
    source = "DOCKER_CONTEXT"
    if not name:
        name = docker.context.config.get_current_context_name()
        source = "the current Docker context"
    if not name or name == "default":
        return EngineAddress(DEFAULT_HOST, "the default socket")
    try:
        context = docker.context.ContextAPI.get_context(name)
    except Exception as e:  # the SDK raises a bare Exception for a corrupt meta.json
        raise SpecsError(
            source, name, f"a readable Docker context ({e}); `docker context ls` lists them"
        ) from None
    if context is None or not context.Host:
        raise SpecsError(
            source,
            name,
            "a Docker context this machine knows; `docker context ls` lists them, "
            "`docker context use default` goes back to the default socket, or set DOCKER_HOST",
        )
    return EngineAddress(str(context.Host), f"{source} {name!r}", context.TLSConfig)


def connect(address: EngineAddress, owner: str = BACKEND) -> Any:
    """A ``docker.DockerClient`` for ``address``; it asks the engine its API version once.
    Errors name ``owner``, the scheduler that needed the engine."""
    docker = sdk()
    options: dict[str, Any] = {
        "base_url": address.base_url,
        "tls": address.tls or False,
        # The ssh program, as the docker CLI uses it: the user's ssh config applies.
        "use_ssh_client": address.over_ssh,
    }
    try:
        if address.tls is None or not address.tls.ca_cert:
            return docker.DockerClient(**options)
        # requests lets REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE replace a session's own CA, and
        # the engine's CA must apply: these clients do not read the environment. The first
        # one only asks the engine's API version, which the SDK would otherwise ask itself.
        probe = docker.APIClient(version=docker.constants.MINIMUM_DOCKER_API_VERSION, **options)
        probe.trust_env = False
        try:
            version = probe.version(api_version=False)["ApiVersion"]
        finally:
            probe.close()
        client = docker.DockerClient(version=version, **options)
        client.api.trust_env = False
        return client
    except Exception as e:
        raise explain(address, e, owner) from None


def explain(address: EngineAddress, error: BaseException, owner: str = BACKEND) -> BaseException:
    """``error`` from talking to the engine, as a one-line SchedulerError naming the engine,
    the setting it came from and what to change.

    Errors the engine itself sent (a refused request, a missing image) and anything not
    recognised are returned unchanged.
    """
    import ssl

    found = list(_causes(error))
    text = " ".join(str(e) for e in found)

    def failed(what: str, fix: str) -> SchedulerError:
        where = f"the Docker engine at {address.base_url} (from {address.source})"
        return SchedulerError(owner, f"{where}: {what}", fix)

    if "paramiko" in text and address.over_ssh:
        return failed(
            "the Docker SDK's ssh transport needs paramiko, which is not installed",
            'pip install "docker[ssh]", or forward the engine\'s socket '
            "(ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST) and set "
            "DOCKER_HOST=unix:///tmp/docker.sock",
        )
    if text.startswith("Invalid bind address"):
        # The SDK's parser of DOCKER_HOST-style addresses; its own words say what is wrong.
        return failed(
            f"not an address the Docker client reads ({one_line(found[0])})",
            f"set {address.source} to unix:///PATH/docker.sock, tcp://HOST:PORT or "
            "ssh://[USER@]HOST",
        )
    # An engine that speaks TLS answers plain HTTP with a 400 that says so: before the
    # check below, which takes any HTTP answer to /version for a server that is no engine.
    if "HTTPS server" in text:
        return failed("it speaks TLS, and it was spoken to in plain HTTP", _tls_fix(address))
    status = next((s for s in map(_http_status, found) if s), None)
    if "fetching server API version" in text and status is not None:
        # Something answers HTTP there, but not as an engine: a wrong port or host.
        return failed(
            f"it is not a Docker engine (HTTP {status} on /version)", _unreachable_fix(address)
        )
    tls_error = next((e for e in found if isinstance(e, ssl.SSLError)), None)
    if tls_error is not None:
        return failed(f"the TLS handshake failed ({one_line(tls_error)})", _tls_fix(address))
    if any(isinstance(e, PermissionError) for e in found):
        return failed(
            "this user may not open its socket (permission denied)",
            "join the docker group, or point DOCKER_HOST at rootless Docker's socket",
        )
    refused = (FileNotFoundError, ConnectionRefusedError, ConnectionResetError)
    reason: BaseException | None = next((e for e in found if isinstance(e, refused)), None)
    if reason is None and _is_connection_failure(found):
        reason = found[-1]
    if reason is not None:
        if address.over_ssh:
            fix = (
                "check that `ssh` reaches the host and that docker runs there "
                "(`ssh HOST docker version`), or change DOCKER_HOST"
            )
        else:
            fix = _unreachable_fix(address)
        return failed(f"connecting failed ({one_line(reason)})", fix)
    return error


# runc's words for an entrypoint the image lacks: exec: "bash": executable file not found
_MISSING_EXECUTABLE = re.compile(
    r'exec: "([^"]+)": (?:executable file not found|stat [^:]+: no such file)'
)


@contextlib.contextmanager
def refusal_named(container: str, owner: str = BACKEND) -> Iterator[None]:
    """The engine's refusal to create or start ``container`` (a bind mount whose source it
    lacks, a device, a GPU without its runtime, an option it rejects) as one line naming the
    container, in the engine's words, rather than the SDK's HTTP error with the request's URL."""
    try:
        yield
    except Exception as e:
        if not isinstance(e, sdk().errors.APIError):
            raise
        said = str(e.explanation or e)
        missing = _MISSING_EXECUTABLE.search(said)
        if missing is not None:
            fix = (
                f"the image has no {missing.group(1)!r}: use an image that has it, or a "
                "role entrypoint the image has"
            )
        else:
            fix = (
                "fix the role's mounts, devices or resources it names "
                "(torchx run --dryrun shows the request)"
            )
        raise SchedulerError(
            owner, f"the Docker engine refused container {container}: {said}", fix
        ) from None


def _http_status(error: BaseException) -> int | None:
    """The HTTP status of a response ``error`` carries (requests' HTTPError), if any."""
    code = getattr(getattr(error, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def _unreachable_fix(address: EngineAddress) -> str:
    if address.source == "base_url":
        return "start dockerd, or give the scheduler the address of a running engine"
    if address.source == "DOCKER_HOST":
        return "start dockerd, or point DOCKER_HOST at the engine you use"
    if address.source == "the default socket":
        return "start dockerd, or set DOCKER_HOST or a Docker context for another engine"
    return "start that context's engine, or choose another with `docker context use`"


def _tls_fix(address: EngineAddress) -> str:
    if address.source == "DOCKER_HOST":
        return (
            "set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (default ~/.docker) to the folder "
            "of the engine's ca.pem and this client's cert.pem and key.pem"
        )
    if address.source == "base_url":
        return "set DOCKER_HOST with DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH instead of base_url"
    return (
        "recreate the context with the engine's certificates "
        "(docker context create NAME --docker host=...,ca=...,cert=...,key=...)"
    )


def _causes(error: BaseException) -> Iterator[BaseException]:
    """``error`` and every exception it wraps (causes, contexts, and those in its args)."""
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        inner = [e.__cause__, e.__context__, getattr(e, "reason", None), *e.args]
        todo.extend(x for x in inner if isinstance(x, BaseException))


def _is_connection_failure(found: list[BaseException]) -> bool:
    names = {type(e).__name__ for e in found}
    return bool(
        names & {"ConnectionError", "NewConnectionError", "MaxRetryError", "ProtocolError"}
    ) or any(isinstance(e, OSError) and e.errno is not None for e in found)


def one_line(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return " ".join(text.split())
