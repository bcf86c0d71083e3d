"""A small client for the Docker Engine HTTP API, on the stdlib alone.

local_docker runs containers through this client rather than the Docker SDK because the
SDK's import (requests, urllib3, charset detection) costs more than a whole container
start on a local engine, and every ``torchx run/status/log -s local_docker`` pays it.
The SDK is still used to build workspace images (its ``.dockerignore`` rules).

The engine is found the way the docker CLI finds it: ``DOCKER_HOST``, else the context
named by ``DOCKER_CONTEXT`` or by ``currentContext`` in ``$DOCKER_CONFIG/config.json``,
else ``unix:///var/run/docker.sock``. ``unix://``, ``tcp://`` and ``https://`` hosts are
spoken to directly (TLS from ``DOCKER_TLS_VERIFY``/``DOCKER_CERT_PATH`` or the context's
certificates).

Paths carry no API version: the engine then answers with its own current version, which
avoids a negotiation round trip, and the fields torchx reads have been stable since
API 1.25.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from torchx.schedulers._errors import SchedulerError
from torchx.specs import SpecsError

DEFAULT_HOST = "unix:///var/run/docker.sock"
STDOUT, STDERR = 1, 2
_SSH_HINT = (
    "local_docker speaks to unix://, tcp:// and https:// engines; forward a remote "
    "engine's socket (ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST) and set "
    "DOCKER_HOST=unix:///tmp/docker.sock"
)


class EngineError(SchedulerError):
    """The engine refused a request; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str, what: str) -> None:
        super().__init__("local_docker", f"the Docker engine refused {what}: {message}")
        self.status = status
        self.message = message


class NotFound(EngineError):
    pass


class EngineUnreachable(SchedulerError):
    """No engine answers at the resolved address (a backend failure, not bad input)."""

    def __init__(self, source: str, host: str, needed: str) -> None:
        self.source = source
        self.host = host
        super().__init__(
            "local_docker",
            f"cannot use the Docker engine at {host} (from {source}); needed {needed}",
        )


@dataclass(frozen=True)
class TLSFiles:
    ca: str | None
    cert: str | None
    key: str | None
    verify: bool


@dataclass(frozen=True)
class Endpoint:
    """Where the engine listens and how to reach it; ``source`` says where that came from."""

    host: str
    tls: TLSFiles | None
    source: str


def config_dir(env: Mapping[str, str]) -> str:
    """Where the docker CLI keeps config.json, contexts and certificates."""
    return env.get("DOCKER_CONFIG") or os.path.join(os.path.expanduser("~"), ".docker")


def _context_endpoint(name: str, env: Mapping[str, str], source: str) -> Endpoint:
    import hashlib  # contexts only

    config = config_dir(env)
    digest = hashlib.sha256(name.encode()).hexdigest()
    meta = os.path.join(config, "contexts", "meta", digest, "meta.json")
    try:
        with open(meta) as f:
            docker = json.load(f)["Endpoints"]["docker"]
        host = str(docker["Host"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SpecsError(
            source,
            name,
            f"a Docker context this machine knows ({meta} is unreadable: {e}); "
            "`docker context ls` lists them, or set DOCKER_HOST",
        ) from None
    tls_dir = os.path.join(config, "contexts", "tls", digest, "docker")
    tls = None
    if os.path.isdir(tls_dir) or host.startswith("https://"):
        tls = _tls_files(tls_dir, verify=not docker.get("SkipTLSVerify", False))
    return Endpoint(host, tls, f"{source} {name!r}")


def _tls_files(folder: str, verify: bool) -> TLSFiles:
    """The docker CLI's file names in ``folder``; a missing file is left out."""

    def existing(name: str) -> str | None:
        path = os.path.join(folder, name)
        return path if os.path.isfile(path) else None

    return TLSFiles(existing("ca.pem"), existing("cert.pem"), existing("key.pem"), verify)


def resolve_endpoint(env: Mapping[str, str] | None = None) -> Endpoint:
    """The engine the docker CLI would talk to under ``env`` (default: ``os.environ``)."""
    env = os.environ if env is None else env
    host = env.get("DOCKER_HOST")
    if host:
        tls = None
        verify = env.get("DOCKER_TLS_VERIFY", "") not in ("", "0")
        if verify or host.startswith("https://"):
            certs = env.get("DOCKER_CERT_PATH") or config_dir(env)
            tls = _tls_files(certs, verify)
        return Endpoint(host, tls, "DOCKER_HOST")
    context = env.get("DOCKER_CONTEXT")
    if context:
        source = "DOCKER_CONTEXT"
    else:
        source = "the current Docker context"
        try:
            with open(os.path.join(config_dir(env), "config.json")) as f:
                context = json.load(f).get("currentContext")
        except (OSError, ValueError, AttributeError):
            context = None
    if context and context != "default":
        return _context_endpoint(context, env, source)
    return Endpoint(DEFAULT_HOST, None, "the default socket")


class _Connection:
    """One HTTP/1.1 connection. The stdlib's http.client is not used: its import (email,
    ssl) alone costs tens of milliseconds, a large share of a short ``torchx`` command."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")
        self.reusable = True

    def close(self) -> None:
        self.reusable = False
        self.reader.close()
        self.sock.close()

    def send(
        self,
        method: str,
        url: str,
        body: bytes | None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        head = f"{method} {url} HTTP/1.1\r\nHost: docker\r\nUser-Agent: torchx\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.sock.sendall(head.encode("latin-1") + b"\r\n" + (body or b""))

    def response(self, method: str) -> tuple[int, dict[str, str], Iterator[bytes]]:
        """Status, lower-cased headers, and the body as it arrives."""
        line = self.reader.readline(65537)
        if not line:
            raise ConnectionResetError("the engine closed the connection")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise ConnectionError(f"not an HTTP answer: {line[:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        while (line := self.reader.readline(65537)) not in (b"\r\n", b"\n", b""):
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        if headers.get("connection", "").lower() == "close":
            self.reusable = False
        return status, headers, self._body(method, status, headers)

    def _body(self, method: str, status: int, headers: Mapping[str, str]) -> Iterator[bytes]:
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                size = int(self.reader.readline(65537).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.reader.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return
                yield self._exact(size)
                self.reader.readline(65537)
        elif "content-length" in headers:
            left = int(headers["content-length"])
            while left > 0:
                chunk = self.reader.read1(min(left, 65536))
                if not chunk:
                    raise ConnectionResetError("the engine closed the connection mid-answer")
                left -= len(chunk)
                yield chunk
        else:
            self.reusable = False
            while chunk := self.reader.read1(65536):
                yield chunk

    def _exact(self, n: int) -> bytes:
        data = self.reader.read(n)
        if len(data) < n:
            raise ConnectionResetError("the engine closed the connection mid-answer")
        return data


class Engine:
    """Requests to one engine. Each thread keeps its own connection alive between requests."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.base_url = endpoint.host
        scheme, sep, rest = endpoint.host.partition("://")
        if not sep:
            scheme, rest = "tcp", endpoint.host
        self._scheme = scheme
        self._tls: TLSFiles | None = None
        if scheme == "unix":
            self._address = rest if rest.startswith("/") else "/" + rest
        elif scheme in ("tcp", "http", "https"):
            self._address = rest.split("/", 1)[0]
            if scheme == "https" or (scheme == "tcp" and endpoint.tls is not None):
                self._tls = endpoint.tls or TLSFiles(None, None, None, verify=True)
        else:
            raise SpecsError(endpoint.source, endpoint.host, _SSH_HINT)
        self._local = threading.local()

    @classmethod
    def from_env(cls, base_url: str | None = None) -> Engine:
        if base_url is None:
            return cls(resolve_endpoint())
        return cls(Endpoint(base_url, None, "base_url"))

    def _open(self, timeout: float | None) -> _Connection:
        try:
            if self._scheme == "unix":
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    sock.settimeout(timeout)
                    sock.connect(self._address)
                except OSError:
                    sock.close()
                    raise
            else:
                host, _, port = self._address.rpartition(":")
                if not host:
                    host, port = port, "2376" if self._tls else "2375"
                sock = socket.create_connection((host.strip("[]"), int(port)), timeout)
                if self._tls is not None:
                    sock = _wrap_tls(sock, self._tls, host.strip("[]"), self.endpoint)
        except (FileNotFoundError, ConnectionRefusedError, socket.gaierror) as e:
            raise EngineUnreachable(
                self.endpoint.source,
                self.base_url,
                f"a running Docker engine; connecting failed ({e}). Start dockerd, or point "
                "DOCKER_HOST at the engine you use",
            ) from None
        except PermissionError as e:
            raise EngineUnreachable(
                self.endpoint.source,
                self.base_url,
                f"a Docker socket this user may open ({e}); join the docker group or use "
                "rootless Docker's socket",
            ) from None
        return _Connection(sock)

    @staticmethod
    def _url(path: str, params: Mapping[str, Any] | None) -> str:
        flat = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        query = "&".join(f"{_quote(k)}={_quote(v)}" for k, v in flat.items())
        return f"{path}?{query}" if query else path

    def _exchange(
        self, method: str, url: str, body: bytes | None, timeout: float | None
    ) -> tuple[_Connection, int, dict[str, str], Iterator[bytes]]:
        kept: _Connection | None = getattr(self._local, "conn", None)
        self._local.conn = None
        if kept is not None and timeout is None:
            try:
                kept.send(method, url, body)
                return (kept, *kept.response(method))
            except (ConnectionError, OSError):
                # The engine dropped the idle connection: send again on a fresh one.
                kept.close()
        elif kept is not None:
            kept.close()
        conn = self._open(timeout)
        try:
            conn.send(method, url, body)
            return (conn, *conn.response(method))
        except BaseException:
            conn.close()
            raise

    def request(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> Any:
        """The decoded JSON answer (None for an empty one); EngineError if refused."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        conn, status, _headers, chunks = self._exchange(
            method, self._url(path, params), data, timeout
        )
        try:
            raw = b"".join(chunks)
        except BaseException:
            conn.close()
            raise
        if conn.reusable and timeout is None:
            self._local.conn = conn
        else:
            conn.close()
        if status == 400 and self._tls is None and b"HTTPS server" in raw:
            raise EngineUnreachable(
                self.endpoint.source,
                self.base_url,
                "an engine spoken to as it listens: this one wants TLS; set "
                "DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to the folder of its ca.pem and "
                "your cert.pem and key.pem",
            )
        _check(status, raw, f"{method} {path}")
        return json.loads(raw) if raw.strip() else None

    def stream(
        self, path: str, params: Mapping[str, Any] | None = None, tty: bool = False
    ) -> Iterator[tuple[int, bytes]]:
        """``(stream, chunk)`` pairs of a log, read as it arrives on a connection of its own.

        ``tty``: the container has a terminal, so its log is one stream without frames
        (older engines label both kinds alike, so the caller says which it is).
        """
        conn = self._open(None)
        try:
            conn.send("GET", self._url(path, params), None)
            status, _headers, chunks = conn.response("GET")
            if status >= 300:
                _check(status, b"".join(chunks), f"GET {path}")
            if tty:
                for chunk in chunks:
                    yield STDOUT, chunk
                return
            yield from _frames(chunks)
        finally:
            conn.close()

    def progress(
        self, path: str, params: Mapping[str, Any], headers: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """POST to a pull or push endpoint and read its JSON progress messages to the end.

        The engine answers 200 at once and reports a failure inside the stream, as a
        message with an ``error`` field; that field is returned, not raised.
        """
        conn = self._open(None)
        try:
            conn.send("POST", self._url(path, params), None, headers)
            status, _headers, chunks = conn.response("POST")
            raw = b"".join(chunks)
        finally:
            conn.close()
        _check(status, raw, f"POST {path}")
        decoder = json.JSONDecoder()
        text, at, out = raw.decode(errors="replace"), 0, []
        while at < len(text):
            if text[at].isspace():
                at += 1
                continue
            message, at = decoder.raw_decode(text, at)
            out.append(message)
        return out

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _frames(chunks: Iterator[bytes]) -> Iterator[tuple[int, bytes]]:
    """Split the engine's frames: stream id, 3 zero bytes, big-endian size, then the data."""
    buf = b""
    for chunk in chunks:
        buf += chunk
        while len(buf) >= 8:
            size = int.from_bytes(buf[4:8], "big")
            if len(buf) < 8 + size:
                break
            yield buf[0], buf[8 : 8 + size]
            buf = buf[8 + size :]


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _check(status: int, raw: bytes, what: str) -> None:
    if status < 300 or status == 304:
        return
    try:
        message = str(json.loads(raw).get("message", raw.decode(errors="replace")))
    except (ValueError, AttributeError):
        message = raw.decode(errors="replace").strip()
    raise (NotFound if status == 404 else EngineError)(status, message, what)


def _wrap_tls(sock: socket.socket, tls: TLSFiles, host: str, endpoint: Endpoint) -> socket.socket:
    import ssl  # only TLS engines pay for it

    try:
        ctx = ssl.create_default_context(cafile=tls.ca)
        if not tls.verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if tls.cert and tls.key:
            ctx.load_cert_chain(tls.cert, tls.key)
        return ctx.wrap_socket(sock, server_hostname=host)
    except (ssl.SSLError, ssl.CertificateError) as e:
        sock.close()
        raise EngineUnreachable(
            endpoint.source,
            endpoint.host,
            f"an engine whose TLS certificates check out; the handshake failed ({e}). "
            "DOCKER_CERT_PATH (default ~/.docker) should hold the engine's ca.pem and "
            "this client's cert.pem and key.pem",
        ) from None


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _quote(text: str) -> str:
    """Percent-encode all but RFC 3986's unreserved characters (urllib.parse costs ms)."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode())


def path_quote(name: str) -> str:
    """A container, image or network name as one URL path segment."""
    return _quote(name)
