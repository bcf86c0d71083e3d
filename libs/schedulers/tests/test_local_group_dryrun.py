"""``LocalScheduler.submit_dryrun_group``: the requests of many apps at once, as
``submit_dryrun`` makes each, with what is the same for all of them found once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers.local_scheduler import LocalRequest, LocalScheduler
from torchx.specs import AppDef, Role, SpecsError


def _apps(image: Path, n: int) -> list[AppDef]:
    return [
        AppDef(
            "trial",
            roles=[Role("r", image=str(image), entrypoint="true", args=[str(i)], num_replicas=2)],
        )
        for i in range(n)
    ]


def _comparable(req: LocalRequest) -> dict[str, Any]:
    """The request without what differs between two dryruns of one app: its id, where
    it goes, when it was made, and the rendezvous port picked for it."""
    data: dict[str, Any] = json.loads(json.dumps(req.to_json()).replace(req.app_id, "ID"))
    del data["submitted_at"]
    for replica in data["replicas"]:
        replica["env"].pop("MASTER_PORT")
    return data


def test_group_dryrun_equals_each_apps_own_and_looks_a_program_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    apps = _apps(tmp_path, 5)
    alone = [sched.submit_dryrun(app, {"cancel_grace_seconds": 2.0}) for app in apps]

    lookups: list[str] = []
    real_which = shutil.which

    def counting_which(name: str, *args: Any, **kwargs: Any) -> str | None:
        lookups.append(name)
        return real_which(name, *args, **kwargs)

    monkeypatch.setattr(shutil, "which", counting_which)
    together = sched.submit_dryrun_group(apps, {"cancel_grace_seconds": 2.0})

    assert [_comparable(i.request) for i in together] == [_comparable(i.request) for i in alone]
    assert len({i.request.app_id for i in together}) == 5
    assert all(
        i.scheduler == "local_cwd" and i.app is app for i, app in zip(together, apps, strict=True)
    )
    assert together[0].cfg["cancel_grace_seconds"] == 2.0
    # ten replicas of one program, on one PATH: looked up once, not twice per app
    assert lookups == ["true"]


def test_group_dryrun_refuses_a_bad_app_by_name(tmp_path: Path) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    bad = AppDef("trial", roles=[Role("r", image=str(tmp_path), entrypoint="no-such-prog-x")])
    with pytest.raises(SpecsError, match="no-such-prog-x"):
        sched.submit_dryrun_group([*_apps(tmp_path, 2), bad], {})
    with pytest.raises(SpecsError, match="cancel_grace_seconds"):
        sched.submit_dryrun_group(_apps(tmp_path, 1), {"cancel_grace_seconds": "soon"})


def test_a_request_submitted_twice_is_refused_and_the_first_app_kept(tmp_path: Path) -> None:
    sched = LocalScheduler("s", state_dir=tmp_path / "state")
    (info,) = sched.submit_dryrun_group(_apps(tmp_path, 1), {})
    app_id = sched.schedule(info)
    with pytest.raises(SpecsError, match="already used"):
        sched.schedule(info)
    with pytest.raises(SpecsError, match="already used"):
        sched.schedule_group([info], 1, "again", str(tmp_path / "group.log"))
    desc = sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state.name == "SUCCEEDED"
    assert (
        json.loads((Path(info.request.app_dir) / ".torchx" / "request.json").read_text())["app_id"]
        == app_id
    )
