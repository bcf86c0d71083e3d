"""A resume in progress holds the sweep's resume lock: a second resume is refused at once,
status and wait read the sweep as not ended, and a resume killed mid-way leaves the sweep
as it was. Real local_cwd trials; the lock is held by a real child process."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from torchx_test_fixtures_sweep_lock import holding_resume_lock, polling_reader
from torchx_test_fixtures_waiting import wait_until

from torchx.runner import Runner, Sweep, _sweeps, get_runner
from torchx.runner._sweep_lock import busy, lock_path, resuming, writer_path
from torchx.runner._sweeps import SweepPlan, sweep_id_of
from torchx.specs import AppState, SpecsError

# A trial fails for lr < 0; its second run (a resume's) first waits for the file ``go``.
COMPONENT = '''
import torchx.specs as specs


def trial(lr: float, out: str = ".") -> specs.AppDef:
    """Fails for lr < 0.

    Args:
        lr: learning rate
        out: where it records that it ran
    """
    ran = f"{out}/$TORCHX_SWEEP_INDEX.ran"
    script = (
        f"if [ -e {ran} ]; then while [ ! -e {out}/go ]; do sleep 0.05; done; fi; "
        f"touch {ran}; exit {int(lr < 0)}"
    )
    return specs.AppDef(
        "trial", roles=[specs.Role("t", image=".", entrypoint="sh", args=["-c", script])]
    )
'''


@pytest.fixture
def failed_sweep(tmp_path: Path) -> Iterator[tuple[Runner, str, Path]]:
    """A two-trial local sweep whose trial 1 failed."""
    (tmp_path / "comp.py").write_text(COMPONENT)
    out = tmp_path / "out"
    out.mkdir()
    runner = get_runner()
    sweep = Sweep.of(
        f"{tmp_path / 'comp.py'}:trial", [{"lr": 1}, {"lr": -1}], base_args=["--out", str(out)]
    )
    handle = runner.run_sweep(sweep, "local_cwd")
    st = runner.wait_sweep(handle, 0.05)
    assert st.state == AppState.FAILED, st.format()
    yield runner, handle, out
    (out / "go").touch()  # lets a resumed trial end
    runner.wait_sweep(handle, 0.05, timeout=120)


@contextlib.contextmanager
def resume_in_its_lock_window(
    runner: Runner, handle: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[], None]]:
    """A real resume, in a thread, held inside its lock window (planned, not yet
    submitted) until the test calls what this yields (or the block ends): it then submits,
    saves the record and lets go of the lock, and the call returns once it has."""
    inside, go = threading.Event(), threading.Event()
    answers: list[str] = []
    submit = _sweeps._submit

    def held(r: Runner, p: SweepPlan) -> str:
        if threading.current_thread() is thread:
            inside.set()
            assert go.wait(60)
        return submit(r, p)

    def resume() -> None:
        try:
            answers.append(runner.resume_sweep(handle))
        except SpecsError as e:
            answers.append(str(e))

    monkeypatch.setattr(_sweeps, "_submit", held)
    thread = threading.Thread(target=resume)
    thread.start()

    def finish() -> None:
        go.set()
        thread.join(60)
        assert answers == [handle]  # it submitted

    try:
        wait_until("the resume to plan", lambda: inside.is_set() or not thread.is_alive())
        assert not answers, answers
        yield finish
    finally:
        go.set()
        thread.join(60)


def test_a_status_read_as_a_resume_saves_reads_the_sweep_as_not_ended(
    failed_sweep: tuple[Runner, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A status that reads the record while a resume runs, and looks at the lock only
    after the resume saved and let go, has the old record: it must not call it ended."""
    runner, handle, _ = failed_sweep
    with resume_in_its_lock_window(runner, handle, monkeypatch) as finish:
        read = _sweeps.record_of

        def read_then_the_resume_ends(h: str) -> _sweeps.SweepRecord:
            record = read(h)
            if threading.current_thread() is threading.main_thread():
                finish()
            return record

        monkeypatch.setattr(_sweeps, "record_of", read_then_the_resume_ends)
        st = runner.sweep_status(handle)
        assert not st.is_terminal(), st.format()
        assert [t.state for t in st.trials] == [AppState.SUCCEEDED, AppState.PENDING]


def test_a_cancel_never_saves_over_what_a_resume_submitted(
    failed_sweep: tuple[Runner, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume that runs while a cancel has read the record (here each time the cancel
    reads it, twice at most) either is refused or is named in the record after the cancel:
    a job no record names could never be seen or cancelled again."""
    runner, handle, _ = failed_sweep
    read = _sweeps.record_of
    answers: list[str] = []

    def resume() -> None:
        try:
            answers.append(runner.resume_sweep(handle))
        except SpecsError as e:
            answers.append(str(e))

    def read_then_a_resume_runs(h: str) -> _sweeps.SweepRecord:
        record = read(h)
        if threading.current_thread() is threading.main_thread() and len(answers) < 2:
            resumer_thread = threading.Thread(target=resume)
            resumer_thread.start()
            resumer_thread.join(120)
        return record

    monkeypatch.setattr(_sweeps, "record_of", read_then_a_resume_runs)
    runner.cancel_sweep(handle)
    monkeypatch.setattr(_sweeps, "record_of", read)
    submitted = answers.count(handle)
    st = runner.sweep_status(handle)
    assert st.trials[1].attempts == 1 + submitted, (answers, st.format())
    assert st.is_terminal(), st.format()  # what the resume submitted was cancelled too
    assert submitted == 1, answers  # the first read is the check that the sweep exists
    # the read the cancel saves from is made holding the lock: a resume then is refused
    assert "a cancel of this sweep is running" in answers[1], answers


def test_a_resume_running_refuses_another_and_reads_as_not_ended(
    failed_sweep: tuple[Runner, str, Path],
) -> None:
    runner, handle, _ = failed_sweep
    with holding_resume_lock(handle) as holder:
        st = runner.sweep_status(handle)
        assert not st.is_terminal(), st.format()
        assert st.state == AppState.RUNNING  # one trial ended, one is to run again
        assert f"a resume of it is running (pid {holder.pid})" in st.msg
        assert [t.state for t in st.trials] == [AppState.SUCCEEDED, AppState.PENDING]
        assert st.trials[1].msg == f"being submitted again (pid {holder.pid})"
        assert st.msg in st.format().splitlines()[1]
        # wait waits on: it comes back only when its timeout ran out, not ended
        assert not runner.wait_sweep(handle, 0.01, timeout=0.2).is_terminal()
        for act in (runner.resume_sweep, runner.dryrun_resume_sweep, runner.cancel_sweep):
            with pytest.raises(SpecsError) as e:
                act(handle)
            assert handle in str(e.value) and f"pid {holder.pid}" in str(e.value)
            assert "\n" not in str(e.value)
        with pytest.raises(SpecsError, match="another resume of this sweep is running"):
            runner.resume_sweep(handle)
    st = runner.sweep_status(handle)
    assert st.state == AppState.FAILED and st.msg == ""


def test_a_killed_lock_holder_lets_go_and_the_sweep_reads_as_before(
    failed_sweep: tuple[Runner, str, Path],
) -> None:
    runner, handle, out = failed_sweep
    with holding_resume_lock(handle) as holder:
        holder.send_signal(signal.SIGKILL)
        assert holder.wait() == -signal.SIGKILL
    assert lock_path(sweep_id_of(handle) or "").exists()  # kept; only its lock went
    st = runner.sweep_status(handle)
    assert st.state == AppState.FAILED, st.format()
    assert [(t.state, t.attempts, t.exit_code) for t in st.trials] == [
        (AppState.SUCCEEDED, 1, 0),
        (AppState.FAILED, 1, 1),
    ]
    # and it can be resumed
    (out / "go").touch()
    runner.resume_sweep(handle)
    st = runner.wait_sweep(handle, 0.05, timeout=120)
    assert [(t.state, t.attempts) for t in st.trials] == [
        (AppState.SUCCEEDED, 1),
        (AppState.FAILED, 2),
    ]


def test_a_second_resume_while_the_first_plans_and_submits_is_refused(
    failed_sweep: tuple[Runner, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first resume is held between its plan and its submission; a second one then
    (when both would plan from the same record) is refused by the lock, and the failed
    trial is submitted once."""
    runner, handle, out = failed_sweep
    with resume_in_its_lock_window(runner, handle, monkeypatch) as finish:
        with pytest.raises(SpecsError) as e:
            runner.resume_sweep(handle)
        assert str(e.value) == str(busy(handle, f"pid {os.getpid()}"))
        finish()
    assert _attempts_once_ended(runner, handle, out) == [1, 2]


def _resume_to_its_end(runner: Runner, handle: str, out: Path) -> None:
    (out / "go").touch()
    runner.resume_sweep(handle)
    runner.wait_sweep(handle, 0.05, timeout=120)


def _cancel(runner: Runner, handle: str, out: Path) -> None:
    # What a cancel writes (here: cancelled; on Kubernetes also how ended trials ended,
    # before their pods go) would be erased by saving the older plan's copy of the record.
    runner.cancel_sweep(handle)


@pytest.mark.parametrize(
    ("change", "attempts"),
    [(_resume_to_its_end, [1, 3]), (_cancel, [1, 2])],
    ids=["resume", "cancel"],
)
def test_a_plan_made_before_the_record_changed_is_refused(
    failed_sweep: tuple[Runner, str, Path],
    change: Callable[[Runner, str, Path], None],
    attempts: list[int],
) -> None:
    runner, handle, out = failed_sweep
    stale = runner.dryrun_resume_sweep(handle)
    assert stale.indices == [1]
    change(runner, handle, out)
    with pytest.raises(SpecsError, match="changed since this plan was made"):
        runner.schedule_sweep(stale)
    fresh = runner.dryrun_resume_sweep(handle)
    assert runner.schedule_sweep(fresh) == handle
    assert _attempts_once_ended(runner, handle, out) == attempts


def _attempts_once_ended(runner: Runner, handle: str, out: Path) -> list[int]:
    """Each trial's attempts, once the resumed ones were let end and every trial ended."""
    (out / "go").touch()
    return [t.attempts for t in runner.wait_sweep(handle, 0.05, timeout=120).trials]


def test_a_resume_that_cannot_write_beside_the_record_says_so_in_one_line(
    failed_sweep: tuple[Runner, str, Path],
) -> None:
    runner, handle, _ = failed_sweep
    lock = lock_path(sweep_id_of(handle) or "")
    lock.mkdir()  # what stands in the lock file's place cannot be opened as one
    try:
        with pytest.raises(SpecsError) as e:
            runner.resume_sweep(handle)
        assert f"cannot open {lock}" in str(e.value) and "\n" not in str(e.value)
        assert runner.sweep_status(handle).state == AppState.FAILED  # nothing changed
    finally:
        lock.rmdir()


SWEEP_ID = "sweep-abcdefgh"
SWEEP = f"local_cwd://torchx/{SWEEP_ID}"


def test_a_reader_inside_its_lock_test_delays_a_resume_and_never_refuses_it() -> None:
    """``status`` tests the resume lock by taking it shared for an instant; a resume that
    meets that instant waits it out (here the test holds the instant open)."""
    lock = lock_path(SWEEP_ID)
    lock.parent.mkdir(parents=True)
    reader = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(reader, fcntl.LOCK_SH)  # what resumer() holds between its try and close
    entered = threading.Event()
    refused: list[SpecsError] = []

    def resume() -> None:
        try:
            with resuming(SWEEP_ID, SWEEP):
                entered.set()
        except SpecsError as e:
            refused.append(e)

    resumer_thread = threading.Thread(target=resume)
    resumer_thread.start()
    try:
        wait_until(
            "the resume to take the writer lock, or to give up",
            lambda: (
                not resumer_thread.is_alive()
                or (writer_path(SWEEP_ID).exists() and writer_path(SWEEP_ID).read_text())
            ),
        )
        assert refused == [] and not entered.is_set()  # it waits for the reader
    finally:
        os.close(reader)
        resumer_thread.join(60)
    assert refused == [] and entered.is_set()


def test_a_polling_reader_never_makes_a_resume_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``torchx wait`` polls the lock in a loop (here as fast as it can) while resumes
    take it, one after another: none is refused, though many meet a poll's instant."""
    lock_path(SWEEP_ID).parent.mkdir(parents=True)
    met = 0  # the resumes' exclusive tries that a poll's shared instant turned away
    flock = fcntl.flock

    def counting_flock(fd: int, how: int) -> None:
        nonlocal met
        try:
            flock(fd, how)
        except BlockingIOError:
            met += (how & fcntl.LOCK_EX) != 0  # only the reader contends: no other writer runs
            raise

    monkeypatch.setattr(fcntl, "flock", counting_flock)
    refused = rounds = 0
    with polling_reader(SWEEP_ID) as reader:
        while rounds < 1000 or (met == 0 and rounds < 10_000):  # until the race was run
            rounds += 1
            # A resume removes its lock file as it lets go; made again here (as a resume
            # killed before its removal leaves it), the file is there for the reader's
            # polls to take shared between resumes, so that the next resume meets them.
            lock_path(SWEEP_ID).touch()
            try:
                with resuming(SWEEP_ID, SWEEP):
                    pass
            except SpecsError:
                refused += 1
        assert reader.poll() is None, "the reader stopped polling before the resumes ended"
    assert refused == 0
    assert met > 0, "no resume met a reader's instant: the race was not exercised"


@pytest.mark.parametrize("act", ["resume_sweep", "cancel_sweep", "dryrun_resume_sweep"])
def test_a_mistyped_sweep_is_no_such_sweep_and_leaves_no_lock_file(act: str) -> None:
    runner = get_runner()
    with pytest.raises(SpecsError, match="no such sweep here"):
        getattr(runner, act)(SWEEP)
    assert not lock_path(SWEEP_ID).exists() and not writer_path(SWEEP_ID).exists()


def test_a_filesystem_without_file_locks_reads_as_not_resumed_and_refuses_a_resume(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    from torchx.runner._sweep_lock import resumer

    lock_path(SWEEP_ID).parent.mkdir(parents=True)
    lock_path(SWEEP_ID).touch()

    def no_locks(fd: int, how: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    assert resumer(SWEEP_ID) is None
    with pytest.raises(SpecsError) as e, resuming(SWEEP_ID, SWEEP):
        pass
    assert f"cannot lock {writer_path(SWEEP_ID)}" in str(e.value) and "\n" not in str(e.value)


def test_a_filesystem_without_file_locks_still_cancels_a_sweep(
    failed_sweep: tuple[Runner, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # no resume can run there to race the cancel (a resume is refused), so none is needed
    import errno

    runner, handle, _ = failed_sweep

    def no_locks(fd: int, how: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_locks)
    runner.cancel_sweep(handle)
    assert runner.sweep_status(handle).state == AppState.CANCELLED
