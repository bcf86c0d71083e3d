"""A component parameter whose type has no command-line form (``Dict[str, List[str]]``)
loads when it has a default, as in 0.7: set from Python, refused on the command line."""

from __future__ import annotations

from typing import Dict, List, Optional  # noqa: UP035 - the spelling of 0.7 components

import pytest

import torchx.specs as specs
from torchx.specs import AppDef, Role, SpecsError


def trainer(
    name: str,
    hosts: Optional[Dict[str, List[str]]] = None,  # noqa: UP006, UP045
) -> AppDef:
    """Train.

    Args:
        name: app name
        hosts: per-role host lists
    """
    env = {role: ",".join(h) for role, h in (hosts or {}).items()}
    return AppDef(name, [Role("trainer", image="img", entrypoint="train", env=env)])


def needs_a_value(groups: Dict[str, List[str]]) -> AppDef:  # noqa: UP006
    """Bad.

    Args:
        groups: no default
    """
    return AppDef("x", [Role("r", image="img", entrypoint="e")])


def test_the_parameter_keeps_its_default_from_the_command_line() -> None:
    app = specs.materialize_appdef(trainer, ["--name", "t"])
    assert app.name == "t" and app.roles[0].env == {}


def test_a_python_caller_gives_the_value() -> None:
    app = specs.materialize_appdef(trainer, ["--name", "t"], {"hosts": {"w": ["a", "b"]}})
    assert app.roles[0].env == {"w": "a,b"}


def test_the_command_line_cannot_give_it() -> None:
    with pytest.raises(SpecsError, match="has no command-line form") as e:
        specs.materialize_appdef(trainer, ["--name", "t", "--hosts", "w=a"])
    assert "--hosts" in e.value.field


def test_without_a_default_the_component_is_refused() -> None:
    with pytest.raises(SpecsError, match="needs a default"):
        specs.materialize_appdef(needs_a_value, [])
