"""Wrong types and values in an AppDef give SpecsError naming the field, never a deep error."""

from __future__ import annotations

from typing import Any

import pytest

from torchx.specs import AppDef, Resource, Role, SpecsError, validate_app


def _role(**kw: Any) -> Role:
    base: dict[str, Any] = {"name": "trainer", "image": "/tmp", "entrypoint": "echo"}
    base.update(kw)
    return Role(**base)


def _refused(build: Any, *words: str) -> str:
    with pytest.raises(SpecsError) as info:
        validate_app(build())
    text = str(info.value)
    for word in words:
        assert word in text, text
    return text


def test_roles_none_is_a_specs_error() -> None:
    with pytest.raises(SpecsError, match="roles"):
        AppDef("a", roles=None)  # type: ignore[arg-type]


def test_a_role_that_is_none() -> None:
    _refused(lambda: AppDef("a", roles=[None]), "role[0]", "specs.Role")  # type: ignore[list-item]


def test_env_as_a_list() -> None:
    _refused(lambda: AppDef("a", [_role(env=["A"])]), ".env", "['A']", "dict")


def test_resource_given_as_a_name() -> None:
    _refused(lambda: AppDef("a", [_role(resource="gpu.small")]), "resource", "gpu.small", "h=")


def test_unknown_retry_policy() -> None:
    with pytest.raises(SpecsError, match=r"retry_policy.*bogus.*REPLICA"):
        _role(retry_policy="bogus")


def test_args_as_a_string_is_refused_with_a_hint() -> None:
    with pytest.raises(SpecsError, match=r"args.*'hello'.*list.*\['hello'\]"):
        _role(args="hello")
    role = _role()
    role.args = "hello"  # type: ignore[assignment]
    _refused(lambda: AppDef("a", [role]), ".args", "list")


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"cpu": float("nan"), "gpu": 0, "memMB": 1}, ("cpu", "nan", "finite")),
        ({"cpu": float("inf"), "gpu": 0, "memMB": 1}, ("cpu", "inf", "finite")),
        ({"cpu": 1, "gpu": 1.5, "memMB": 1}, ("gpu", "1.5", "whole")),
        ({"cpu": 1, "gpu": 0, "memMB": float("nan")}, ("memMB", "finite")),
    ],
)
def test_resource_numbers(kw: dict[str, Any], words: tuple[str, ...]) -> None:
    _refused(lambda: AppDef("a", [_role(resource=Resource(**kw))]), *words)


def test_num_replicas_true() -> None:
    _refused(lambda: AppDef("a", [_role(num_replicas=True)]), "num_replicas", "True")


@pytest.mark.parametrize("name", ["", "A=B", "A;touch pwned;B", "1A", "A B", "A\nB", "A\0"])
def test_env_names(name: str) -> None:
    _refused(lambda: AppDef("a", [_role(env={name: "1"})]), ".env", repr(name))


def test_good_env_names_pass() -> None:
    validate_app(AppDef("a", [_role(env={"_A1": "x", "PATH": "/bin", "a_b": ""})]))


def test_nul_in_env_value_and_args() -> None:
    _refused(lambda: AppDef("a", [_role(env={"A": "x\0y"})]), "env['A']", "NUL")
    _refused(lambda: AppDef("a", [_role(args=["ok", "x\0y"])]), "args[1]", "NUL")


def test_all_problems_in_one_error() -> None:
    text = _refused(
        lambda: AppDef("a", [_role(env={"A=B": "1"}, num_replicas=True, args=["\0"])]),
        "env",
        "num_replicas",
        "args[0]",
    )
    assert text.count("\n  - ") == 3


def test_args_that_are_not_strings_are_refused_naming_each() -> None:
    text = _refused(lambda: AppDef("a", [_role(args=["--epochs", 3])]), "args[1] is 3", "'3'")
    assert "args[0]" not in text


def test_mounts_written_as_strings_are_refused_with_parse_mounts() -> None:
    mount = "type=bind,src=/data,dst=/data"
    _refused(
        lambda: AppDef("a", [_role(mounts=[mount])]),
        f"mounts[0] is '{mount}'",
        f"specs.parse_mounts(['{mount}'])[0]",
    )
    _refused(lambda: AppDef("a", [_role(mounts=mount)]), ".mounts is", "a list of mounts")


def test_capabilities_that_are_not_a_dict() -> None:
    res = Resource(cpu=1, gpu=0, memMB=64, capabilities="p4d")  # type: ignore[arg-type]
    _refused(lambda: AppDef("a", [_role(resource=res)]), "capabilities is 'p4d'", "dict")


def test_something_other_than_an_appdef_is_one_problem() -> None:
    with pytest.raises(SpecsError) as info:
        validate_app("utils.echo")  # type: ignore[arg-type]
    assert "give a specs.AppDef (run a component by name with run_component)" in str(info.value)


def test_mounts_and_capabilities_given_as_none_mean_none() -> None:
    # A component forwarding ``mounts: Optional[list] = None`` straight to Role
    role = _role(mounts=None, resource=Resource(cpu=1, gpu=0, memMB=64, capabilities=None))
    assert role.mounts == []
    assert role.resource.capabilities == {}
    validate_app(AppDef("a", [role]))
    # set to None after construction: validation stores them empty for the schedulers
    role.mounts = None  # type: ignore[assignment]
    role.resource.capabilities = None  # type: ignore[assignment]
    validate_app(AppDef("a", [role]))
    assert role.mounts == []
    assert role.resource.capabilities == {}
