"""Python functions as apps: ``Executor(scheduler=...).submit(fn, *args).result()``.

A call travels through a folder (the *transport*: a local path or any fsspec URL): the
executor writes the pickled call there, submits the builtin component ``function.call``
that runs it (``python -m torchx.runtime.function FOLDER``), and its futures read each
rank's outcome back. The pickling and the job's side live in torchx-runtime-function
(``pip install "torchx-runner[function]"``), which the job's image needs too.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from torchx.runner._call_lease import unheld
from torchx.runner._executor_apps import SubmittedApps, statuses_in_batches
from torchx.runner._executor_apps import is_a_stop as _is_a_stop
from torchx.runner._executor_apps import report as _report
from torchx.runner._function_future import FunctionFuture
from torchx.schedulers import DEFAULT_SCHEDULER
from torchx.specs import (
    AppHandle,
    CfgVal,
    Resource,
    SpecsError,
    UnknownAppException,
    parse_app_handle,
)

if TYPE_CHECKING:
    from torchx.runner._runner import Runner
    from torchx.runtime.function import Store

# Schedulers whose replicas run on this machine or share its file system (a Slurm cluster's
# home and work folders): a local transport folder reaches them as it is.
SHARED_FOLDER_SCHEDULERS = frozenset({"local_cwd", "local_dir", "slurm"})
# Schedulers whose containers run on this machine: a local folder is bind-mounted into them
# at the same path.
MOUNTED_FOLDER_SCHEDULERS = frozenset({"local_docker"})
# Whose jobs run this Python: the job uses the launcher's interpreter (and its packages).
SAME_PYTHON_SCHEDULERS = frozenset({"local_cwd", "local_dir", "slurm"})
POINTER_VERSION = 1
# The builtin component a function call runs as.
FUNCTION_COMPONENT = "function.call"
# The most items of one ``map`` submitted as one sweep (one Slurm array job); Slurm's
# default MaxArraySize (1001) takes task ids 0 to 1000.
MAP_SWEEP_ITEMS = 1000
# The largest handle pointer read: one names a call's URL and its role.
MAX_POINTER_BYTES = 64 * 1024
# Every future an executor of this process made (submitted or rebuilt) that is still
# referenced: remove_ended_calls keeps the calls whose outcome one of them may still give.
_issued: weakref.WeakSet[FunctionFuture] = weakref.WeakSet()
_issued_lock = threading.Lock()


class CallNotPicklableError(TypeError):
    """The function, or an argument, cannot be pickled for the job; the message says what."""


def default_transport() -> str:
    """``functions`` in the local scheduler's state folder (``$XDG_STATE_HOME/torchx``,
    else ``~/.local/state/torchx``; a relative ``XDG_STATE_HOME`` is ignored)."""
    from torchx.schedulers.local_scheduler import default_state_dir

    return str(default_state_dir() / "functions")


def _runtime() -> Any:
    try:
        import torchx.runtime.function as runtime
    except ModuleNotFoundError as e:
        if e.name not in ("torchx.runtime.function", "cloudpickle", "fsspec"):
            raise
        raise ModuleNotFoundError(
            f"torchx.runner.Executor needs torchx-runtime-function ({e.name} is missing); "
            'pip install "torchx-runner[function]"',
            name=e.name,
        ) from None
    return runtime


def _is_loopback(address: str) -> bool:
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


def _reaches_local_folders(scheduler: str, cfg: Mapping[str, CfgVal]) -> bool:
    if scheduler in SHARED_FOLDER_SCHEDULERS or scheduler in MOUNTED_FOLDER_SCHEDULERS:
        return True
    if scheduler == "ray":
        address = cfg.get("address") or os.environ.get("RAY_ADDRESS", "")
        return isinstance(address, str) and _is_loopback(address)
    return False


class _FutureLookup:
    """``Executor.future(handle)`` on the class (default transport) or on an executor."""

    def __get__(
        self, executor: Executor | None, owner: type[Executor]
    ) -> Callable[..., FunctionFuture]:
        if executor is not None:
            return executor._future_of

        def future(handle: AppHandle, transport: str | None = None) -> FunctionFuture:
            """The future of the call submitted as app ``handle`` (from any process)."""
            scheduler = parse_app_handle(handle)[0]
            return owner(scheduler=scheduler, transport=transport)._future_of(handle)

        return future


class Executor:
    """Runs Python functions as torchx apps on any scheduler; ``concurrent.futures`` style.

    ``submit(fn, *args, **kwargs)`` writes the call into a private folder under
    ``transport``, submits the builtin component ``function.call`` and returns a
    ``FunctionFuture`` whose ``result()`` is the function's return value::

        from torchx.runner import Executor

        with Executor(scheduler="local_cwd") as ex:
            assert ex.submit(pow, 2, 10).result() == 1024

    The executor holds each app it submitted until the app ended (``shutdown`` waits for
    it, Ctrl-C in its ``with`` block cancels it), but not its future: a future you drop
    goes, with the result it holds, and its call is one ``remove_ended_calls()`` removes.

    Args:
        scheduler: where the apps run (any registered scheduler)
        cfg: the scheduler's run options (``.torchxconfig`` supplies the rest)
        resource: each node's resource: a ``Resource`` or a named one (``"cpu.small"``)
        transport: the folder calls and outcomes travel through: a local path for
            local_cwd, local_dir and slurm (a shared file system) and local_docker (mounted
            into the containers), any fsspec URL every node reaches for the others.
            Default ``$XDG_STATE_HOME/torchx/functions`` where a local folder reaches the
            job. A result file runs code when it is read: it must live where only you can
            write (local folders are made 0700, their files 0600, and checked on read).
        image: the image the job runs in (local schedulers: its working directory)
        num_replicas: nodes that run the function; with ``nproc_per_node`` > 1 or several
            nodes, every rank runs it under torchrun
        nproc_per_node: processes per node
        env: extra environment variables of the job
        mounts: extra docker-style mounts (``type=bind,src=/data,dst=/data``)
        python: the job's interpreter (default: this one on local schedulers and slurm,
            ``python`` elsewhere)
        max_in_flight: how many apps (or a sweep's trials) ``map`` keeps running at once
        name: the app name
        runner: the Runner to submit with (default: ``get_runner()``)
        poll_interval: seconds between status checks of the app (its outcome files are
            looked at more often)
        rdzv_port: the rendezvous port on the first node when there are several nodes
        max_result_bytes: the largest pickled result (or exception) a call may send back
            (default ``DEFAULT_MAX_RESULT_BYTES``, 1 GiB): a larger result fails the call
            with ``ResultTooLargeError`` naming its size, and is never written nor read
        keep_calls: keep each call's folder after its future gave every rank's outcome
            (by default it is removed then; ``remove_ended_calls()`` removes the rest)
    """

    future = _FutureLookup()

    def __init__(
        self,
        scheduler: str = DEFAULT_SCHEDULER,
        cfg: Mapping[str, CfgVal] | None = None,
        resource: Resource | str | None = None,
        *,
        transport: str | None = None,
        image: str | None = None,
        num_replicas: int = 1,
        nproc_per_node: int = 1,
        env: Mapping[str, str] | None = None,
        mounts: Sequence[str] | None = None,
        python: str | None = None,
        max_in_flight: int = 16,
        name: str = "function",
        runner: Runner | None = None,
        poll_interval: float = 1.0,
        rdzv_port: int = 29500,
        max_result_bytes: int | None = None,
        keep_calls: bool = False,
    ) -> None:
        from torchx.runner._runner import get_runner

        for field, value in (
            ("num_replicas", num_replicas),
            ("nproc_per_node", nproc_per_node),
            ("max_in_flight", max_in_flight),
        ):
            if not isinstance(value, int) or value < 1:
                raise SpecsError(f"Executor {field}", value, "expected an int of 1 or more")
        if poll_interval <= 0:
            raise SpecsError("Executor poll_interval", poll_interval, "expected seconds > 0")
        runtime = _runtime()
        if max_result_bytes is None:
            max_result_bytes = runtime.DEFAULT_MAX_RESULT_BYTES
        try:
            runtime.check_result_limit(max_result_bytes)
        except ValueError:
            raise SpecsError(
                "Executor max_result_bytes", max_result_bytes, runtime.RESULT_LIMIT_FIX
            ) from None
        for option, mapping, example in (
            ("cfg", cfg, "{'log_dir': '/tmp/logs'}"),
            ("env", env, "{'LOGLEVEL': 'INFO'}"),
        ):
            if mapping is not None and not isinstance(mapping, Mapping):
                raise SpecsError(f"Executor {option}", mapping, f"give a dict, e.g. {example}")
        if resource is not None and not isinstance(resource, Resource | str):
            raise SpecsError(
                "Executor resource",
                resource,
                "give a Resource or a named resource such as 'cpu.small'",
            )
        if isinstance(mounts, str):
            raise SpecsError("Executor mounts", mounts, f"give a list of mounts, e.g. [{mounts!r}]")
        self._runner = runner if runner is not None else get_runner()
        self._own_runner = runner is None
        if not self._runner.has_scheduler(scheduler):
            from torchx.specs import closest

            known = self._runner.scheduler_backends()
            raise SpecsError("Executor scheduler", scheduler, closest(scheduler, known))
        self.scheduler = scheduler
        self.cfg: dict[str, CfgVal] = dict(cfg or {})
        self.transport = self._check_transport(transport)
        self.resource = resource
        self.image = image
        self.num_replicas = num_replicas
        self.nproc_per_node = nproc_per_node
        self.env = dict(env or {})
        self.mounts = list(mounts or [])
        if python is None:
            python = sys.executable if scheduler in SAME_PYTHON_SCHEDULERS else "python"
        self.python = python
        self.max_in_flight = max_in_flight
        self.name = name
        self.poll_interval = poll_interval
        self.rdzv_port = rdzv_port
        self.max_result_bytes: int = max_result_bytes
        self.keep_calls = keep_calls
        # the apps it may still have to wait for or stop; not their futures (see there)
        self._apps = SubmittedApps(self._runner)
        self._shutdown = False
        self._folders_made = False

    def _check_transport(self, transport: str | None) -> str:
        runtime = _runtime()
        reaches_local = _reaches_local_folders(self.scheduler, self.cfg)
        if transport is None:
            if not reaches_local:
                raise SpecsError(
                    "Executor transport",
                    None,
                    f"{self.scheduler}'s nodes do not see this machine's folders; give a URL "
                    "they all reach, e.g. transport='s3://bucket/torchx-functions'",
                )
            transport = default_transport()
        if transport.startswith("memory://"):
            raise SpecsError(
                "Executor transport",
                transport,
                "memory:// lives inside this process, where no job can reach it; give a "
                "folder or a URL the job's nodes reach",
            )
        if not runtime.is_local(transport):
            try:  # an unknown protocol, or one whose fsspec package is missing
                runtime.Store(transport)
            except (ValueError, ImportError) as e:
                raise SpecsError(
                    "Executor transport",
                    transport,
                    f"{e}; give a local folder or an fsspec URL every node reaches (s3://...)",
                ) from None
        if runtime.is_local(transport):
            if not reaches_local:
                raise SpecsError(
                    "Executor transport",
                    transport,
                    f"a local folder that {self.scheduler}'s nodes cannot reach; give a URL "
                    "they all reach, e.g. transport='s3://bucket/torchx-functions'",
                )
            path = transport[len("file://") :] if transport.startswith("file://") else transport
            transport = os.path.abspath(os.path.expanduser(path))
        return transport

    # -- submitting ---------------------------------------------------------------------

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        # Ctrl-C (and SIGTERM, which the local scheduler raises as SignalException) stops
        # the apps, as it stops a local pool's workers and a waiting `torchx run`; waiting
        # for them here would hold the stopped program until its longest app ended.
        if exc_type is not None and _is_a_stop(exc_type):
            self._stop_all(exc_type)
        else:
            self.shutdown(wait=True)

    def _stop_all(self, stop: type[BaseException]) -> None:
        """Cancel every app (``SubmittedApps.stop_all``) and close an owned runner, whatever
        fails on the way: ``stop`` (Ctrl-C, SIGTERM) propagates."""
        self._shutdown = True
        try:
            self._apps.stop_all(stop)
        finally:
            if self._own_runner:
                try:
                    self._runner.close()
                except Exception as e:
                    _report(
                        f"on {stop.__name__}, could not close the runner ({type(e).__name__}: {e})"
                    )

    def _store(self, *names: str) -> Store:
        store: Store = _runtime().Store("/".join([self.transport.rstrip("/"), *names]))
        return store

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> FunctionFuture:
        """Run ``fn(*args, **kwargs)`` as an app; its future at once."""
        if self._shutdown:
            raise RuntimeError("this Executor was shut down; make a new one to submit more")
        if not callable(fn):
            raise SpecsError("submit fn", fn, "give a function (or another callable)")
        call = self._write_call(fn, args, kwargs)
        try:
            handle = self._runner.run(self._app(call.url), self.scheduler, self.cfg)
        except BaseException:
            _discard([call])
            raise
        future = self._future_for(handle, call)
        self._apps.add([future])
        return future

    def _future_for(self, handle: AppHandle, call: Store) -> FunctionFuture:
        """The future of ``call`` submitted as ``handle``, findable later by its handle."""
        pointer = {"version": POINTER_VERSION, "call": call.url, "role": self.name}
        self._store("handles").write(_pointer_name(handle), json.dumps(pointer).encode())
        world_size = self.num_replicas * self.nproc_per_node
        return self._issue(
            FunctionFuture(
                self._runner,
                handle,
                call,
                world_size,
                self.name,
                self.poll_interval,
                self.max_result_bytes,
                self._removal(handle, call),
            )
        )

    def _issue(self, future: FunctionFuture) -> FunctionFuture:
        with _issued_lock:
            _issued.add(future)
        return future

    def _removal(self, handle: AppHandle, call: Store) -> Callable[[], None] | None:
        """What removes the call's files once its future holds every outcome (None with
        ``keep_calls``): the folder first, then the pointer, so that an interrupted removal
        leaves a pointer ``remove_ended_calls`` still finds."""
        if self.keep_calls:
            return None

        def remove() -> None:
            # the outcomes are in memory already: a folder left behind costs disk, not the
            # result, and remove_ended_calls() takes it later
            try:
                self._remove_call(call, _pointer_name(handle))
            except OSError as e:
                _report(f"could not remove {call.url} ({e}); remove_ended_calls() retries")

        return remove

    def _remove_call(self, call: Store | None, pointer: str) -> None:
        """Remove the call's folder (when given), then its pointer: a removal cut short
        leaves a pointer ``remove_ended_calls`` still finds. OSError when the folder stays."""
        if call is not None:
            call.remove_tree("")
        self._store("handles").remove(pointer)

    def _write_call(
        self, fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> Store:
        """Pickle ``fn(*args, **kwargs)`` into a new private folder under the transport."""
        import uuid

        runtime = _runtime()
        what = getattr(fn, "__qualname__", None) or repr(fn)
        try:
            payload = runtime.dumps_call(fn, args, kwargs)
        except Exception as e:
            raise CallNotPicklableError(
                f"submit({what}): the call cannot be pickled for the job ({e}); pass what the "
                "function needs as arguments it can pickle, or create the object inside it"
            ) from None
        world_size = self.num_replicas * self.nproc_per_node
        call_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:12]}"
        call = self._store("calls", call_id)
        if not self._folders_made:
            for sub in ((), ("calls",), ("handles",)):
                try:
                    self._store(*sub).make_folder()
                except OSError as e:
                    raise SpecsError(
                        "Executor transport",
                        self.transport,
                        f"its folder cannot be made ({e.strerror or e}); give a folder you "
                        "can write to",
                    ) from None
                if not sub and runtime.is_local(self.transport):
                    # before calls/ and handles/ are made: a refused folder stays as it was
                    try:  # a folder others may write to could hand this process pickles
                        runtime.check_private(self._store("calls").path(""))
                    except runtime.UntrustedFileError as e:
                        raise SpecsError("Executor transport", self.transport, str(e)) from None
            self._folders_made = True
        runtime.write_call(call, payload, world_size, self.max_result_bytes)
        return call

    def _app(self, url: str) -> Any:
        from torchx.components.function import IMAGE, call

        mounts = list(self.mounts)
        if self.scheduler in MOUNTED_FOLDER_SCHEDULERS and _runtime().is_local(self.transport):
            mounts.append(f"type=bind,src={self.transport},dst={self.transport}")
        image = self.image
        if image is None and self.scheduler == "local_dir":
            image = os.getcwd()
        named = self.resource if isinstance(self.resource, str) else None
        app = call(
            url,
            python=self.python,
            image=image if image is not None else IMAGE,
            name=self.name,
            num_replicas=self.num_replicas,
            nproc_per_node=self.nproc_per_node,
            h=named,
            env=self.env,
            mounts=mounts,
            rdzv_port=self.rdzv_port,
        )
        if isinstance(self.resource, Resource):
            for role in app.roles:
                role.resource = self.resource
        return app

    def map(
        self, fn: Callable[..., Any], *iterables: Iterable[Any], timeout: float | None = None
    ) -> Iterator[Any]:
        """``fn`` over the items, results in order; at most ``max_in_flight`` run at once.

        On a scheduler with job arrays (Slurm) the items run as one sweep of the
        ``function.call`` component, one trial per item, so up to ``MAP_SWEEP_ITEMS`` items
        are ONE array job; longer iterables are cut into sweeps of that many, the next
        submitted when the results of the one before are first taken (memory stays bounded
        by two sweeps). Elsewhere, and for a single item, each item is its own app: the
        first ``max_in_flight`` are submitted now, the rest as results are taken.

        Either way bad input fails here, and closing the iterator early cancels what is
        still running (the sweep's remaining trials).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        items: Iterator[tuple[Any, ...]] = zip(*iterables, strict=False)
        base_args = self._sweep_args()
        if base_args is not None:
            first = list(itertools.islice(items, MAP_SWEEP_ITEMS))
            if len(first) > 1:
                chunk = self._submit_sweep(fn, first, base_args)
                return self._sweep_results_in_order(fn, items, chunk, base_args, deadline)
            items = iter(first)
        window: deque[FunctionFuture] = deque(
            self.submit(fn, *args) for args in itertools.islice(items, self.max_in_flight)
        )
        return self._results_in_order(fn, items, window, deadline)

    def _sweep_args(self) -> list[str] | None:
        """The ``function.call`` arguments every trial of a map's sweep shares, or None
        where a sweep would not help (no job arrays) or could not say what ``submit`` does
        (a Resource with capabilities, mounts, env values with commas)."""
        from torchx.runner._sweeps import ARRAY_BACKENDS

        if self._shutdown or self._runner._scheduler(self.scheduler).backend not in ARRAY_BACKENDS:
            return None
        args = [
            f"--python={self.python}",
            f"--name={self.name}",
            f"--num_replicas={self.num_replicas}",
            f"--nproc_per_node={self.nproc_per_node}",
            f"--rdzv_port={self.rdzv_port}",
        ]
        if self.image is not None:
            args.append(f"--image={self.image}")
        if isinstance(self.resource, str):
            args.append(f"--h={self.resource}")
        elif isinstance(self.resource, Resource):
            r = self.resource
            if r.capabilities or r.devices:
                return None
            args += [f"--cpu={r.cpu}", f"--gpu={r.gpu}", f"--memMB={r.memMB}"]
        if self.mounts or any("," in k + v or "=" in k for k, v in self.env.items()):
            return None
        if self.env:
            args.append("--env=" + ",".join(f"{k}={v}" for k, v in self.env.items()))
        # The trials must be exactly the app ``submit`` makes; where config defaults for
        # the component (or anything else) make them differ, each item is its own app.
        probe = "/probe"
        try:
            trial = self._runner.component_app(FUNCTION_COMPONENT, [*args, f"--url={probe}"])
        except SpecsError:
            return None
        return args if trial == self._app(probe) else None

    def _submit_sweep(
        self, fn: Callable[..., Any], items: list[tuple[Any, ...]], base_args: list[str]
    ) -> tuple[AppHandle, deque[FunctionFuture]]:
        """Write each item's call to its own folder and submit them as one sweep."""
        from torchx.runner._sweep import Sweep
        from torchx.runner._sweeps import record_of, trial_handle

        if self._shutdown:
            raise RuntimeError("this Executor was shut down; make a new one to submit more")
        calls: list[Store] = []
        try:
            for args in items:
                calls.append(self._write_call(fn, args, {}))
            sweep = Sweep.of(
                FUNCTION_COMPONENT,
                [{"url": call.url} for call in calls],
                base_args,
                parallel=self.max_in_flight,
            )
            handle = self._runner.run_sweep(sweep, self.scheduler, self.cfg)
        except BaseException:
            _discard(calls)
            raise
        record = record_of(handle)
        futures: deque[FunctionFuture] = deque()
        for index, call in enumerate(calls):
            trial = trial_handle(record, index)
            assert trial is not None, "an array sweep names every trial's task on submit"
            futures.append(self._future_for(trial, call))
        self._apps.add(futures)
        return handle, futures

    def _sweep_results_in_order(
        self,
        fn: Callable[..., Any],
        items: Iterator[tuple[Any, ...]],
        first: tuple[AppHandle, deque[FunctionFuture]],
        base_args: list[str],
        deadline: float | None,
    ) -> Iterator[Any]:
        chunks = deque([first])
        try:
            while chunks:
                _, futures = chunks[0]
                if len(chunks) == 1:
                    following = list(itertools.islice(items, MAP_SWEEP_ITEMS))
                    if following:
                        chunks.append(self._submit_sweep(fn, following, base_args))
                while futures:
                    left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                    value = futures[0].result(left)
                    futures.popleft()
                    yield value
                chunks.popleft()
        finally:
            for handle, futures in chunks:
                if futures:
                    self._runner.cancel_sweep(handle)
                    for future in futures:
                        future._ended_with_its_sweep()

    def _results_in_order(
        self,
        fn: Callable[..., Any],
        items: Iterator[tuple[Any, ...]],
        window: deque[FunctionFuture],
        deadline: float | None,
    ) -> Iterator[Any]:
        try:
            while window:
                left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                value = window[0].result(left)
                window.popleft()
                following = next(items, None)
                if following is not None:
                    window.append(self.submit(fn, *following))
                yield value
        finally:
            for future in window:
                future.cancel()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Submit no more; ``cancel_futures`` stops the apps still running, ``wait`` waits
        for the others to end."""
        self._shutdown = True
        if cancel_futures:
            for handle, future in self._apps.held():
                self._apps.cancel(handle, future)
        if wait:
            self._apps.wait(self.poll_interval)
        if self._own_runner:
            self._runner.close()

    # -- by handle ----------------------------------------------------------------------

    def _future_of(self, handle: AppHandle) -> FunctionFuture:
        runtime = _runtime()
        handles = self._store("handles")
        try:
            pointer = _read_pointer(handles, _pointer_name(handle))
        except FileNotFoundError:
            raise UnknownAppException(
                handle,
                f"no function call of this app is under {self.transport}: give "
                "Executor(transport=...) the folder it was submitted with; a call is removed "
                "once a future gave its result (Executor(keep_calls=True) keeps it)",
            ) from None
        except ValueError as e:
            raise UnknownAppException(handle, str(e)) from None
        call = runtime.Store(pointer["call"])
        meta = runtime.read_call_meta(call)
        return self._issue(
            FunctionFuture(
                self._runner,
                handle,
                call,
                int(meta["world_size"]),
                str(pointer.get("role", self.name)),
                self.poll_interval,
                runtime.result_limit(meta),
                self._removal(handle, call),
            )
        )

    def remove_ended_calls(self) -> int:
        """Remove this transport's calls whose apps ended, or that their schedulers no
        longer know; the number removed.

        Futures remove their call once they gave every rank's outcome; this removes the
        rest: calls whose app died or was cancelled, and those whose result nobody will ask
        for. Kept are the calls still running, those of schedulers this runner does not
        have, and those whose outcome a live future in any process (submitted or rebuilt,
        by any executor, ``keep_calls`` or not) has not given yet: asking it later gives
        the result, then removes the call. Such a future holds a lock on its call's folder
        (released once it gave every outcome, is dropped, or its process ends); a remote
        transport has no locks, so there only this process' futures are known. The
        executor's own reference does not count (it holds its futures weakly): a future
        its caller dropped gives nothing.
        A pointer naming a folder outside this transport's ``calls`` folder (a copied
        transport) goes without that folder. A call that cannot be removed keeps its
        pointer, so a later run retries; one line on stderr says which and why.
        """
        runtime = _runtime()
        handles, calls = self._store("handles"), self._store("calls")
        known = (
            (unquote(name.removesuffix(".json")), name)
            for name in handles.names()
            if name.endswith(".json")
        )
        ours = ((h, n) for h, n in known if self._runner.has_scheduler(_scheduler_of(h)))
        mine: dict[AppHandle, list[FunctionFuture]] = {}
        with _issued_lock:
            for future in list(_issued):
                mine.setdefault(future.handle, []).append(future)
        removed, failed, elsewhere = 0, [], []
        for handle, name, status in statuses_in_batches(self._runner, ours):
            if status is not None and not status.is_terminal():
                continue
            if any(f._may_still_give() for f in mine.get(handle, ())):
                continue
            for f in mine.get(handle, ()):
                f._lease.release()  # gave all it can: its lease must not keep the call
            try:
                url = _read_pointer(handles, name)["call"]
            except FileNotFoundError:
                continue  # removed meanwhile by its future
            except ValueError:
                url = ""  # not a pointer this version wrote: only the pointer goes
            except OSError as e:
                failed.append(f"{handles.path(name)} ({e})")
                continue
            child = runtime.child_name(calls.url, url) if url else None
            if url and child is None:
                elsewhere.append(url)
            call = None if child is None else self._store("calls", child)
            try:
                with unheld(call) as free:
                    if not free:
                        continue  # a live future of another process may still read it
                    self._remove_call(call, name)
            except OSError as e:
                failed.append(f"{url} ({e})")
                continue
            removed += 1
        if elsewhere:
            _report(
                f"left {len(elsewhere)} folder(s) outside {calls.url} alone, e.g. "
                f"{elsewhere[0]}: their pointers named them; only the pointers were removed"
            )
        if failed:
            _report(
                f"could not remove {len(failed)} call(s), e.g. {failed[0]}; their pointers "
                "stay: fix the cause and call remove_ended_calls() again"
            )
        return removed


def _scheduler_of(handle: AppHandle) -> str:
    """The scheduler of ``handle``, or "" when it is not a handle."""
    try:
        return parse_app_handle(handle)[0]
    except ValueError:  # MalformedAppHandleException
        return ""


def _pointer_name(handle: AppHandle) -> str:
    return quote(handle, safe="") + ".json"


def _read_pointer(handles: Store, name: str) -> dict[str, Any]:
    """The pointer ``name`` under ``handles``: FileNotFoundError when it is gone, a one-line
    ValueError when it is not one this version wrote."""
    data = handles.read(name, limit=MAX_POINTER_BYTES)
    try:
        pointer = json.loads(data) if len(data) <= MAX_POINTER_BYTES else None
    except ValueError:
        pointer = None
    if (
        not isinstance(pointer, dict)
        or pointer.get("version") != POINTER_VERSION
        or not isinstance(pointer.get("call"), str)
    ):
        raise ValueError(f"{handles.path(name)} is not a version {POINTER_VERSION} pointer")
    return pointer


def _discard(calls: Iterable[Store]) -> None:
    """Remove calls that never ran (their submit failed): no orphan is left behind, and a
    folder that cannot go is named without hiding why the submit failed."""
    for call in calls:
        try:
            call.remove_tree("")
        except OSError as e:
            _report(f"could not remove {call.url} ({e}); remove it by hand")
