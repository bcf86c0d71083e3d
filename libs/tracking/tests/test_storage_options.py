"""A storage option the filesystem would silently ignore is refused in one line, naming
it, the protocol and a fix; filesystems that use keywords they do not name keep taking
them. Real fsspec filesystems throughout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fsspec  # type: ignore[import-untyped]
import pytest
from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

from torchx.runtime.tracking import FsspecResultTracker
from torchx.runtime.tracking._storage_options import accepted_options
from torchx.tracker import TrackerConfigError
from torchx.tracker.backend.fsspec import create


def test_fsspec_itself_swallows_a_misspelt_local_option(tmp_path: Path) -> None:
    """Why the check exists: fsspec keeps the typo and acts as if it were not given."""
    fs = fsspec.filesystem("file", auto_mkdirs=True, skip_instance_cache=True)
    assert fs.auto_mkdir is False


@pytest.mark.parametrize(
    ("base", "option", "protocol", "match"),
    [
        ("{tmp}", "auto_mkdirs", "file", "auto_mkdir"),
        ("file://{tmp}", "use_listing_cache", "file", "use_listings_cache"),
        ("memory://storage-options", "global_stor", "memory", "global_store"),
        ("memory://storage-options", "max_document_byte", "memory", "max_document_bytes"),
    ],
)
def test_a_misspelt_option_is_named_with_the_protocol_and_a_close_match(
    tmp_path: Path, base: str, option: str, protocol: str, match: str
) -> None:
    base = base.format(tmp=tmp_path / "results")
    with pytest.raises(TypeError) as caught:
        FsspecResultTracker(base, **{option: True})
    message = str(caught.value)
    assert "\n" not in message
    assert f"storage option {option!r} is not one the {protocol!r} filesystem" in message
    assert f"did you mean {match!r}?" in message
    assert "skip_instance_cache" in message  # the options it does take are listed
    assert not (tmp_path / "results").exists()  # refused before anything was made


def test_an_option_without_a_close_match_lists_what_the_filesystem_takes() -> None:
    with pytest.raises(TypeError, match=r"'bucket_region'.*ignored; it takes asynchronous,"):
        FsspecResultTracker("memory://storage-options", bucket_region="eu")


def test_options_the_filesystem_names_are_taken(tmp_path: Path) -> None:
    local = FsspecResultTracker(str(tmp_path), auto_mkdir=True, use_listings_cache=False)
    assert local.fs.auto_mkdir is True
    local["k"] = {"x": 1}
    memory = FsspecResultTracker("memory://options-taken", skip_instance_cache=True)
    memory["k"] = {"x": 1}
    assert memory["k"] == {"x": 1}


def test_a_filesystem_that_uses_keywords_it_does_not_name_takes_them() -> None:
    """HTTP hands its other keywords to every request: nothing may be refused there.
    Making the tracker contacts no server."""
    # fsspec's HTTP filesystem needs these; a plain `pip install torchx` has neither.
    pytest.importorskip("aiohttp")
    pytest.importorskip("requests")
    assert accepted_options(fsspec.get_filesystem_class("http")) is None
    tracker = FsspecResultTracker("http://127.0.0.1:9/results", headers={"X-Team": "ml"})
    assert tracker.fs.kwargs == {"headers": {"X-Team": "ml"}}


class _Knobbed(LocalFileSystem):  # type: ignore[misc]
    """A subclass whose own ``**kwargs`` may mean anything: it takes any keyword."""

    def __init__(self, knob: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.knob = knob


class _Closed(LocalFileSystem):  # type: ignore[misc]
    """A subclass without ``**kwargs``: only what it names."""

    def __init__(self, knob: int = 0) -> None:
        super().__init__()
        self.knob = knob


def test_what_a_class_takes_is_read_from_its_constructors() -> None:
    assert accepted_options(_Knobbed) is None
    assert accepted_options(_Closed) == frozenset({"knob"})
    local = accepted_options(LocalFileSystem)
    assert local is not None and {"auto_mkdir", "skip_instance_cache", "max_paths"} <= local


def test_the_fsspec_tracker_refuses_a_misspelt_option_too(tmp_path: Path) -> None:
    with pytest.raises(TrackerConfigError) as caught:
        create(str(tmp_path / "runs"), auto_mkdirs=True)
    message = str(caught.value)
    assert "\n" not in message and "fsspec tracker storage options: got ['auto_mkdirs']" in message
    assert "did you mean 'auto_mkdir'?" in message
    assert not (tmp_path / "runs").exists()
    assert create(str(tmp_path / "runs"), auto_mkdir=True).fs.auto_mkdir is True


def test_an_options_files_misspelt_key_is_named(tmp_path: Path) -> None:
    options = tmp_path / "tracker.conf"
    options.write_text(f"protocol=file\nroot_path={tmp_path / 'runs'}\nauto_mkdirs=true\n")
    with pytest.raises(TrackerConfigError) as caught:
        create(str(options))
    message = str(caught.value)
    assert "\n" not in message and f"options file {options}: keys: got ['auto_mkdirs']" in message
    assert "did you mean 'auto_mkdir'?" in message
    options.write_text(f"protocol=nosuchfs\nroot_path={tmp_path / 'runs'}\n")
    with pytest.raises(TrackerConfigError, match=r"protocol: got 'nosuchfs'; .*installed"):
        create(str(options))


def test_the_keywords_fsspec_itself_reads_are_taken_as_it_reads_them(tmp_path: Path) -> None:
    """``url_to_fs`` takes ``protocol=`` (in place of the URL's) and ``<protocol>={...}``
    (more options for that filesystem): both are used, so neither is refused."""
    nested = FsspecResultTracker(str(tmp_path / "nested"), file={"auto_mkdir": True})
    assert nested.fs.auto_mkdir is True
    swapped = FsspecResultTracker(
        "/storage-options-protocol", protocol="memory", memory={"skip_instance_cache": True}
    )
    assert type(swapped.fs).__name__ == "MemoryFileSystem"
    swapped["k"] = {"x": 1}
    assert swapped["k"] == {"x": 1} and not Path("/storage-options-protocol").exists()
    assert create(str(tmp_path / "runs"), file={"auto_mkdir": True}).fs.auto_mkdir is True
    assert type(create("/storage-options-runs", protocol="memory").fs).__name__ == (
        "MemoryFileSystem"
    )


def test_a_misspelt_option_inside_a_protocols_own_options_is_named(tmp_path: Path) -> None:
    with pytest.raises(TypeError) as caught:
        FsspecResultTracker(str(tmp_path / "results"), file={"auto_mkdirs": True})
    message = str(caught.value)
    assert "\n" not in message
    assert "storage option 'auto_mkdirs' (in file={...}) is not one the 'file'" in message
    assert "did you mean 'auto_mkdir'?" in message
    # another filesystem's options, once protocol= names this one, would be ignored too
    with pytest.raises(TypeError, match=r"'file' is not one the 'memory' filesystem"):
        FsspecResultTracker("memory://storage-options", protocol="memory", file={})
    with pytest.raises(TypeError, match=r"'file' is int, not a dict; .*file=\{'option': "):
        FsspecResultTracker(str(tmp_path / "results"), file=1)
    with pytest.raises(TrackerConfigError, match=r"'global_stor' \(in memory=\{\.\.\.\}\)"):
        create("memory://storage-options", memory={"global_stor": {}})
    assert not (tmp_path / "results").exists()
