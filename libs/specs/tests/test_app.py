from __future__ import annotations

import pytest

import torchx.specs as specs
from torchx.specs import AppDef, AppDefError, Resource, RetryPolicy, Role, validate_app


def _role(**kw: object) -> Role:
    base: dict[str, object] = {"name": "trainer", "image": "/tmp", "entrypoint": "echo"}
    base.update(kw)
    return Role(**base)  # type: ignore[arg-type]


def test_role_defaults_are_independent() -> None:
    a, b = _role(), _role()
    a.env["X"] = "1"
    a.resource.capabilities["k"] = "v"
    assert b.env == {} and b.resource.capabilities == {}


def test_retry_policy_from_string() -> None:
    assert _role(retry_policy="replica").retry_policy is RetryPolicy.REPLICA


def test_resource_copy_merges_capabilities() -> None:
    assert specs.Resources is specs.Resource  # the seeds' name for it
    r = Resource(cpu=1, gpu=0, memMB=10, capabilities={"a": 1})
    c = Resource.copy(r, b=2)
    assert c.capabilities == {"a": 1, "b": 2} and r.capabilities == {"a": 1}


def test_valid_app_passes() -> None:
    validate_app(AppDef("ok-app_1.v2", [_role(), _role(name="ps", num_replicas=2, min_replicas=1)]))


@pytest.mark.parametrize(
    ("app", "fragment"),
    [
        (AppDef("x", []), "has no roles"),
        (AppDef("x", [_role(), _role()]), "'trainer' appears twice"),
        (AppDef("bad name", [_role()]), "app name 'bad name'"),
        (AppDef("", [_role()]), "app name is ''"),
        (AppDef("x" * 64, [_role()]), "at most 63"),
        (AppDef("x", [_role(name="a/b")]), "role[0] 'a/b' name"),
        (AppDef("x", [_role(num_replicas=0)]), "num_replicas is 0; it must be a whole number >= 1"),
        (AppDef("x", [_role(num_replicas=2, min_replicas=3)]), "min_replicas is 3"),
        (AppDef("x", [_role(entrypoint="")]), "entrypoint is empty"),
        (AppDef("x", [_role(max_retries=-1)]), "max_retries is -1"),
        (AppDef("x", [_role(resource=Resource(cpu=-2, gpu=0, memMB=1))]), "resource.cpu is -2"),
        (AppDef("x", [_role(resource=Resource(cpu=1, gpu=0, memMB=-5))]), "resource.memMB is -5"),
        (AppDef("x", [_role(env={"A": 1})]), "env values must be strings"),
        (AppDef("x", [_role(port_map={"http": 70000})]), "port_map['http'] is 70000"),
    ],
)
def test_invalid_apps(app: AppDef, fragment: str) -> None:
    with pytest.raises(AppDefError) as e:
        validate_app(app)
    assert fragment in str(e.value)
    assert str(e.value).startswith(f"app {app.name!r} is not valid")


def test_every_problem_reported_at_once() -> None:
    app = AppDef("bad name", [_role(num_replicas=0, entrypoint="")])
    with pytest.raises(AppDefError) as e:
        validate_app(app)
    assert len(e.value.problems) == 3
