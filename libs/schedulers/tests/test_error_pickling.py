"""An error raised in a worker process reaches its parent pickled, and ``copy`` copies an
error the same way: every SpecsError (UnknownSchedulerError included) is made again whole,
from the arguments it was made with, whatever its constructor takes."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import pytest

import torchx.specs as specs
from torchx.schedulers import UnknownSchedulerError, get_scheduler
from torchx.specs import SpecsError


class PlugInError(SpecsError, FileNotFoundError):
    """A plug-in's error: also a built-in error of another layout, with a constructor of
    its own (keyword-only included)."""

    def __init__(self, path: str, *, why: str = "missing") -> None:
        self.path = path
        super().__init__("plug-in file", path, f"{why}; give an existing file")


ERRORS = [
    PlugInError("/p/x.json", why="gone"),
    SpecsError("field", [1, "x"], "the fix"),
    specs.UnknownSchedulerException("locl"),  # its message was doubled, made from the message
    UnknownSchedulerError("slrum", ["slurm", "local_cwd"]),
    specs.InvalidRunConfigException("not an int", "port", {"port": "x"}, value="x"),  # a keyword
    specs.MalformedAppHandleException("x"),
    specs.UnknownAppException("local_cwd://torchx/a-1", "gone"),
    specs.AppDefError("app", ["a problem", "another"]),  # a message of several lines
    specs.ComponentNotFoundException("component", "utils.eho", "did you mean 'utils.echo'?"),
]


def _pickled(error: SpecsError) -> SpecsError:
    again: SpecsError = pickle.loads(pickle.dumps(error))
    return again


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("how", [_pickled, copy.copy, copy.deepcopy])
def test_an_error_is_made_again_whole(
    error: SpecsError, how: Callable[[SpecsError], SpecsError]
) -> None:
    again = how(error)
    assert type(again) is type(error)
    assert str(again) == str(error) and again.args == error.args
    assert vars(again) == vars(error)


def test_notes_and_added_attributes_come_along() -> None:
    error = UnknownSchedulerError("slrum", ["slurm"])
    error.add_note("while resolving -s slrum")
    error.hint = "added by a caller"  # type: ignore[attr-defined]
    again = _pickled(error)
    assert again.__notes__ == ["while resolving -s slrum"]
    assert again.hint == "added by a caller"  # type: ignore[attr-defined]
    assert isinstance(again, KeyError) and str(again) == str(error)


def test_errors_raised_in_a_worker_process_reach_the_parent_whole() -> None:
    with ProcessPoolExecutor(max_workers=1) as pool:
        unknown = pool.submit(get_scheduler, "slrum")
        malformed = pool.submit(specs.parse_app_handle, "not a handle")
        with pytest.raises(UnknownSchedulerError, match=r"^scheduler: got 'slrum'; did you "):
            unknown.result(timeout=60)
        with pytest.raises(specs.MalformedAppHandleException, match=r"^app handle: got 'not a h"):
            malformed.result(timeout=60)
