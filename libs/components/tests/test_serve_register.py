"""How ``torchx.apps.serve.serve`` sends the registration: through ``requests.post`` (as
0.7 did, so code that patches it sees the call), or the standard library without it."""

from __future__ import annotations

import sys
from pathlib import Path
from unittest import mock

import pytest

from torchx.apps.serve.serve import main


def _archive(tmp_path: Path) -> str:
    model = tmp_path / "model.mar"
    model.write_text("archive bytes")
    return str(model)


def test_registration_goes_through_requests_post(tmp_path: Path) -> None:
    requests = pytest.importorskip("requests")
    seen: dict[str, object] = {}

    def post(url: str, params: dict[str, str], timeout: int) -> object:
        seen.update(url=url, params=params, timeout=timeout)
        seen["model"] = requests.get(params["url"], timeout=30).text  # served while posting
        response = requests.Response()
        response.status_code = 200
        return response

    argv = ["--model_path", _archive(tmp_path), "--management_api", "http://127.0.0.1:1/"]
    with mock.patch("requests.post", side_effect=post):
        main([*argv, "--port", "0", "--model_name", "m", "--initial_workers", "2"])
    assert seen["url"] == "http://127.0.0.1:1/models" and seen["timeout"] == 60
    params = seen["params"]
    assert isinstance(params, dict) and params["model_name"] == "m"
    assert params["initial_workers"] == "2" and "handler" not in params
    assert seen["model"] == "archive bytes"


def test_a_refusal_through_requests_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("requests")
    response = mock.Mock(status_code=409, text="model exists")
    argv = ["--model_path", _archive(tmp_path), "--management_api", "http://127.0.0.1:1"]
    with mock.patch("requests.post", return_value=response), pytest.raises(SystemExit) as e:
        main([*argv, "--port", "0"])
    assert e.value.code == 1
    assert capsys.readouterr().err == "torchserve refused the model: HTTP 409: model exists\n"


def test_without_requests_the_standard_library_reports_an_unreachable_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--model_path", _archive(tmp_path), "--management_api", "http://127.0.0.1:1"]
    with mock.patch.dict(sys.modules, {"requests": None}), pytest.raises(SystemExit) as e:
        main([*argv, "--port", "0", "--timeout", "5"])
    assert e.value.code == 1
    assert capsys.readouterr().err.startswith("cannot reach http://127.0.0.1:1: ")
