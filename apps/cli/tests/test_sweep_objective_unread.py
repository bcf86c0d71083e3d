"""``torchx status SWEEP --objective``: a trial whose newest objective may be in a record
the tracker could not read is left unranked and named, never ranked on an older value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torchx.cli._errors import CliError
from torchx.cli._sweep_cli import Ranking, print_status
from torchx.runner import SweepStatus, TrialStatus
from torchx.runtime.tracking import FsspecResultTracker, sweep_trial_key
from torchx.specs import AppState
from torchx.tracker.backend.fsspec import create

SWEEP = "local_cwd://torchx/sweep-abcd"
TRIALS = [f"local_cwd://torchx/train-{i}" for i in range(3)]


class _Recorded:
    """Answers sweep_status as the runner does for a sweep whose trials all succeeded
    (the trackers read here are real)."""

    def sweep_status(self, handle: str) -> SweepStatus:
        trials = [
            TrialStatus(i, {"lr": str(i)}, AppState.SUCCEEDED, 1, 0, h)
            for i, h in enumerate(TRIALS)
        ]
        return SweepStatus(handle, AppState.SUCCEEDED, "parallel", trials)


def _configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An fsspec tracker configured in ``tmp_path`` (the working directory); its root."""
    for key in ("TORCHX_TRACKERS", "TORCHX_TRACKER_FSSPEC_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "runs"
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={root}\n"
    )
    return root


def test_a_trial_whose_newest_objective_is_unread_is_left_unranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _configured(tmp_path, monkeypatch)
    tracker = create(str(root))
    for handle, objective in zip(TRIALS, (0.3, 0.2, 0.5), strict=True):
        tracker.add_metadata(handle, objective=objective)
    tracker.add_metadata(TRIALS[2], objective=0.1)  # trial 2's newest: the best of all
    newest = max(root.glob("*/metadata/*.json"), key=lambda p: p.name)  # named by time
    newest.write_text("{damaged")

    runner: Any = _Recorded()
    print_status(runner, SWEEP, json_out=True)
    out, err = capsys.readouterr()
    rows = json.loads(out)["trials"]
    ranked = [(t["index"], t["objective"], t["objective_unread"]) for t in rows]
    # not (2, 0.5), its older value; and told apart from a trial that recorded none
    assert ranked == [(1, 0.2, False), (0, 0.3, False), (2, None, True)]
    first, second = err.splitlines()
    assert first.startswith(f"torchx: warning: corrupt tracker record at {str(newest)!r} was")
    assert second == (
        f"torchx: warning: trial 2 is left unranked: a record of its run {TRIALS[2]} was not"
        " read (named above), so its objective may not be the one it recorded last; fix that"
        " record to rank it"
    )


def _recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial i's run recorded loss=i/10 and lr in the configured tracker."""
    tracker = create(str(_configured(tmp_path, monkeypatch)))
    for i, handle in enumerate(TRIALS):
        tracker.add_metadata(handle, loss=i / 10, lr=i)


def test_a_misspelt_objective_is_said_with_the_names_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(tmp_path, monkeypatch)
    runner: Any = _Recorded()
    print_status(runner, SWEEP, False, Ranking(objective="los"))
    out, err = capsys.readouterr()
    assert err == "torchx: warning: --objective: no trial recorded 'los'; they recorded: loss, lr\n"
    assert out.splitlines()[1].split() == ["#", "lr", "state", "attempts", "exit", "handle"]
    print_status(runner, SWEEP, True, Ranking(objective="loss", maximize=True))
    out, err = capsys.readouterr()
    assert err == ""
    assert [t["objective"] for t in json.loads(out)["trials"]] == [0.2, 0.1, 0.0]


def test_the_default_objective_unrecorded_is_no_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Runs record metadata for other uses; a status that named no objective says nothing.
    _recorded(tmp_path, monkeypatch)
    runner: Any = _Recorded()
    print_status(runner, SWEEP, json_out=False)
    out, err = capsys.readouterr()
    assert err == ""
    assert "objective" not in out


def test_a_tracker_folder_nothing_was_recorded_in_yet_ranks_nothing_and_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # trials that recorded nothing leave no folder: the sweep's status is still shown
    root = _configured(tmp_path, monkeypatch)
    runner: Any = _Recorded()
    print_status(runner, SWEEP, json_out=True)
    out, err = capsys.readouterr()
    assert err == "" and [t["objective"] for t in json.loads(out)["trials"]] == [None] * 3
    assert not root.exists()


def _stored(tmp_path: Path, *documents: dict[str, Any] | None) -> str:
    """A result tracker's URL where trial i stored ``documents[i]`` (None: nothing)."""
    url = (tmp_path / "results").as_uri()
    tracker = FsspecResultTracker(url)
    for i, document in enumerate(documents):
        if document is not None:
            tracker[sweep_trial_key(SWEEP, i)] = document
    return url


def _ranked(out: str) -> list[tuple[int, Any, bool]]:
    return [(t["index"], t["objective"], t["objective_unread"]) for t in json.loads(out)["trials"]]


def test_a_result_that_is_no_number_leaves_that_trial_unscored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _stored(tmp_path, {"val_loss": 0.3}, {"val_loss": "high"}, {"val_loss": 0.1})
    runner: Any = _Recorded()
    print_status(runner, SWEEP, True, Ranking("val_loss", results=url))
    out, err = capsys.readouterr()
    assert _ranked(out) == [(2, 0.1, False), (0, 0.3, False), (1, None, False)]
    assert err == (
        "torchx: warning: trial 1 is left unscored: it recorded val_loss='high', not a finite"
        " number; record a number as val_loss to rank it (or give --objective a numeric field)\n"
    )


def test_a_result_past_a_float_is_said_to_be_no_finite_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _stored(tmp_path, {"val_loss": "1e400"}, {"val_loss": 0.2})  # float: inf
    runner: Any = _Recorded()
    print_status(runner, SWEEP, True, Ranking("val_loss", results=url))
    out, err = capsys.readouterr()
    assert _ranked(out)[:2] == [(1, 0.2, False), (0, None, False)]
    assert "it recorded val_loss='1e400', not a finite number; record" in err


def test_a_url_where_no_trial_stored_a_document_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _stored(tmp_path, {"val_loss": 0.3})
    misspelt = (tmp_path / "reslts").as_uri()
    runner: Any = _Recorded()
    print_status(runner, SWEEP, False, Ranking("val_loss", results=misspelt))
    out, err = capsys.readouterr()
    assert err == (
        f"torchx: warning: --results: no trial stored a document under {misspelt}/sweep-abcd/"
        " (is it the URL the trials wrote to? a trial writes"
        " FsspecResultTracker(URL)[sweep_trial_key()] = {...})\n"
    )
    assert "val_loss" not in out


def test_an_unreadable_document_names_it_to_rewrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _stored(tmp_path, {"val_loss": 0.3}, {"val_loss": 0.2}, {"val_loss": 0.1})
    (tmp_path / "results" / "sweep-abcd" / "2.json").write_text("{damaged")
    runner: Any = _Recorded()
    print_status(runner, SWEEP, True, Ranking("val_loss", results=url))
    out, err = capsys.readouterr()
    assert _ranked(out) == [(1, 0.2, False), (0, 0.3, False), (2, None, True)]
    [line] = err.splitlines()
    assert line.startswith("torchx: warning: trial 2 is left unranked: its result document")
    assert line.endswith(f"; fix or rewrite {url}/sweep-abcd/2.json to rank it")


def test_a_url_that_cannot_be_reached_is_one_error_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # fsspec's http filesystem needs both; a plain install (the oldest Python's) has neither
    pytest.importorskip("aiohttp")
    pytest.importorskip("requests")
    runner: Any = _Recorded()
    url = "http://127.0.0.1:1/x"  # a loopback port where nothing listens
    with pytest.raises(CliError, match=rf"^--results: {url}: Cannot connect") as e:
        print_status(runner, SWEEP, False, Ranking("val_loss", results=url))
    assert "\n" not in str(e.value)
    assert capsys.readouterr().err == ""  # not one warning (and attempt) per trial


def test_a_backend_error_that_is_no_oserror_names_results(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("s3fs")
    # S3 with credentials given, at a loopback port where nothing listens: botocore's
    # connection error, which is no OSError.
    for name, value in {
        "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_MAX_ATTEMPTS": "1",
    }.items():
        monkeypatch.setenv(name, value)
    runner: Any = _Recorded()
    with pytest.raises(CliError, match=r"^--results: s3://bucket/x: .*127\.0\.0\.1:1"):
        print_status(runner, SWEEP, False, Ranking("val_loss", results="s3://bucket/x"))
    assert capsys.readouterr().err == ""


def _failing_on(monkeypatch: pytest.MonkeyPatch, key: str, error: Exception) -> None:
    """Reading ``key``'s document raises ``error`` (as a backend would, e.g. an object's
    own permission; the tests run as root, where a chmod denies nothing); the sweep's
    folder and every other document read as stored."""
    load = FsspecResultTracker._load

    def failing(self: FsspecResultTracker, asked: str) -> Any:
        if asked == key:
            raise error
        return load(self, asked)

    monkeypatch.setattr(FsspecResultTracker, "_load", failing)


@pytest.mark.parametrize("index", [0, 1])
def test_a_document_the_backend_refuses_leaves_that_trial_alone_unranked(
    index: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The first document read failing is no more the URL's failure than any other is:
    # the sweep's folder answers, so the other trials still rank.
    url = _stored(tmp_path, {"val_loss": 0.3}, {"val_loss": 0.2}, {"val_loss": 0.1})
    key = sweep_trial_key(SWEEP, index)
    _failing_on(monkeypatch, key, PermissionError(13, "Permission denied", f"x/{key}.json"))
    runner: Any = _Recorded()
    print_status(runner, SWEEP, True, Ranking("val_loss", results=url))
    out, err = capsys.readouterr()
    other = {0: (1, 0.2, False), 1: (0, 0.3, False)}[index]
    assert _ranked(out) == [(2, 0.1, False), other, (index, None, True)]
    [line] = err.splitlines()
    assert line.startswith(
        f"torchx: warning: trial {index} is left unranked: its result document"
        f" {url}/{key}.json was not read ([Errno 13] Permission denied"
    )


def test_a_bug_in_a_read_is_raised_as_it_is_not_blamed_on_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _stored(tmp_path, {"val_loss": 0.3}, {"val_loss": 0.2})
    _failing_on(monkeypatch, sweep_trial_key(SWEEP, 0), TypeError("unhashable type: 'list'"))
    runner: Any = _Recorded()
    with pytest.raises(TypeError, match="unhashable type"):
        print_status(runner, SWEEP, True, Ranking("val_loss", results=url))


def test_a_misspelt_objective_lists_ten_names_at_most(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _stored(tmp_path, {f"m{i:02}": i for i in range(15)})
    runner: Any = _Recorded()
    print_status(runner, SWEEP, False, Ranking("val_loss", results=url))
    names = ", ".join(f"m{i:02}" for i in range(10))
    assert capsys.readouterr().err == (
        f"torchx: warning: --objective: no trial recorded 'val_loss'; they recorded: {names}"
        " and 5 more\n"
    )
