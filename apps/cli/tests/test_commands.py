"""Every subcommand through typer's test runner, with real local apps behind them."""

from __future__ import annotations

import json
import logging
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app

cli = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def launch(*component: str) -> str:
    """Run a component to completion; returns its handle."""
    code, out, _ = invoke("run", "--json", *component)
    assert code == 0, out
    handle: str = json.loads(out)["handle"]
    return handle


def test_help_lists_every_subcommand() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    for command in ("run", "builtins", "status", "describe", "log", "cancel", "list", "runopts"):
        assert re.search(rf"^\s+{command}\s", out, re.M), command
    assert "--install-completion" in out


def test_version() -> None:
    code, out, _ = invoke("--version")
    assert code == 0 and re.fullmatch(r"torchx-\d+\.\d+\.\d+\n", out)


def test_builtins_table_json_and_print() -> None:
    code, out, _ = invoke("builtins")
    # as pytorch/torchx 0.7 prints it
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"Found {len(lines) - 1} builtin components:"
    assert re.fullmatch(r" +\d+\. dist\.ddp", lines[1]) and lines[1].startswith("  1. ")
    code, out, _ = invoke("builtins", "--verbose")
    assert code == 0 and "utils.echo" in out and "Prints a message to stdout." in out
    # a docstring's ``literal`` shows as `literal`, as a terminal reader expects
    assert "with `sh -c`." in out and "``" not in out
    code, out, _ = invoke("builtins", "--json")
    names = {c["name"] for c in json.loads(out)}
    assert {"utils.echo", "dist.ddp", "serve.torchserve", "metrics.tensorboard"} <= names
    code, out, _ = invoke("builtins", "--print", "utils.echo")
    # as in pytorch/torchx 0.7: the imports the function needs come before it
    assert code == 0 and out.startswith("from __future__ import annotations\n")
    assert "from torchx.specs import AppDef, Role, SpecsError\n\n\ndef echo(" in out


def test_run_component_help_shows_its_docstring() -> None:
    code, out, _ = invoke("run", "dist.ddp", "--help")
    assert code == 0
    assert "Distributed data parallel training" in out
    assert "--j (str, default: '1x2')" in out and "M, NxM or MIN:NxM" in out
    code, out, _ = invoke("run", "--help")
    assert code == 0 and "--dryrun" in out and "--scheduler" in out


def test_builtins_describe_the_arguments_they_share_alike_in_help_and_printed_source() -> None:
    h_help = (
        "a named resource per replica (e.g. cpu.small, gpu.small); overrides cpu, gpu and memMB"
    )
    for name in ("utils.sh", "utils.python", "utils.binary"):
        code, out, _ = invoke("run", name, "--help")
        assert code == 0 and f"  --h (str or None, default: None)\n      {h_help}\n" in out, name
        hint = "dict[str, str] (k1=v1,k2=v2; a value may hold commas) or None"
        assert f"  --env ({hint}, default: None)\n" in out
        assert "      environment variables, k1=v1,k2=v2\n" in out
        # the template to copy has them too, in the docstring where the file leaves them out
        code, out, _ = invoke("builtins", "--print", name)
        assert code == 0 and f"\ndef {name[6:]}(" in out and f"        h: {h_help}\n" in out


def test_run_dryrun_prints_the_request_and_starts_nothing(isolated: Path) -> None:
    code, out, _ = invoke("run", "--dryrun", "utils.echo", "--msg", "dry")
    assert code == 0
    assert "=== SCHEDULER REQUEST ===" in out and "echo dry" in out
    # the role's command line reads as a shell would: empty and spaced arguments quoted
    code, out, _ = invoke("run", "--dryrun", "utils.binary", "--entrypoint", "echo", "a  b", "")
    assert code == 0 and "x1: echo 'a  b' ''\n" in out
    code, out, err = invoke("run", "--dryrun", "--json", "dist.ddp", "-j", "2", "--script", "t.py")
    if shutil.which("torchrun") is None:
        # the launcher alone (no torch): local_cwd checks the entrypoint before anything runs
        assert code == 2 and "'torchrun'; not found on PATH" in err
    else:
        assert code == 0, err
        dry = json.loads(out)
        assert dry["scheduler"] == "local_cwd"
        assert dry["app"]["roles"][0]["args"][:4] == ["--nnodes", "1", "--nproc_per_node", "2"]
    code, out, _ = invoke("list", "--json")
    assert json.loads(out) == []


def test_run_waits_and_streams_logs_then_status_describe_log_list() -> None:
    code, out, err = invoke("run", "utils.echo", "--msg", "hello from a test")
    assert code == 0, err
    # the handle alone on stdout (H=$(torchx run ...)); logs and the end state on stderr
    handle = out.strip()
    assert out == handle + "\n" and handle.startswith("local_cwd://")
    assert "echo/0 hello from a test" in err and f"{handle} SUCCEEDED" in err

    code, out, _ = invoke("status", handle)
    assert code == 0 and "State: SUCCEEDED" in out
    code, out, _ = invoke("status", "--json", handle)
    assert json.loads(out)["state"] == "SUCCEEDED"
    # the app id alone, or the handle without its session: the handle it meant is named
    app_id = handle.rsplit("/", 1)[1]
    for command in ("status", "log"):
        for partial in (app_id, f"local_cwd://{app_id}"):
            code, _, err = invoke(command, partial)
            assert code == 2
            assert err == f"torchx: error: app handle: got {partial!r}; did you mean {handle}?\n"

    code, out, _ = invoke("describe", handle)
    assert code == 0 and "role echo" in out
    code, out, _ = invoke("describe", "--json", handle)
    assert json.loads(out)["roles"][0]["args"] == ["hello from a test"]

    code, out, _ = invoke("log", handle)
    assert code == 0 and out == "echo/0 hello from a test\n"
    code, out, _ = invoke("log", f"{handle}/echo/0", "--regex", "^nothing", "--streams", "stdout")
    assert code == 0 and out == ""

    code, out, _ = invoke("list")
    assert code == 0 and handle in out and "SUCCEEDED" in out
    code, out, _ = invoke("list", "-s", "local_cwd", "--json")
    assert [a["app_handle"] for a in json.loads(out)] == [handle]


def test_a_failing_app_exits_non_zero() -> None:
    code, _, err = invoke("run", "utils.sh", "echo oops >&2; exit 3")
    assert code == 1
    # the streamed log already showed the error: it is not repeated, one line says why
    assert err.count("oops") == 1
    assert err.rstrip().endswith("FAILED: role 'sh' replica 0 exited with code 3")


def test_no_wait_returns_the_handle_and_cancel_stops_the_app() -> None:
    code, out, _ = invoke("run", "--no-wait", "utils.sh", "sleep 60")
    assert code == 0
    handle = out.strip()
    code, out, _ = invoke("cancel", handle)
    assert code == 0 and out.strip() == f"cancelled {handle}"
    code, out, _ = invoke("status", "--json", handle)
    assert json.loads(out)["state"] in ("CANCELLED", "FAILED")


def _log_form_error(given: str, meant: str) -> str:
    return (
        f"torchx: error: app handle: got {given!r}; did you mean {meant}? (an app handle "
        "ends with the app id; HANDLE/ROLE/REPLICA is for torchx log)\n"
    )


def test_the_log_form_given_to_a_command_that_takes_the_app_does_nothing_to_a_running_app() -> None:
    code, out, _ = invoke("run", "--no-wait", "utils.sh", "sleep 60")
    assert code == 0
    handle = out.strip()

    def state() -> str:
        code, out, _ = invoke("status", "--json", handle)
        assert code == 0
        return str(json.loads(out)["state"])

    try:
        deadline = time.monotonic() + 60
        while state() == "PENDING" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state() == "RUNNING"
        for given in (f"{handle}/sh/0", f"{handle}/sh", f"{handle}/"):
            for command in ("status", "describe", "wait", "cancel"):
                code, out, err = invoke(command, given)
                assert (code, out, err) == (2, "", _log_form_error(given, handle)), command
        assert state() == "RUNNING"  # the cancel of a log target stopped nothing
    finally:
        code, out, _ = invoke("cancel", handle)
        assert code == 0 and out.strip() == f"cancelled {handle}"


@pytest.mark.parametrize("scheduler", ["slurm", "kubernetes", "some_plugin"])
def test_the_log_form_is_named_from_its_shape_on_every_scheduler(scheduler: str) -> None:
    # no scheduler is asked (no cluster here): the hint is the same for every one
    given = f"{scheduler}://torchx/123/trainer/0"
    code, out, err = invoke("status", given)
    assert (code, out, err) == (2, "", _log_form_error(given, f"{scheduler}://torchx/123"))
    code, out, err = invoke("status", f"{scheduler}://torchx//x")
    # worded as any malformed handle is (as for scheduler://torchx/), with the reason
    expected = "expected SCHEDULER://SESSION/APP_ID as `torchx run` prints it, e.g. "
    _, _, malformed = invoke("status", f"{scheduler}://torchx/")
    assert expected in malformed, malformed
    assert (
        code == 2
        and f"//x'; {expected}local_cwd://torchx/echo-1a2b3c; an app id has no '/'\n" in err
    )


def test_runopts_and_configure_write_a_config_the_runner_reads(isolated: Path) -> None:
    code, out, _ = invoke("runopts", "local_cwd")
    assert code == 0 and "log_dir" in out
    code, out, _ = invoke("runopts", "--json")
    assert "log_dir" in json.loads(out)["local_cwd"]
    code, out, _ = invoke("configure", "--all")
    assert code == 0
    text = (isolated / ".torchxconfig").read_text()
    # the form 0.7 writes: every option with its default, None for none
    assert "[local_cwd]\nlog_dir = None\n" in text and "prepend_cwd = False" in text
    # the written file is valid for the runner: a run reads it without complaint
    code, _, err = invoke("run", "--dryrun", "utils.echo")
    assert code == 0, err
    code, _, err = invoke("configure")
    assert code == 2 and "already exists" in err and "--force" in err


def test_seed_component_file_runs_from_the_cli(isolated: Path) -> None:
    spec = isolated / "app_spec.py"
    spec.write_text(
        "import torchx.specs as specs\n\n"
        "def ddp(jobname: str, nnodes: int, image: str, entrypoint: str, *script_args: str):\n"
        "   single_gpu = specs.Resources(cpu=4, gpu=1, memMB=1024)\n"
        "   return specs.AppDef(\n"
        "           name=jobname,\n"
        "           roles=[\n"
        "               specs.Role(\n"
        '                   name="trainer",\n'
        "                   entrypoint=entrypoint,\n"
        "                   image=image,\n"
        "                   resource=single_gpu,\n"
        "                   args=script_args,\n"
        "                   num_replicas=nnodes\n"
        "               )\n"
        "           ]\n"
        "   )\n"
    )
    code, _, err = invoke(
        "run", str(spec), "--jobname", "seed", "--nnodes", "2", "--image", str(isolated),
        "--entrypoint", "echo", "from", "the", "seed",
    )  # fmt: skip
    assert code == 0, err
    logs = [ln for ln in err.splitlines() if ln.startswith("trainer/")]
    assert sorted(logs) == ["trainer/0 from the seed", "trainer/1 from the seed"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "utils.ecko"], "did you mean 'utils.echo'"),
        (
            ["run", "utils.echo", "--mgs", "x"],
            "got '--mgs'; no such argument; did you mean '--msg'",
        ),
        (["run", "utils.echo", "--num_replicas", "two"], "--num_replicas: got 'two'; expected int"),
        (["run", "-s", "slurmm", "utils.echo"], "scheduler: got 'slurmm'"),
        (["run", "-cfg", "log_dirr=/x", "utils.echo"], "log_dirr"),
        (["run", "dist.ddp", "-j", "0x2", "--script", "t.py"], "dist.ddp -j: got '0x2'"),
        (
            ["status", "not-a-handle"],
            "expected SCHEDULER://SESSION/APP_ID as `torchx run` prints it, "
            "e.g. local_cwd://torchx/echo-1a2b3c",
        ),
        (["status", "local_cwd://torchx/missing-1"], "no such app"),
        (["describe", "nope"], "app handle: got 'nope'"),
        (["log", "local_cwd://torchx/app/role/x"], "expected a number"),
        (["log", "local_cwd://torchx/a/b/0", "--regex", "("], "--regex"),
        (["cancel", "://x"], "app handle"),
        (["list", "-s", "nope"], "scheduler: got 'nope'"),
        (["runopts", "nope"], "scheduler: got 'nope'"),
        (["builtins", "--print", "utils.nope"], "component: got 'utils.nope'"),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(args: list[str], message: str) -> None:
    code, out, err = invoke(*args)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("torchx: error: ")
    assert message in err
    assert "Traceback" not in err


def test_debug_shows_the_traceback() -> None:
    result = cli.invoke(app, ["--debug", "run", "utils.ecko"])
    assert result.exit_code == 1
    assert result.exception is not None and "utils.ecko" in str(result.exception)


def test_torchx_run_of_a_script_with_side_effects_runs_nothing(isolated: Path) -> None:
    (isolated / "script_with_side_effects.py").write_text(
        "open('SIDE_EFFECT', 'w').write('ran')\nimport sys\nsys.exit(3)\n"
    )
    code, out, err = invoke("run", "script_with_side_effects.py")
    assert code == 2 and out == ""
    assert "script_with_side_effects.py:FN" in err and "nothing in it was run" in err
    assert not (isolated / "SIDE_EFFECT").exists()


def test_cli_run_component_of_the_config_applies_as_in_0_7(isolated: Path) -> None:
    (isolated / ".torchxconfig").write_text("[cli:run]\ncomponent = utils.echo\n")
    code, out, err = invoke("run", "--dryrun", "--msg", "from-config")
    assert code == 0, err
    assert "echo from-config" in out
    code, out, err = invoke("run", "--dryrun")
    assert code == 0 and "AppDef echo" in out, err
    (isolated / ".torchxconfig").unlink()
    code, _, err = invoke("run", "--dryrun", "--msg", "x")
    assert code == 2 and "[cli:run]" in err and "name the component before its own" in err
    # ``torchx run`` alone shows its help and fails as in 0.7 (exit 2), all on stderr: the
    # error is its last line, stdout (where a script reads the handle) stays empty
    code, out, err = invoke("run")
    assert (code, out) == (2, "") and err.startswith("Usage: torchx run"), err
    assert err.splitlines()[-1].startswith("torchx: error: component: none given")


def test_a_misspelt_cli_run_component_or_scheduler_names_the_config_file(isolated: Path) -> None:
    config = isolated / ".torchxconfig"
    config.write_text("[cli:run]\ncomponent = utils.ehco\n")
    for args in (("run", "--dryrun"), ("run", "--dryrun", "--sweep", "msg=a,b")):
        code, out, err = invoke(*args)
        assert (code, out) == (2, ""), err
        assert err.startswith(
            f"torchx: error: {config} [cli:run] component: got 'utils.ehco'; did you mean "
            "'utils.echo'"
        ), err
    config.write_text("[cli:run]\nscheduler = slurmm\n")
    code, out, err = invoke("run", "--dryrun", "utils.echo")
    assert (code, out) == (2, ""), err
    assert err == (
        f"torchx: error: {config} [cli:run] scheduler: got 'slurmm'; did you mean 'slurm'?\n"
    )
    # typed on the command line, the name is the command line's
    code, _, err = invoke("run", "--dryrun", "-s", "slurmm", "utils.ehco")
    assert code == 2 and err.startswith("torchx: error: component: got 'utils.ehco'"), err


def test_a_cli_run_flag_that_is_no_boolean_names_the_config_file(isolated: Path) -> None:
    config = isolated / ".torchxconfig"
    for key, args in (
        ("dryrun", ("run", "utils.echo")),
        ("dryrun", ("run", "--sweep", "msg=a,b", "utils.echo")),
        ("wait", ("run", "utils.echo")),
        ("wait", ("run", "--sweep", "msg=a,b", "utils.echo")),  # before the sweep starts
        ("log", ("run", "utils.echo")),
    ):
        config.write_text(f"[cli:run]\n{key} = maybe\n")
        code, out, err = invoke(*args)
        assert (code, out) == (2, ""), (args, out)
        assert err == (
            f"torchx: error: {config} [cli:run] {key}: got 'maybe'; expected true or false\n"
        ), args
    assert not (isolated / "state").exists()  # nothing was started


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the command read, in order: "config" for each read of the config files (each
    ``TorchxConfig`` made), the command's name for each read of its ``[cli:COMMAND]``."""
    from torchx.runner import TorchxConfig

    read: list[str] = []
    real_defaults, real_init = TorchxConfig.cli_defaults, TorchxConfig.__init__

    def cli_defaults(self: TorchxConfig, command: str) -> dict[str, str]:
        read.append(command)
        return real_defaults(self, command)

    def init(self: TorchxConfig, *args: Any, **kwargs: Any) -> None:
        read.append("config")
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(TorchxConfig, "cli_defaults", cli_defaults)
    monkeypatch.setattr(TorchxConfig, "__init__", init)
    return read


def test_torchx_run_reads_cli_run_once_for_the_component_the_scheduler_and_its_flags(
    isolated: Path, reads: list[str]
) -> None:
    (isolated / ".torchxconfig").write_text(
        "[cli:run]\ncomponent = utils.echo\nscheduler = slurm\ndryrun = true\n"
    )
    code, out, err = invoke("run")
    assert code == 0, err
    assert "echo 'hello world'" in out and "#SBATCH" in out
    assert reads == ["config", "run"]
    reads.clear()
    # [cli:run] dryrun holds for a sweep too: nothing reaches sbatch (there is no cluster)
    code, out, err = invoke("run", "--sweep", "msg=a,b", "utils.echo")
    assert code == 0, err
    assert "#SBATCH --array" in out
    assert reads == ["config", "run"]


def test_a_bare_torchx_run_reads_the_config_once_and_makes_no_runner_to_print_its_help(
    isolated: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx.runner import Runner

    def no_runner(*args: object, **kwargs: object) -> None:
        raise AssertionError("a runner was made to print help")

    monkeypatch.setattr(Runner, "__init__", no_runner)
    (isolated / ".torchxconfig").write_text(
        "[local_cwd]\nlog_dir = logs\n[cli:run]\ndryrun = true\n"
    )
    code, out, err = invoke("run")
    assert (code, out) == (2, "") and "component: none given" in err
    assert "Run a component on a scheduler." in err
    assert reads == ["config", "run"]


def test_a_misspelt_cli_run_key_stops_torchx_run_before_anything_runs(
    isolated: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # left out, `dryrn = true` would launch for real: the command reading it stops instead
    (isolated / ".torchxconfig").write_text("[cli:run]\ndryrn = true\n")
    with caplog.at_level(logging.WARNING):
        code, out, err = invoke("status", "local_cwd://torchx/missing-1")
        assert code == 2 and "no such app" in err  # a command not reading [cli:run] goes on
        code, out, err = invoke("run", "utils.echo", "--msg", "launched")
    assert code == 2 and out == ""
    assert err == (
        f"torchx: error: {isolated / '.torchxconfig'} [cli:run] dryrn: got 'true'; not a "
        "setting of torchx run; did you mean 'dryrun'?\n"
    )
    assert caplog.messages == []
    (isolated / ".torchxconfig").unlink()  # `torchx list` reads [cli:run] too
    assert json.loads(invoke("list", "--json")[1]) == []  # nothing was launched


@pytest.mark.parametrize("handle", ["local_cwd://nosuch-abc", "nosuch-abc", "slurm://1234"])
def test_no_handle_is_suggested_for_an_app_not_found_here(isolated: Path, handle: str) -> None:
    # a local app that does not exist, or a remote scheduler, which is never asked
    code, _, err = invoke("status", handle)
    assert code == 2
    assert err == (
        f"torchx: error: app handle: got {handle!r}; expected SCHEDULER://SESSION/APP_ID as "
        "`torchx run` prints it, e.g. local_cwd://torchx/echo-1a2b3c\n"
    )


def test_the_dryrun_names_the_image_and_where_it_came_from(isolated: Path) -> None:
    from torchx.version import TORCHX_IMAGE

    # pytorch/torchx 0.7's published image, not a placeholder no registry has
    assert TORCHX_IMAGE == "ghcr.io/pytorch/torchx:0.7.0"
    # the image as it is: no workspace built into it
    k8s = ["run", "-s", "kubernetes", "--dryrun", "--workspace", ""]
    code, out, err = invoke(*k8s, "utils.echo")
    assert code == 0, err
    assert f"image: {TORCHX_IMAGE} (from the default of utils.echo; --image to change it)" in out
    assert out.count(TORCHX_IMAGE) >= 2  # the application and the request
    code, out, _ = invoke(*k8s, "utils.echo", "--image", "busybox")
    assert "image: busybox (from --image)" in out
    (isolated / ".torchxconfig").write_text("[component:utils.echo]\nimage = my/img:1\n")
    code, out, _ = invoke(*k8s, "--json", "utils.echo")
    assert json.loads(out)["image_origin"].endswith(".torchxconfig [component:utils.echo]")


def test_a_ctrl_c_as_the_handle_is_printed_still_cancels_the_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import builtins
    import signal

    from torchx.cli import _run

    handles: list[str] = []

    def print_then_interrupted(*args: object, **kwargs: object) -> None:
        builtins.print(*args, **kwargs)  # type: ignore[call-overload]
        if not handles and str(args[0]).startswith("local_cwd://"):
            handles.append(str(args[0]))
            raise KeyboardInterrupt  # the Ctrl-C lands just after the submit

    monkeypatch.setattr(_run, "print", print_then_interrupted, raising=False)
    # the interrupted run ignores further signals while it cancels: give them back after
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code, _, err = invoke("run", "utils.sh", "sleep 60")
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    (handle,) = handles
    assert code == 130, err
    assert f"torchx: interrupted; cancelled {handle}" in err
    code, out, _ = invoke("status", "--json", handle)
    assert json.loads(out)["state"] == "CANCELLED"


def test_torchx_run_sees_the_schedulers_a_patch_of_the_0_7_runner_api_gives(
    isolated: Path,
) -> None:
    from unittest import mock

    import torchx.runner.api as runner_api
    from torchx.schedulers import get_scheduler_factories

    mine = {"mine": get_scheduler_factories()["local_cwd"]}
    # a config file present makes torchx run build its runner over the config it read;
    # the patched scheduler's section is kept in it, not skipped as unknown
    (isolated / ".torchxconfig").write_text(
        "[cli:run]\ncomponent = utils.echo\n[mine]\nlog_dir = from-config\n"
    )
    with mock.patch.object(runner_api, "get_scheduler_factories", return_value=mine):
        code, out, err = invoke("run", "-s", "mine", "--dryrun", "--msg", "patched")
    assert code == 0, err
    assert "echo patched" in out
    assert "from-config" in out and "skipping" not in err, (out, err)


def test_completion_and_the_handle_hint_see_a_patched_scheduler(isolated: Path) -> None:
    from unittest import mock

    import torchx.runner.api as runner_api
    from torchx.cli._app_common import _complete_scheduler
    from torchx.runner import Runner
    from torchx.schedulers import SchedulerFactory
    from torchx.schedulers.local_scheduler import create_scheduler
    from torchx.specs import AppDef, Role, parse_app_handle

    def elsewhere(session_name: str, **params: Any) -> Any:
        # local_cwd keeping its apps apart from the default one's
        return create_scheduler(session_name, state_dir=isolated / "elsewhere")

    patched: dict[str, SchedulerFactory] = {"local_cwd": elsewhere, "mine": elsewhere}
    with Runner("torchx", patched) as runner:
        app = AppDef("hinted", [Role("r", image="", entrypoint="true")])
        app_id = parse_app_handle(runner.run(app, "local_cwd"))[2]
    with mock.patch.object(runner_api, "get_scheduler_factories", return_value=patched):
        assert _complete_scheduler("") == ["local_cwd", "mine"]
        code, _, err = invoke("status", f"local_cwd://{app_id}")
    assert code == 2
    assert f"did you mean local_cwd://torchx/{app_id}?" in err, err
