"""``torchx tracker``: tables, JSON and errors over a real fsspec tracker on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app
from torchx.tracker.backend.fsspec import create

cli = CliRunner()
PARENT = "local_cwd://torchx/train-1"
CHILD = "local_cwd://torchx/eval-2"


def invoke(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ("TORCHX_TRACKERS", "TORCHX_TRACKER_FSSPEC_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    root = tmp_path / "runs"
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={root}\n"
    )
    tracker = create(str(root))
    tracker.add_metadata(PARENT, lr=0.1, layers=[8, 4])
    tracker.add_artifact(PARENT, "model", "/ckpt/model.pt", {"epoch": 3})
    tracker.add_source(CHILD, PARENT, artifact_name="model")
    return root


def test_tables(recorded: Path) -> None:
    code, out, _ = invoke("tracker", "list", "jobs")
    assert code == 0 and out.splitlines() == ["JOB ID", CHILD, PARENT]
    code, out, _ = invoke("tracker", "list", "metadata", PARENT)
    assert out.splitlines() == ["KEY     VALUE", "lr      0.1", "layers  [8, 4]"]
    code, out, _ = invoke("tracker", "list", "artifacts", PARENT)
    assert out.splitlines()[1].split() == ["model", "/ckpt/model.pt", '{"epoch":', "3}"]
    code, out, _ = invoke("tracker", "list", "lineage", PARENT)
    assert out.splitlines()[1].split() == ["descendant", CHILD, "model"]
    code, out, _ = invoke("tracker", "list", "experiments")
    assert out.splitlines() == ["EXPERIMENT", "default"]


def test_json(recorded: Path) -> None:
    def as_json(*args: str) -> object:
        code, out, err = invoke("tracker", "list", *args, "--json")
        assert code == 0, err
        return json.loads(out)

    assert as_json("jobs", "--parent-run-id", PARENT) == [{"job_id": CHILD}]
    assert as_json("metadata", PARENT) == {
        "run_id": PARENT,
        "metadata": {"lr": 0.1, "layers": [8, 4]},
    }
    assert as_json("artifacts", PARENT, "--artifact", "nope") == []
    assert as_json("lineage", CHILD, "--sources-only") == {
        "run_id": CHILD,
        "lineage": [{"relation": "source", "run_id": PARENT, "artifact": "model"}],
    }
    assert as_json("lineage", CHILD, "--descendants-only") == {"run_id": CHILD, "lineage": []}


def test_errors_are_one_line(recorded: Path, tmp_path: Path) -> None:
    code, _, err = invoke("tracker", "list", "jobs", "--tracker", "mlflow")
    assert (
        code == 2 and err == "torchx: error: --tracker: got 'mlflow'; configured trackers: fsspec\n"
    )
    code, _, err = invoke(
        "tracker", "list", "lineage", PARENT, "--sources-only", "--descendants-only"
    )
    assert code == 2 and "give one of them" in err
    (tmp_path / ".torchxconfig").unlink()
    code, _, err = invoke("tracker", "list", "jobs")
    assert code == 2 and "none configured" in err and "[torchx:tracker]" in err


def test_a_folder_nothing_was_recorded_in_yet_lists_nothing_and_names_it(
    recorded: Path, tmp_path: Path
) -> None:
    # A freshly configured tracker is no error; the one line on stderr shows a typo.
    typo = tmp_path / "rnus"
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={typo}\n"
    )
    note = (
        f"torchx: warning: fsspec tracker config '{typo}': the folder does not exist, so"
        " nothing has been recorded there yet; a run's first record makes it (if the URL is"
        " mistyped, correct config= under [tracker:NAME] in .torchxconfig)\n"
    )
    empty_json: list[tuple[list[str], object]] = [
        (["experiments"], []),
        (["jobs"], []),
        (["jobs", "--experiment", "default"], []),
        (["metadata", PARENT], {"run_id": PARENT, "metadata": {}}),
        (["artifacts", PARENT], []),
        (["lineage", PARENT], {"run_id": PARENT, "lineage": []}),
    ]
    for args, document in empty_json:
        code, out, err = invoke("tracker", "list", *args)
        assert (code, err) == (0, note), args
        assert len(out.splitlines()) == 1, args  # the table's header alone
        code, out, err = invoke("tracker", "list", *args, "--json")
        assert (code, err) == (0, note), args
        assert json.loads(out) == document, args
        assert not typo.exists(), args
    create(str(typo)).add_metadata(PARENT, lr=0.1)  # the first record: no line any more
    code, out, err = invoke("tracker", "list", "jobs", "--json")
    assert (code, err) == (0, "") and json.loads(out) == [{"job_id": PARENT}]


def test_a_run_nothing_was_recorded_under_is_named_on_stderr(recorded: Path) -> None:
    for what in ("metadata", "artifacts", "lineage"):
        code, out, err = invoke("tracker", "list", what, "local_cwd://torchx/typo-1")
        assert code == 0 and len(out.splitlines()) == 1  # the header alone, as before
        assert err == (
            "torchx: warning: run 'local_cwd://torchx/typo-1': nothing is recorded under it; "
            "`torchx tracker list jobs` lists the runs\n"
        )
    code, _, err = invoke("tracker", "list", "lineage", CHILD, "--descendants-only")
    assert code == 0 and err == ""  # a known run with nothing to show is not warned about


def test_a_tracker_that_cannot_list_runs_still_gives_an_empty_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A custom tracker (written against 0.7's TrackerBase) whose run_ids() fails: the
    # empty listing stays what it was (exit 0, no warning).
    for key in ("TORCHX_TRACKERS", "TORCHX_TRACKER_FSSPEC_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "unlisting_tracker.py").write_text(
        "from torchx.tracker import TrackerBase\n\n"
        "class Unlisting(TrackerBase):\n"
        "    def add_artifact(self, run_id, name, path, metadata=None): pass\n"
        "    def artifacts(self, run_id): return {}\n"
        "    def add_metadata(self, run_id, **kwargs): pass\n"
        "    def metadata(self, run_id): return {}\n"
        "    def add_source(self, run_id, source_id, artifact_name=None): pass\n"
        "    def sources(self, run_id, artifact_name=None): return []\n"
        "    def run_ids(self, **kwargs): raise ConnectionError('tracking server down')\n\n"
        "def create(config):\n"
        "    return Unlisting()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / ".torchxconfig").write_text("[torchx:tracker]\nremote=unlisting_tracker:create\n")
    for what in ("metadata", "artifacts"):
        code, out, err = invoke("tracker", "list", what, PARENT)
        assert (code, len(out.splitlines()), err) == (0, 1, ""), err


def test_a_record_that_cannot_be_read_is_named_in_one_line_and_the_others_shown(
    recorded: Path, tmp_path: Path
) -> None:
    options = tmp_path / "tracker.conf"
    options.write_text(f"protocol=file\nroot_path={recorded}\nmax_record_bytes=300\n")
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={options}\n"
    )
    create(str(recorded)).add_metadata(PARENT, notes="x" * 1000)  # over the 300 read here
    [big] = [p for p in recorded.glob("*/metadata/*.json") if p.stat().st_size > 300]
    skipped = (
        f"torchx: warning: tracker record at {str(big)!r} was not read: it is"
        f" {big.stat().st_size} bytes, over the read limit max_record_bytes (300); to read it,"
        f" set max_record_bytes=N in the options file {options} with N at least its size, or"
        " read it with fsspec at that path; without it, a key this record set may show an"
        " older value, or none\n"
    )
    code, out, err = invoke("tracker", "list", "metadata", PARENT)
    assert (code, err) == (0, skipped)
    assert out.splitlines() == ["KEY     VALUE", "lr      0.1", "layers  [8, 4]"]
    code, out, err = invoke("tracker", "list", "metadata", PARENT, "--json")
    assert (code, err) == (0, skipped)
    assert json.loads(out) == {"run_id": PARENT, "metadata": {"lr": 0.1, "layers": [8, 4]}}

    # a damaged record is named the same way, whichever run's it is
    [source] = recorded.glob("*/sources/*.json")
    source.write_text("{")
    code, out, err = invoke("tracker", "list", "lineage", PARENT)
    assert code == 0 and out.splitlines() == ["RELATION  RUN ID  ARTIFACT"]
    assert err.startswith(f"torchx: warning: corrupt tracker record at {str(source)!r} was")
    assert len(err.splitlines()) == 1 and "not valid JSON" in err


def test_lineage_from_a_backend_written_for_07(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.7's own backends raised NotImplementedError from lineage, as plugins written for
    it may: the lineage is then built from the backend's sources and run ids."""
    (tmp_path / "lineageless07.py").write_text(
        "from torchx.tracker.backend.fsspec import FsspecTracker, create as fsspec_create\n"
        "class Lineageless(FsspecTracker):\n"
        "    def lineage(self, run_id):\n"
        "        raise NotImplementedError\n"
        "def create(config):\n"
        "    return Lineageless(fsspec_create(config).fs, config)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nold=lineageless07:create\n\n[tracker:old]\nconfig={recorded}\n"
    )
    code, out, err = invoke("tracker", "list", "lineage", PARENT)
    assert (code, err) == (0, "")
    assert out.splitlines()[1].split() == ["descendant", CHILD, "model"]
    code, out, err = invoke("tracker", "list", "lineage", CHILD, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["lineage"] == [
        {"relation": "source", "run_id": PARENT, "artifact": "model"}
    ]


def test_run_with_a_parent_says_when_no_tracker_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("TORCHX_TRACKERS", "TORCHX_TRACKER_FSSPEC_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    run = ("run", "--dryrun", "--scheduler", "local_cwd", "--parent_run_id", "hpo/search")
    code, _, err = invoke(*run, "utils.echo", "--msg", "hi")
    assert code == 0
    assert err.splitlines() == [
        "torchx: warning: --parent_run_id: got 'hpo/search'; no tracker is configured, so"
        " nothing records it (the app still sees TORCHX_PARENT_RUN_ID); add a"
        " [torchx:tracker] section to .torchxconfig (or set TORCHX_TRACKERS) to record lineage"
    ]
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={tmp_path / 'runs'}\n"
    )
    code, _, err = invoke(*run, "utils.echo", "--msg", "hi")
    assert code == 0 and "parent_run_id" not in err


def test_run_with_a_parent_and_trackers_named_by_the_environment_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.7's way to name trackers, TORCHX_TRACKERS, reaches the app as the config does."""
    monkeypatch.setenv("TORCHX_TRACKERS", "fsspec")
    monkeypatch.setenv("TORCHX_TRACKER_FSSPEC_CONFIG", str(tmp_path / "runs"))
    run = ("run", "--dryrun", "--scheduler", "local_cwd", "--parent_run_id", "hpo/search")
    code, out, err = invoke(*run, "utils.echo", "--msg", "hi")
    assert (code, err) == (0, "")
    assert "TORCHX_TRACKERS=fsspec" in out and "TORCHX_PARENT_RUN_ID=hpo/search" in out


@pytest.mark.parametrize("trackers", ["", "fsspec"])
def test_a_sweep_with_a_parent_says_nothing_records_it(
    trackers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep's trials get the sweep's handle as their parent run, trackers or not."""
    monkeypatch.setenv("TORCHX_TRACKERS", trackers)
    monkeypatch.setenv("TORCHX_TRACKER_FSSPEC_CONFIG", str(tmp_path / "runs"))
    sweep = ("run", "--dryrun", "-s", "local_cwd", "--parent_run_id", "hpo/search")
    code, out, err = invoke(*sweep, "--sweep", "msg=a,b", "utils.echo")
    assert code == 0 and "TORCHX_PARENT_RUN_ID=local_cwd://" in out
    assert err.splitlines() == [
        "torchx: warning: --parent_run_id: got 'hpo/search'; a sweep's trials record the"
        " sweep's handle as their parent run (TORCHX_PARENT_RUN_ID), so nothing records it;"
        " to keep the lineage, record it as the source of the sweep's handle with"
        " torchx.tracker's add_source"
    ]
