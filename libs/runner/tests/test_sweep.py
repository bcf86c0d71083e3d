"""The sweep model: grids and explicit trials, checked against the component's types."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from torchx.runner import Sweep, SweepError
from torchx.runner._sweep import check_sweep
from torchx.specs import AppDef, AppState, ComponentSchema, Role


def trainer(lr: float, bs: int = 32, name: str = "t", fast: bool = False) -> AppDef:
    """Trains.

    Args:
        lr: learning rate
        bs: batch size
    """
    return AppDef(name, roles=[Role("t", image=".", entrypoint="echo", args=[str(lr), str(bs)])])


SCHEMA = ComponentSchema(trainer, "trainer")


def test_grid_is_every_combination_last_argument_fastest() -> None:
    sweep = Sweep.grid("trainer", {"lr": [0.1, 0.01], "bs": [8, 16, 32]}, parallel=2)
    assert len(sweep) == 6
    assert sweep.trials[0] == {"lr": "0.1", "bs": "8"}
    assert sweep.trials[1] == {"lr": "0.1", "bs": "16"}
    assert sweep.trials[5] == {"lr": "0.01", "bs": "32"}
    assert sweep.parallel == 2
    check_sweep(SCHEMA, sweep)


def test_explicit_trials_keep_their_order_and_text() -> None:
    sweep = Sweep.of("trainer", [{"lr": 1e-3, "fast": True}, {"lr": 2}])
    assert sweep.trials == ({"lr": "0.001", "fast": "true"}, {"lr": "2"})
    assert sweep.names == ("lr", "fast")
    check_sweep(SCHEMA, sweep)


def test_trial_argv_puts_trial_values_before_the_programs_args() -> None:
    sweep = Sweep.grid("trainer", {"lr": [0.5]}, base_args=["--bs", "4", "--", "x"])
    assert sweep.trial_argv(0) == ["--lr=0.5", "--bs", "4", "--", "x"]
    _args, kwargs = SCHEMA.parse(sweep.trial_argv(0)[:-2])
    assert kwargs == {"lr": 0.5, "bs": 4}


def shell(*script: str, num_replicas: int = 1) -> AppDef:
    """Runs a shell command.

    Args:
        script: the command line
        num_replicas: how many copies
    """
    role = Role("sh", image=".", entrypoint="sh", args=["-c", " ".join(script)])
    role.num_replicas = num_replicas
    return AppDef("sh", roles=[role])


def test_a_swept_flag_reaches_a_component_whose_args_are_given_without_dashes() -> None:
    schema = ComponentSchema(shell, "shell")
    sweep = Sweep.grid("shell", {"num_replicas": [2]}, base_args=["echo", "hi"])
    check_sweep(schema, sweep)
    (role,) = schema.call(sweep.trial_argv(0)).roles
    assert (role.num_replicas, role.args) == (2, ["-c", "echo hi"])


def test_cli_grid() -> None:
    sweep = Sweep.from_cli("trainer", ["lr=1e-3,1e-4", "bs=32, 64"], ["--name", "x"], 2)
    assert [t["bs"] for t in sweep.trials] == ["32", "64", "32", "64"]
    assert sweep.base_args == ("--name", "x")


@pytest.mark.parametrize(
    ("specs", "words"),
    [
        (["lr="], ["--sweep lr", "grid is empty", "--sweep lr=V1,V2"]),
        (["lr"], ["--sweep", "NAME=V1,V2"]),
        (["lr=1", "lr=2"], ["swept twice"]),
        ([], ["at least one argument"]),
    ],
)
def test_cli_bad_sweeps_are_one_line_naming_the_fix(specs: list[str], words: list[str]) -> None:
    with pytest.raises(SweepError) as e:
        Sweep.from_cli("trainer", specs, [], 0)
    assert "\n" not in str(e.value)
    for w in words:
        assert w in str(e.value)


def test_value_of_the_wrong_type_names_argument_and_type() -> None:
    with pytest.raises(SweepError) as e:
        check_sweep(SCHEMA, Sweep.grid("trainer", {"lr": [0.1, "fast"]}))
    # the argument, the value, the type once and values that would do
    assert str(e.value) == (
        "sweep argument 'lr': got 'fast'; trainer --lr takes float; e.g. --sweep lr=0.1,0.01"
    )
    with pytest.raises(SweepError) as e:
        check_sweep(SCHEMA, Sweep.grid("trainer", {"lr": [1], "bs": ["1.5"]}))
    assert str(e.value) == (
        "sweep argument 'bs': got '1.5'; trainer --bs takes int; e.g. --sweep bs=1,2"
    )
    with pytest.raises(SweepError) as e:
        check_sweep(SCHEMA, Sweep.grid("trainer", {"lr": [1], "fast": ["maybe"]}))
    assert str(e.value) == (
        "sweep argument 'fast': got 'maybe'; trainer --fast takes a bool: true or false; "
        "e.g. --sweep fast=true,false"
    )


def test_unknown_argument_is_named_once_with_the_near_one() -> None:
    with pytest.raises(SweepError) as e:
        check_sweep(SCHEMA, Sweep.grid("trainer", {"lrr": [1]}))
    assert str(e.value) == (
        "sweep argument: got 'lrr'; trainer has no such argument; did you mean 'lr'?"
    )


def star(*args: str) -> AppDef:
    """Echoes.

    Args:
        args: what to echo
    """
    return AppDef("e", roles=[Role("e", image=".", entrypoint="echo", args=list(args))])


@pytest.mark.parametrize(
    ("fn", "name", "message"),
    [
        (
            star,
            "lr",
            "sweep argument: got 'lr'; star has no named argument for a sweep to vary "
            "(only *args); a sweep varies named, typed arguments (none here): sweep a "
            "component that takes the varying value as one",
        ),
        (
            shell,
            "script",
            "sweep argument: got 'script'; shell takes it as *script, which a sweep cannot "
            "vary; a sweep varies named, typed arguments (num_replicas): sweep a component "
            "that takes the varying value as one",
        ),
    ],
)
def test_sweeping_a_components_star_args_says_a_sweep_varies_named_arguments(
    fn: Callable[..., AppDef], name: str, message: str
) -> None:
    # the list of known arguments was the message's end, empty for a component of *args only
    schema = ComponentSchema(fn, fn.__name__)
    with pytest.raises(SweepError) as e:
        check_sweep(schema, Sweep.grid(schema.name, {name: [1, 2]}))
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "lr=0.1,,0.2",
            "--sweep lr: got '0.1,,0.2'; value 2 is empty (a doubled or trailing comma); "
            "did you mean --sweep lr=0.1,0.2?",
        ),
        (
            "lr=0.1, ",
            "--sweep lr: got '0.1, '; value 2 is empty (a doubled or trailing comma); "
            "did you mean --sweep lr=0.1?",
        ),
    ],
)
def test_an_empty_value_is_refused_not_dropped(spec: str, message: str) -> None:
    with pytest.raises(SweepError) as e:
        Sweep.from_cli("trainer", [spec], [], 0)
    assert str(e.value) == message


def test_attempts_count_the_runs_that_started() -> None:
    from torchx.runner._sweep_record import TrialRecord
    from torchx.runner._sweeps import _started

    def started(attempts: list[str], state: AppState, msg: str = "") -> int:
        return _started(TrialRecord(0, {"lr": "1"}, attempts), state, msg)

    assert started([], AppState.PENDING) == 0  # not submitted yet
    assert started(["a"], AppState.PENDING) == 0  # submitted, waiting for its turn
    assert started(["a"], AppState.RUNNING) == 1
    assert started(["a"], AppState.CANCELLED) == 1
    assert started(["a", "b"], AppState.PENDING) == 1  # re-run by --resume, waiting
    assert started(["a", "b"], AppState.FAILED) == 2
    # Slurm put it back in the queue after it ran (preempted): it did start
    assert started(["a"], AppState.PENDING, "REQUEUED") == 1


def test_attempts_count_restarts_and_requeues_the_status_says() -> None:
    from torchx.runner._sweep_record import TrialRecord
    from torchx.runner._sweeps import _started

    def started(attempts: list[str], state: AppState, reruns: int) -> int:
        return _started(TrialRecord(0, {"lr": "1"}, attempts), state, "", reruns)

    # max_retries=2 spent: three runs, as the app's status says (Num Restarts: 2)
    assert started(["a"], AppState.FAILED, 2) == 3
    assert started(["a"], AppState.RUNNING, 1) == 2
    # requeued after one run, waiting to run again: the one run started
    assert started(["a"], AppState.PENDING, 1) == 1
    # requeued by Slurm with a count of its runs: not counted twice
    assert _started(TrialRecord(0, {}, ["a"]), AppState.PENDING, "REQUEUED", 1) == 1
    # re-run by --resume after an earlier submission, which counts one
    assert started(["a", "b"], AppState.FAILED, 2) == 4


@pytest.mark.parametrize(
    ("states", "overall"),
    [
        ([AppState.CANCELLED, AppState.CANCELLED], AppState.CANCELLED),
        ([AppState.CANCELLED, AppState.SUCCEEDED], AppState.CANCELLED),
        ([AppState.CANCELLED, AppState.FAILED], AppState.FAILED),
        ([AppState.FAILED, AppState.SUCCEEDED], AppState.FAILED),
        ([AppState.SUCCEEDED, AppState.SUCCEEDED], AppState.SUCCEEDED),
        ([AppState.CANCELLED, AppState.RUNNING], AppState.RUNNING),
    ],
)
def test_a_sweep_is_cancelled_when_no_trial_failed_and_one_was_cancelled(
    states: list[AppState], overall: AppState
) -> None:
    from torchx.runner._sweep_record import SweepRecord
    from torchx.runner._sweeps import TrialStatus, _overall

    trials = [TrialStatus(i, {}, s, 1, None, None) for i, s in enumerate(states)]
    record = SweepRecord("sweep-abcd2345", "local_cwd", "torchx", "c.py:f", [], 0, "group", [])
    # read while the cancel has ended the trials but not yet recorded itself (alive False)
    assert _overall(record, trials, alive=False) == overall
    # once the cancel is recorded, a trial its SIGTERM made fail does not make it FAILED
    record.cancelled = True
    ended = overall if overall in (AppState.SUCCEEDED, AppState.RUNNING) else AppState.CANCELLED
    assert _overall(record, trials, alive=False) == ended


def test_argument_both_shared_and_swept_is_refused() -> None:
    with pytest.raises(SweepError, match="give it once"):
        check_sweep(SCHEMA, Sweep.grid("trainer", {"lr": [1]}, base_args=["--lr", "2"]))


def test_empty_trials_and_bad_parallel_are_refused() -> None:
    with pytest.raises(SweepError, match="at least one set"):
        Sweep.of("trainer", [])
    with pytest.raises(SweepError, match="at least one value"):
        Sweep.grid("trainer", {"lr": []})
    with pytest.raises(SweepError, match="parallel"):
        Sweep.grid("trainer", {"lr": [1]}, parallel=-1)


def test_the_table_heads_the_ranking_column_with_the_recorded_name() -> None:
    from torchx.runner._sweeps import SweepStatus, TrialStatus

    def trial(index: int, loss: float | None) -> TrialStatus:
        return TrialStatus(
            index, {"lr": str(index)}, AppState.SUCCEEDED, 1, 0, f"h/{index}", objective=loss
        )

    st = SweepStatus(
        "local_cwd://t/s", AppState.SUCCEEDED, "local", [trial(0, 0.5), trial(1, 0.25)]
    )
    st.rank()
    lines = st.format("val_loss").splitlines()
    assert lines[1].split() == ["#", "lr", "val_loss", "state", "attempts", "exit", "handle"]
    assert [line.split()[:3] for line in lines[2:]] == [["1", "1", "0.25"], ["0", "0", "0.5"]]
    assert st.format().splitlines()[1].split()[2] == "objective"


def test_trials_and_records_use_the_schedulers_sweep_names() -> None:
    """The names the schedulers read back from a trial (``torchx list``) are the runner's."""
    from torchx.runner._sweep_record import is_sweep_id
    from torchx.runner._sweeps import ENV_SWEEP_ID, ENV_SWEEP_INDEX
    from torchx.schedulers import sweep_names

    assert (ENV_SWEEP_ID, ENV_SWEEP_INDEX) == (
        sweep_names.ENV_SWEEP_ID,
        sweep_names.ENV_SWEEP_INDEX,
    )
    assert is_sweep_id("sweep-abcd") and not is_sweep_id("sweep-abc")
    assert not is_sweep_id("xsweep-abcd") and not is_sweep_id("sweep-abcde-1")  # whole id


@pytest.mark.parametrize(
    ("state", "codes", "expected"),
    [
        (AppState.RUNNING, [3, None], None),  # one replica failed, the app may retry it
        (AppState.RUNNING, [0, None], None),
        (AppState.PENDING, [], None),
        (AppState.FAILED, [0, 3], 3),
        (AppState.SUCCEEDED, [0, 0], 0),
        (AppState.SUCCEEDED, [], 0),
    ],
)
def test_a_trial_has_an_exit_code_only_once_it_ended(
    state: AppState, codes: list[int | None], expected: int | None
) -> None:
    from torchx.runner._sweep_status import exit_code
    from torchx.specs import AppStatus, ReplicaStatus, RoleStatus

    replicas = [
        ReplicaStatus(i, AppState.RUNNING if c is None else AppState.SUCCEEDED, "r", exit_code=c)
        for i, c in enumerate(codes)
    ]
    assert exit_code(AppStatus(state, roles=[RoleStatus("r", replicas)])) == expected


def _record_json(**extra: object) -> dict[str, object]:
    """A sweep record as version 1 wrote it (no scheduler parameters, no defaults)."""
    return {
        "sweep_id": "sweep-abcd2345",
        "scheduler": "local_docker",
        "session": "torchx",
        "component": "utils.echo",
        "base_args": [],
        "parallel": 2,
        "mode": "group",
        "trials": [{"index": 0, "args": {"msg": "a"}, "attempts": ["echo-x"]}],
        "version": 1,
        **extra,
    }


def test_a_record_written_before_scheduler_params_were_kept_still_loads() -> None:
    from torchx.runner._sweep_record import RECORD_VERSION, SweepRecord

    record = SweepRecord.from_json(_record_json(), "old.json")
    assert (record.scheduler_params, record.component_defaults) == ({}, {})
    assert record.trials[0].attempts == ["echo-x"]
    assert record.to_json()["version"] == RECORD_VERSION == 2  # saved again as the new one
    params = {"scheduler_params": {"base_url": "unix:///d.sock"}, "version": 2}
    again = SweepRecord.from_json(_record_json(**params), "new.json")
    assert again.scheduler_params == {"base_url": "unix:///d.sock"}


def test_a_record_of_a_later_version_is_refused_in_one_line() -> None:
    from torchx.runner._sweep_record import SweepRecord
    from torchx.specs import SpecsError

    with pytest.raises(SpecsError, match="version 3 is not 2; use the torchx that wrote it"):
        SweepRecord.from_json(_record_json(version=3), "later.json")


def test_the_record_holding_scheduler_params_is_private_to_its_owner() -> None:
    import os
    import stat

    from torchx.runner._sweep_record import SweepRecord, load, record_path, save

    record = SweepRecord.from_json(_record_json(scheduler_params={"token": "s3cret"}), "r.json")
    path = record_path(record.sweep_id)
    path.parent.mkdir(mode=0o755, parents=True)  # as an earlier torchx left it
    os.chmod(path.parent, 0o755)
    old = os.umask(0o022)
    try:
        save(record)
        save(record)  # a second save replaces the file, still private
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left
    loaded = load(record.sweep_id)
    assert loaded is not None and loaded.scheduler_params == {"token": "s3cret"}


def test_rank_puts_succeeded_trials_first_and_unscored_or_nan_ones_last() -> None:
    """A NaN objective (a diverged loss) is no best, and a trial that recorded its loss and
    then failed ranks after every trial that succeeded, whichever way the ranking goes."""
    from torchx.runner._sweeps import SweepStatus, TrialStatus

    nan = float("nan")
    rows = [
        (0.5, AppState.SUCCEEDED),
        (nan, AppState.SUCCEEDED),
        (0.1, AppState.SUCCEEDED),
        (0.05, AppState.FAILED),
        (None, AppState.SUCCEEDED),
        (0.2, AppState.SUCCEEDED),
        (float("-inf"), AppState.SUCCEEDED),
        (0.9, AppState.CANCELLED),
        (None, AppState.FAILED),
    ]
    trials = [
        TrialStatus(i, {}, state, 1, 0, None, objective=o) for i, (o, state) in enumerate(rows)
    ]
    st = SweepStatus("h", AppState.FAILED, "group", trials)
    st.rank()
    assert [t.index for t in st.trials] == [2, 5, 0, 1, 4, 6, 3, 7, 8]
    st.rank(maximize=True)
    assert [t.index for t in st.trials] == [0, 5, 2, 1, 4, 6, 7, 3, 8]


def test_a_str_where_a_list_is_expected_is_named_with_the_fix() -> None:
    with pytest.raises(SweepError, match=r"sweep argument 'n': got '12'; give a list.*\['12'\]"):
        Sweep.grid("trainer", {"n": "12"})
    with pytest.raises(SweepError, match=r"base_args: got '--x 3'; .*\['--x', '3'\]"):
        Sweep.grid("trainer", {"lr": [1]}, base_args="--x 3")
    with pytest.raises(SweepError, match=r"base_args: got '--x 3'; .*\['--x', '3'\]"):
        Sweep.of("trainer", [{"lr": 1}], base_args="--x 3")
    with pytest.raises(SweepError, match=r"base_args token: got 3; give it as text, e.g. '3'"):
        Sweep.of("trainer", [{"lr": 1}], base_args=["--x", 3])  # type: ignore[list-item]


def test_a_name_that_is_not_the_parameters_spelling_is_refused_with_it() -> None:
    """``fast-x`` would reach the trials as TORCHX_SWEEP_ARG_FAST-X (no env name) and be
    another column than ``fast_x``: the parameter's own spelling is asked for."""

    def comp(fail_bs: int = -1) -> AppDef:
        return AppDef("c", roles=[Role("c", image=".", entrypoint="echo")])

    schema = ComponentSchema(comp, "comp")
    with pytest.raises(SweepError, match=r"got 'fail-bs'; comp calls it fail_bs; write it as"):
        check_sweep(schema, Sweep.of("comp", [{"fail-bs": 1}]))
    with pytest.raises(SweepError, match=r"got 'fail-bs'"):
        check_sweep(schema, Sweep.of("comp", [{"fail_bs": 1}, {"fail-bs": 2}]))
    check_sweep(schema, Sweep.of("comp", [{"fail_bs": 1}]))
