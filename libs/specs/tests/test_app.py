from __future__ import annotations

import pytest

import torchx.specs as specs
from torchx.specs import AppDef, AppDefError, Resource, RetryPolicy, Role, validate_app


def _role(**kw: object) -> Role:
    base: dict[str, object] = {"name": "trainer", "image": "/tmp", "entrypoint": "echo"}
    base.update(kw)
    return Role(**base)  # type: ignore[arg-type]


def test_seed_echo_app() -> None:
    app = specs.AppDef(
        name="echo",
        roles=[
            specs.Role(
                name="echo",
                entrypoint="/bin/echo",
                image="/tmp",
                args=["hello world"],
                num_replicas=1,
            )
        ],
    )
    validate_app(app)
    assert app.roles[0].args == ["hello world"]


def test_seed_ddp_component() -> None:
    def ddp(jobname: str, nnodes: int, image: str, entrypoint: str, *script_args: str):  # type: ignore[no-untyped-def]
        single_gpu = specs.Resources(cpu=4, gpu=1, memMB=1024)
        return specs.AppDef(
            name=jobname,
            roles=[
                specs.Role(
                    name="trainer",
                    entrypoint=entrypoint,
                    image=image,
                    resource=single_gpu,
                    args=script_args,
                    num_replicas=nnodes,
                )
            ],
        )

    app = ddp("job", 2, "/tmp", "train.py", "--lr", "0.1")
    role = app.roles[0]
    assert role.args == ["--lr", "0.1"]  # the tuple became a list
    assert role.resource == Resource(cpu=4, gpu=1, memMB=1024)
    assert specs.Resources is specs.Resource
    # the seed's function (no return annotation) is still a valid component
    schema = specs.get_component_schema(ddp)
    built = schema.call(
        ["--jobname", "j", "--nnodes", "3", "--image", "/x", "--entrypoint", "t.py", "a", "b"]
    )
    assert built.roles[0].num_replicas == 3
    assert built.roles[0].args == ["a", "b"]


def test_role_defaults_are_independent() -> None:
    a, b = _role(), _role()
    a.env["X"] = "1"
    a.resource.capabilities["k"] = "v"
    assert b.env == {} and b.resource.capabilities == {}


def test_retry_policy_from_string() -> None:
    assert _role(retry_policy="replica").retry_policy is RetryPolicy.REPLICA


def test_resource_copy_merges_capabilities() -> None:
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
