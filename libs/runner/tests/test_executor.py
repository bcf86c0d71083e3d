"""torchx.runner.Executor on local_cwd: real apps (supervisor and replica processes)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest
from torchx_test_fixtures_function_calls import add, fail, wait_until_marked
from torchx_test_fixtures_imports import ModulesAfter

# Function apps need the runner's [function] extra (a plain `pip install torchx` has not).
UntrustedFileError = pytest.importorskip(
    "torchx.runtime.function", reason="install torchx-runner[function] for function apps"
).UntrustedFileError

from torchx.components.function import call  # noqa: E402 (after the skip above)
from torchx.runner import (  # noqa: E402
    CallNotPicklableError,
    Executor,
    FunctionAppError,
    FunctionFuture,
    default_transport,
    get_runner,
)
from torchx.schedulers.local_scheduler import SignalException  # noqa: E402
from torchx.specs import AppState, Resource, SpecsError  # noqa: E402
from torchx.specs import resource as specs_resource  # noqa: E402


def square(x: int) -> int:
    return x * x


def sleep_then(seconds: float, marker: str) -> str:
    Path(marker).write_text(str(os.getpid()))
    time.sleep(seconds)
    return "slept"


def die() -> None:
    print("about to die", flush=True)
    os._exit(3)


def all_reduce_sum() -> int:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    dist.destroy_process_group()
    return int(t.item())


@pytest.fixture
def ex() -> Executor:
    return Executor(scheduler="local_cwd", poll_interval=0.2)


def test_submit_add_returns_the_sum(ex: Executor) -> None:
    future = ex.submit(add, 5, 7)
    assert isinstance(future, FunctionFuture)
    assert future.handle.startswith("local_cwd://torchx/function-")
    assert future.result(timeout=60) == 12
    assert future.done() and not future.cancelled()
    assert future.exception() is None
    status = get_runner().wait(future.handle, wait_interval=0.2, timeout=120)
    assert status is not None and status.state == AppState.SUCCEEDED


def test_keyword_arguments_and_the_default_transport(ex: Executor) -> None:
    assert ex.transport == default_transport()
    assert ex.submit(add, a=1, b=2).result(timeout=60) == 3
    assert (Path(default_transport()).stat().st_mode & 0o777) == 0o700


def test_a_raise_is_re_raised_locally_with_the_remote_frame(ex: Executor) -> None:
    future = ex.submit(fail, "x")
    with pytest.raises(ValueError, match=r"^x$") as info:
        future.result(timeout=60)
    text = "".join(traceback.format_exception(info.value))
    assert "in fail\n    raise ValueError(message)" in text
    assert isinstance(future.exception(), ValueError)
    # the outcome is read as soon as it is written, before the app has ended
    status = get_runner().wait(future.handle, wait_interval=0.2, timeout=120)
    assert status is not None and status.state == AppState.FAILED


def _started(ex: Executor, marker: Path) -> FunctionFuture:
    """A future whose function runs now (it wrote ``marker``) and sleeps for minutes."""
    future = ex.submit(sleep_then, 300, str(marker))
    wait_until_marked(future, marker)
    return future


def test_cancel_ends_the_app(ex: Executor, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    future = _started(ex, marker)
    assert future.running()
    assert future.cancel()
    assert future.cancelled() and future.done()
    status = get_runner().wait(future.handle, wait_interval=0.2, timeout=120)
    assert status is not None and status.state == AppState.CANCELLED
    with pytest.raises(concurrent.futures.CancelledError):
        future.result()
    pid = int(marker.read_text())
    deadline = time.monotonic() + 120
    while Path(f"/proc/{pid}").exists() and "Z" not in _proc_state(pid):
        assert time.monotonic() < deadline, f"the function's process {pid} still runs"
        time.sleep(0.05)


def _proc_state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return "Z"
    return stat[stat.rindex(")") + 2]


def test_shutdown_can_cancel_what_runs_and_refuses_more(ex: Executor, tmp_path: Path) -> None:
    future = _started(ex, tmp_path / "started")
    ex.shutdown(wait=True, cancel_futures=True)
    assert future.cancelled()
    status = get_runner().wait(future.handle, wait_interval=0.2, timeout=120)
    assert status is not None and status.state == AppState.CANCELLED
    with pytest.raises(RuntimeError, match="shut down; make a new one"):
        ex.submit(add, 1, 2)


def test_a_finished_future_cannot_be_cancelled(ex: Executor) -> None:
    future = ex.submit(add, 1, 1)
    assert future.result(timeout=60) == 2
    assert future.cancel() is False


def test_a_future_rebuilt_from_its_handle_in_a_new_process() -> None:
    # an executor that keeps its calls: its own futures leave the call for the new process
    ex = Executor(scheduler="local_cwd", poll_interval=0.2, keep_calls=True)
    future = ex.submit(add, 40, 2)
    # an executor's own transport is used when asked through it
    assert ex.future(future.handle).result(timeout=60) == 42
    code = (
        "import sys\n"
        "from torchx.runner import Executor\n"
        "print(Executor.future(sys.argv[1]).result(timeout=60))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, future.handle], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "42\n"
    # that process's executor did not keep it: once read there, it is gone
    with pytest.raises(SpecsError, match="a call is removed once a future gave its result"):
        ex.future(future.handle)


def test_an_unknown_handle_names_the_transport(ex: Executor) -> None:
    with pytest.raises(SpecsError, match="no function call of this app is under"):
        ex.future("local_cwd://torchx/nothing-here")


def test_map_returns_results_in_order_with_bounded_apps(tmp_path: Path) -> None:
    ex = Executor(scheduler="local_cwd", poll_interval=0.2, max_in_flight=3)
    results = ex.map(square, range(8))
    assert len(ex._apps) == 3  # only the first window is submitted before iterating
    assert list(results) == [x * x for x in range(8)]
    assert len(ex._apps) == 8


def test_map_without_job_arrays_or_of_one_item_is_one_app_per_item(tmp_path: Path) -> None:
    ex = Executor(scheduler="local_cwd", poll_interval=0.2)
    assert ex._sweep_args() is None  # local_cwd has no job arrays: no sweep for a map
    assert list(ex.map(square, [7])) == [49]
    ((handle, _),) = ex._apps.held()
    assert "/sweep-" not in handle


def test_a_slurm_maps_sweep_trials_are_the_app_submit_makes(tmp_path: Path) -> None:
    runner = get_runner()
    for kw in (
        {},
        {"resource": "cpu.small", "env": {"A": "1"}},
        {"resource": Resource(cpu=2, gpu=0, memMB=1024), "num_replicas": 2, "image": "/x"},
    ):
        ex = Executor(scheduler="slurm", transport=str(tmp_path / "t"), **kw)  # type: ignore[arg-type]
        args = ex._sweep_args()
        assert args is not None, kw
        url = str(tmp_path / "t" / "calls" / "c1")
        trial = runner.component_app("function.call", [*args, f"--url={url}"])
        assert trial == ex._app(url)
        assert trial.roles[0].env.get("A") == kw.get("env", {}).get("A")  # type: ignore[union-attr]


def test_a_map_that_a_sweep_cannot_express_is_one_app_per_item(tmp_path: Path) -> None:
    for kw in (
        {"mounts": ["type=bind,src=/data,dst=/data"]},
        {"env": {"A": "1,2"}},
        {"resource": Resource(cpu=1, gpu=0, memMB=64, capabilities={"zone": "a"})},
    ):
        ex = Executor(scheduler="slurm", transport=str(tmp_path / "t"), **kw)  # type: ignore[arg-type]
        assert ex._sweep_args() is None, kw


def test_a_job_that_dies_raises_one_error_with_its_status_and_log(ex: Executor) -> None:
    future = ex.submit(die)
    with pytest.raises(FunctionAppError) as info:
        future.result(timeout=60)
    err = info.value
    assert err.status is not None and err.status.state == AppState.FAILED
    assert err.log_tail == ["about to die"]
    assert str(err).startswith(
        f"{future.handle} ended FAILED (role 'function' replica 0 exited with code 3) "
        "without the function's result"
    )
    assert "  about to die" in str(err)


def exit_softly(code: int) -> None:
    sys.exit(code)


def test_sys_exit_in_the_function_is_reraised_as_its_system_exit(ex: Executor) -> None:
    future = ex.submit(exit_softly, 0)
    with pytest.raises(SystemExit) as info:
        future.result(timeout=60)
    assert info.value.code == 0
    status = ex._runner.wait(future.handle, wait_interval=0.2, timeout=60)
    assert status is not None and status.state == AppState.FAILED


def exit_hard(code: int) -> None:
    os._exit(code)


def kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)  # what the out-of-memory killer does


def test_a_dead_apps_error_says_how_it_died(ex: Executor) -> None:
    exited, killed = ex.submit(exit_hard, 5), ex.submit(kill_self)
    assert "ended FAILED (role 'function' replica 0 exited with code 5) without" in str(
        exited.exception(timeout=60)
    )
    assert (
        "ended FAILED (role 'function' replica 0 exited with code -9 (killed by SIGKILL)) "
        "without" in str(killed.exception(timeout=60))
    )


def test_an_app_cancelled_by_someone_else_is_an_app_error(ex: Executor, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    future = _started(ex, marker)
    get_runner().cancel(future.handle)  # not through the future: it did not ask for it
    err = future.exception(timeout=60)
    assert isinstance(err, FunctionAppError)
    assert err.status is not None and err.status.state == AppState.CANCELLED
    assert not future.cancelled()
    with pytest.raises(FunctionAppError, match=r"ended CANCELLED .*without the function's result"):
        future.result()


def test_result_times_out(ex: Executor, tmp_path: Path) -> None:
    future = ex.submit(sleep_then, 300, str(tmp_path / "m"))
    with pytest.raises(concurrent.futures.TimeoutError):
        future.result(timeout=0.3)
    assert future.cancel()


def test_an_unpicklable_closure_is_one_line_naming_the_fix(ex: Executor) -> None:
    lock = threading.Lock()
    with pytest.raises(CallNotPicklableError) as info:
        ex.submit(lambda: lock.locked())
    (line,) = str(info.value).splitlines()
    assert line.startswith("submit(test_an_unpicklable_closure_is_one_line_naming_the_fix")
    assert "cannot pickle '_thread.lock' object" in line
    assert "pass what the function needs as arguments" in line
    assert get_runner().list("local_cwd") == []  # nothing was submitted


def test_a_local_folder_for_a_container_scheduler_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SpecsError) as info:
        Executor(scheduler="kubernetes", transport=str(tmp_path))
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"Executor transport: got '{tmp_path}'; a local folder that ")
    assert "kubernetes's nodes cannot reach; give a URL they all reach" in line
    with pytest.raises(SpecsError, match="give a URL they all reach"):
        Executor(scheduler="kubernetes")
    assert Executor(scheduler="kubernetes", transport="s3://bucket/f").transport == "s3://bucket/f"
    with pytest.raises(SpecsError, match="memory:// lives inside this process"):
        Executor(transport="memory://calls")


def test_a_transport_folder_others_may_write_is_refused_and_left_as_it_is(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    ex = Executor(transport=str(shared))
    with pytest.raises(SpecsError) as info:
        ex.submit(add, 1, 2)
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"Executor transport: got '{shared}'; {shared} is writable by others")
    assert f"chmod go-w {shared}" in line
    assert (shared.stat().st_mode & 0o777) == 0o777
    assert list(shared.iterdir()) == []  # no calls/ or handles/ made in it
    assert get_runner().list("local_cwd") == []


def test_a_result_the_user_does_not_own_is_refused(ex: Executor) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    future = ex.submit(add, 1, 2)
    get_runner().wait(future.handle, wait_interval=0.2, timeout=60)
    result = next(Path(default_transport(), "calls").glob("*/rank-0.pkl"))
    os.chown(result, 65534, 65534)
    with pytest.raises(UntrustedFileError) as info:
        future.result(timeout=60)
    (line,) = str(info.value).splitlines()
    assert f"{result} is owned by uid 65534, not by you (uid 0)" in line
    assert "keep the transport folder where only you can write" in line


def test_bad_sizes_name_the_field() -> None:
    with pytest.raises(SpecsError, match="Executor nproc_per_node: got 0; expected an int"):
        Executor(nproc_per_node=0)
    with pytest.raises(SpecsError, match="Executor scheduler: got 'local_cdw'; did you mean"):
        Executor(scheduler="local_cdw")


def test_the_component_runs_the_runtime_module() -> None:
    app = call("/tmp/f/calls/1", python="/usr/bin/python3")
    (role,) = app.roles
    assert (role.entrypoint, role.args) == (
        "/usr/bin/python3",
        ["-m", "torchx.runtime.function", "/tmp/f/calls/1"],
    )
    dist = call("/tmp/c", python="py", num_replicas=2, nproc_per_node=4).roles[0]
    assert dist.num_replicas == 2
    assert dist.entrypoint == "bash"
    assert dist.args[1].startswith("py -m torch.distributed.run --nnodes 2 --nproc_per_node 4")
    assert dist.args[1].endswith("-m torchx.runtime.function /tmp/c")
    one_node = call("/tmp/c", python="py", nproc_per_node=2).roles[0]
    assert one_node.entrypoint == "py"
    assert one_node.args[:2] == ["-m", "torch.distributed.run"]
    assert one_node.args[-3:] == ["-m", "torchx.runtime.function", "/tmp/c"]


def test_resources_image_env_and_interpreter_reach_the_role(tmp_path: Path) -> None:
    sized = Executor(resource=Resource(cpu=2, gpu=0, memMB=512), env={"A": "1"})
    (role,) = sized._app("/f/calls/1").roles
    assert (role.resource.cpu, role.resource.memMB) == (2, 512)
    assert role.env["A"] == "1"
    assert role.entrypoint == sys.executable  # the same interpreter on local schedulers
    named = Executor(scheduler="local_dir", resource="cpu.small", python="python3")
    (role,) = named._app("/f/calls/1").roles
    assert role.resource.cpu == specs_resource(h="cpu.small").cpu
    assert role.image == os.getcwd() and role.entrypoint == "python3"
    docker = Executor(scheduler="local_docker", transport=str(tmp_path), image="img")
    (role,) = docker._app(f"{tmp_path}/calls/1").roles
    assert role.entrypoint == "python" and role.image == "img"
    assert [(m.src_path, m.dst_path) for m in role.mounts] == [(str(tmp_path), str(tmp_path))]


@pytest.mark.slow
def test_two_ranks_all_reduce_under_torchrun_and_every_rank_returns() -> None:
    pytest.importorskip("torch")
    ex = Executor(scheduler="local_cwd", nproc_per_node=2, poll_interval=0.2)
    future = ex.submit(all_reduce_sum)
    assert future.world_size == 2
    assert future.result(timeout=240, all_ranks=True) == [3, 3]
    assert future.result() == 3  # rank 0's


def rank_1_raises_after_rank_0_returned(marker: str) -> str:
    if os.environ["RANK"] == "1":
        deadline = time.monotonic() + 60
        while not Path(marker).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        raise RuntimeError("rank 1 broke")
    Path(marker).write_text("rank 0 returned")
    return "rank 0 ok"


@pytest.mark.slow
@pytest.mark.parametrize("ask", ["result", "exception"])
def test_a_later_raise_on_another_rank_fails_the_call(tmp_path: Path, ask: str) -> None:
    pytest.importorskip("torch")
    ex = Executor(scheduler="local_cwd", nproc_per_node=2, poll_interval=0.2)
    future = ex.submit(rank_1_raises_after_rank_0_returned, str(tmp_path / "rank0"))
    if ask == "result":
        with pytest.raises(RuntimeError, match="rank 1 broke"):
            future.result(timeout=240)
    else:
        assert repr(future.exception(timeout=240)) == "RuntimeError('rank 1 broke')"


def test_importing_the_runner_leaves_the_executors_modules_unloaded(
    modules_after: ModulesAfter,
) -> None:
    loaded = modules_after("import torchx.runner")
    assert "torchx.runner" in loaded
    executors = {"concurrent.futures", "cloudpickle", "fsspec", "uuid", "torchx.runtime.function"}
    assert loaded & executors == set()


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SignalException])
def test_ctrl_c_or_sigterm_in_the_with_block_cancels_the_apps_instead_of_waiting(
    tmp_path: Path, stop: type[BaseException]
) -> None:
    futures: list[FunctionFuture] = []

    def interrupted() -> None:
        with (
            contextlib.suppress(stop),
            Executor(scheduler="local_cwd", poll_interval=0.2) as ex,
        ):
            futures.append(_started(ex, tmp_path / "started"))
            raise (stop("SIGTERM", 15) if stop is SignalException else stop())

    thread = threading.Thread(target=interrupted, daemon=True)
    thread.start()
    thread.join(timeout=120)
    (future,) = futures
    if thread.is_alive():  # still waiting for the 300 s call: release it, then fail
        future.cancel()
        pytest.fail("leaving the with block on Ctrl-C waited for the running app")
    assert future.cancelled()
    status = get_runner().wait(future.handle, wait_interval=0.2, timeout=120)
    assert status is not None and status.state == AppState.CANCELLED


def test_arguments_of_the_wrong_type_are_one_line_naming_the_field() -> None:
    for kwargs, start in (
        ({"cfg": "log_dir=/tmp"}, "Executor cfg: got 'log_dir=/tmp'; give a dict"),
        ({"env": ["A=B"]}, "Executor env: got ['A=B']; give a dict"),
        ({"resource": 4}, "Executor resource: got 4; give a Resource or a named resource"),
        ({"mounts": "type=bind,src=/a,dst=/b"}, "Executor mounts: got 'type=bind,src=/a,dst=/b'"),
        ({"transport": "nosuch://calls"}, "Executor transport: got 'nosuch://calls'; Protocol"),
    ):
        with pytest.raises(SpecsError) as info:
            Executor(**kwargs)  # type: ignore[arg-type]
        (line,) = str(info.value).splitlines()
        assert line.startswith(start), line
    assert get_runner().list("local_cwd") == []


class _CancelFails:
    """A future whose app the scheduler fails to cancel (an unreachable cluster)."""

    handle = "local_cwd://torchx/function-unreachable"

    def cancel(self) -> bool:
        raise ConnectionError("scheduler unreachable")


class _CancelRecorded:
    def __init__(self, handle: str, cancelled: list[str]) -> None:
        self.handle = handle
        self._cancelled = cancelled

    def cancel(self) -> bool:
        self._cancelled.append(self.handle)
        return True


_FIRST = "local_cwd://torchx/function-a"
_LAST = "local_cwd://torchx/function-b"


def _stop_around(
    middle: object,
    stop: BaseException,
    capsys: pytest.CaptureFixture[str],
    propagates: type[BaseException] = KeyboardInterrupt,
) -> tuple[list[str], list[bool], str]:
    """Leave an Executor's with block by ``stop`` while it holds three stand-in futures,
    ``middle`` between two that record their cancel; the apps cancelled, whether the
    runner was closed, and the one line on stderr."""
    cancelled: list[str] = []
    closed: list[bool] = []
    ex = Executor(scheduler="local_cwd", poll_interval=0.2)
    close = ex._runner.close

    def recorded_close() -> None:
        closed.append(True)
        close()

    ex._runner.close = recorded_close  # type: ignore[method-assign]
    # referenced here: the executor holds its futures weakly
    held = [_CancelRecorded(_FIRST, cancelled), middle, _CancelRecorded(_LAST, cancelled)]
    ex._apps.add(held)  # type: ignore[arg-type]
    with pytest.raises(propagates), ex:
        raise stop
    (line,) = capsys.readouterr().err.splitlines()
    return cancelled, closed, line


def test_a_failing_cancel_on_ctrl_c_cancels_the_rest_and_keeps_the_interrupt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cancelled, closed, line = _stop_around(_CancelFails(), KeyboardInterrupt(), capsys)
    assert cancelled == [_FIRST, _LAST]
    assert closed == [True]
    assert line == (
        "torchx Executor: on KeyboardInterrupt, could not cancel"
        f" {_CancelFails.handle} (ConnectionError: scheduler unreachable);"
        f" stop it with: torchx cancel {_CancelFails.handle}"
    )


class _CancelInterrupted:
    """A future whose cancel is cut short by a second Ctrl-C."""

    handle = "local_cwd://torchx/function-slow"

    def cancel(self) -> bool:
        raise KeyboardInterrupt


def test_a_second_ctrl_c_during_a_cancel_names_every_app_left_running(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # SignalException: what the local scheduler raises on SIGTERM; the second stop propagates
    sigterm = SignalException("SIGTERM", 15)
    cancelled, closed, line = _stop_around(_CancelInterrupted(), sigterm, capsys)
    assert cancelled == [_FIRST]
    assert closed == [True]
    assert line == (
        "torchx Executor: on SignalException, a KeyboardInterrupt stopped the cancelling;"
        " 2 app(s) may still run; stop them with:"
        f" torchx cancel {_CancelInterrupted.handle}; torchx cancel {_LAST}"
    )


class _CancelTerminated:
    """A future whose cancel is cut short by a second SIGTERM (an Exception subclass)."""

    handle = "local_cwd://torchx/function-terminated"

    def cancel(self) -> bool:
        raise SignalException("SIGTERM", 15)


def test_a_second_sigterm_during_a_cancel_ends_the_cancelling_and_propagates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cancelled, closed, line = _stop_around(
        _CancelTerminated(), SignalException("SIGTERM", 15), capsys, propagates=SignalException
    )
    assert cancelled == [_FIRST]
    assert closed == [True]
    assert line == (
        "torchx Executor: on SignalException, a SignalException stopped the cancelling;"
        " 2 app(s) may still run; stop them with:"
        f" torchx cancel {_CancelTerminated.handle}; torchx cancel {_LAST}"
    )


def test_leaving_on_an_error_does_not_load_the_local_scheduler(
    modules_after: ModulesAfter,
) -> None:
    loaded = modules_after(
        "from torchx.runner._executor import _is_a_stop\n"
        "assert not _is_a_stop(ValueError) and _is_a_stop(KeyboardInterrupt)"
    )
    assert "torchx.runner._executor" in loaded
    assert "torchx.schedulers.local_scheduler" not in loaded


def test_an_app_errors_structured_error_is_carried_cut_short() -> None:
    from torchx.specs import AppStatus

    status = AppStatus(AppState.FAILED, msg="node lost", structured_error_msg="OOM\n" + "x" * 900)
    (first, *_) = str(FunctionAppError("local://a/b", status, [])).splitlines()
    assert first.startswith("local://a/b ended FAILED (node lost; error: OOM xxx")
    assert first.endswith("x ...) without the function's result; the last lines of its log:")
    assert len(first) < 700
