"""Macros: placeholders in a role's args and env that the scheduler fills in at launch."""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
from functools import cached_property
from string import Template
from typing import Any

from torchx.specs._app import Role


def _shallow_copy(role: Role) -> Role:
    """``copy.copy(role)``, made directly for a plain ``Role`` (every field of it is in
    its ``__dict__``); a subclass may copy itself its own way."""
    if type(role) is not Role:
        return copy.copy(role)
    new = object.__new__(Role)
    new.__dict__.update(role.__dict__)
    return new


class macros:
    """Placeholders usable in ``Role.args`` and ``Role.env`` values.

    - ``img_root``: the directory the image is unpacked into (the local scheduler's image dir)
    - ``app_id``: the id the scheduler gave the app
    - ``replica_id``: the replica's index within its role, 0-based
    - ``rank0_env``: the *name* of an env var that holds the address of replica 0 of the
      first role. Write ``"$${" + macros.rank0_env + "}"`` in an argument: after substitution
      it reads ``${MASTER_ADDR}`` (or the scheduler's variable), which the shell expands.
    """

    img_root = "${img_root}"
    # Deprecated in pytorch/torchx 0.7 already: schedulers fill it with "DEPRECATED".
    base_img_root = "${base_img_root}"
    app_id = "${app_id}"
    replica_id = "${replica_id}"
    rank0_env = "${rank0_env}"

    @dataclass(frozen=True)
    class Values:
        """The values a scheduler substitutes for one replica."""

        img_root: str
        app_id: str
        replica_id: str
        rank0_env: str = "TORCHX_RANK0_HOST"
        base_img_root: str = "DEPRECATED"

        @cached_property
        def _mapping(self) -> dict[str, str]:
            # Built once per replica, not once per string: a role with many arguments is
            # filled for each of hundreds of replicas. (``asdict`` would deep-copy each
            # str, and ``fields()`` costs more than the filling: the names are read once.)
            return {name: getattr(self, name) for name in _VALUE_NAMES}

        def substitute(self, text: str) -> str:
            if "$" not in text:
                return text  # nothing to fill (most arguments): skip the template
            # safe_substitute leaves unknown ``$VARS`` alone so shell syntax survives.
            return Template(text).safe_substitute(self._mapping)

        def apply(self, role: Role) -> Role:
            """A copy of ``role`` with every macro filled in: in its entrypoint, args, env
            values and metadata (strings at any depth of its dicts and lists)."""
            # A shallow copy with the filled fields set: ``dataclasses.replace`` would
            # run ``__init__`` again on fields that were checked when ``role`` was made.
            filled = _shallow_copy(role)
            filled.args = [self.substitute(a) for a in role.args]
            filled.env = {k: self.substitute(v) for k, v in role.env.items()}
            filled.entrypoint = self.substitute(role.entrypoint)
            filled.metadata = self._fill(role.metadata)
            return filled

        def _fill(self, value: Any) -> Any:
            if isinstance(value, str):
                return self.substitute(value)
            if isinstance(value, dict):
                return {k: self._fill(v) for k, v in value.items()}
            if isinstance(value, list):
                return [self._fill(v) for v in value]
            return value


# The fields of ``macros.Values``, the names a role's strings may use.
_VALUE_NAMES = tuple(f.name for f in fields(macros.Values))
