"""AppDef validation: every problem found before anything is submitted, in one error."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from torchx.specs._app import MISSING, AppDef, Resource, RetryPolicy, Role
from torchx.specs._errors import _ProblemsError
from torchx.specs._mounts import BindMount, DeviceMount, VolumeMount

# Names end up in process titles, log directories, Slurm job names and Kubernetes
# objects: letters, digits, '-', '_' and '.', starting with a letter or digit.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
MAX_NAME_LEN = 63
# What a POSIX shell, execve and every scheduler's API can all carry as a variable name.
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class AppDefError(_ProblemsError):
    """An AppDef that no scheduler should accept; ``problems`` lists each issue."""

    def __init__(self, app_name: str, problems: list[str]) -> None:
        self.problems = problems
        heading = f"app {app_name!r} is not valid:"
        super().__init__(
            "app", app_name, heading, [f"- {p}" for p in problems], "; ".join(problems)
        )


def _name_problem(field: str, name: object) -> str | None:
    if not isinstance(name, str) or not name:
        return f"{field} is {name!r}; give a non-empty name"
    if len(name) > MAX_NAME_LEN:
        return f"{field} {name!r} is {len(name)} characters; at most {MAX_NAME_LEN} are allowed"
    if not _NAME.match(name):
        return (
            f"{field} {name!r} has characters schedulers refuse; use letters, digits, "
            "'-', '_' and '.', starting with a letter or digit"
        )
    return None


def _resource_problems(where: str, res: object) -> list[str]:
    if not isinstance(res, Resource):
        hint = (
            f"specs.resource(h={res!r})" if isinstance(res, str) else "Resource(cpu=, gpu=, memMB=)"
        )
        return [f"{where}.resource is {res!r}; give a Resource, e.g. {hint}"]
    problems = []
    for attr in ("cpu", "gpu", "memMB"):
        value = getattr(res, attr)
        whole = attr != "cpu"  # GPUs and MiB are counted; only cores may be fractional
        kind = "a whole number" if whole else "a number"
        # -1 is the "unset" marker of NULL_RESOURCE; anything else below zero is a mistake.
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append(f"{where}.resource.{attr} is {value!r}; give {kind}")
        elif not math.isfinite(value):
            problems.append(f"{where}.resource.{attr} is {value!r}; give a finite number")
        elif whole and value != int(value):
            problems.append(f"{where}.resource.{attr} is {value!r}; give a whole number")
        elif value < 0 and value != -1:
            problems.append(f"{where}.resource.{attr} is {value}; it cannot be negative")
    if not isinstance(res.capabilities, Mapping):
        problems.append(
            f"{where}.resource.capabilities is {res.capabilities!r}; give a dict name -> value"
        )
    if not isinstance(res.devices, Mapping):
        problems.append(f"{where}.resource.devices is {res.devices!r}; give a dict name -> count")
        return problems
    for dev, count in res.devices.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            problems.append(f"{where}.resource.devices[{dev!r}] is {count!r}; give a count >= 0")
    return problems


def _env_problems(where: str, env: object) -> list[str]:
    if not isinstance(env, Mapping):
        return [f"{where}.env is {env!r}; give a dict of NAME -> value, e.g. {{'A': '1'}}"]
    problems = []
    for k, v in env.items():
        if not isinstance(k, str) or not ENV_NAME.match(k):
            problems.append(
                f"{where}.env has the name {k!r}; env names are letters, digits and '_', "
                "not starting with a digit"
            )
        if not isinstance(v, str):
            problems.append(f"{where}.env[{k!r}] is {v!r}; env values must be strings")
        elif "\0" in v:
            problems.append(f"{where}.env[{k!r}] holds a NUL byte, which no process can receive")
    return problems


def _args_problems(where: str, args: object) -> list[str]:
    if isinstance(args, (str, bytes)) or not isinstance(args, (list, tuple)):
        return [f"{where}.args is {args!r}; give a list of arguments, e.g. [{args!r}]"]
    problems = []
    for i, a in enumerate(args):
        if not isinstance(a, str):  # a process takes only strings as its arguments
            problems.append(f"{where}.args[{i}] is {a!r}; arguments are strings: write {str(a)!r}")
        elif "\0" in a:
            problems.append(f"{where}.args[{i}] holds a NUL byte, which no process can receive")
    return problems


def _mounts_problems(where: str, mounts: object) -> list[str]:
    if not isinstance(mounts, (list, tuple)):
        return [f"{where}.mounts is {mounts!r}; give a list of mounts"]
    return [
        f"{where}.mounts[{i}] is {m!r}; give a BindMount, VolumeMount or DeviceMount"
        + (f", e.g. specs.parse_mounts([{m!r}])[0]" if isinstance(m, str) else "")
        for i, m in enumerate(mounts)
        if not isinstance(m, (BindMount, VolumeMount, DeviceMount))
    ]


def _normalise_empty(role: Role) -> None:
    """Store None set after construction as empty, as Role() and Resource() do."""
    if role.mounts is None:
        role.mounts = []
    if isinstance(role.resource, Resource) and role.resource.capabilities is None:
        role.resource.capabilities = {}


def _role_problems(where: str, role: Role) -> list[str]:
    _normalise_empty(role)
    problems = []
    if not role.entrypoint or role.entrypoint == MISSING:
        problems.append(f"{where}.entrypoint is empty; give the program to run")
    elif not isinstance(role.entrypoint, str) or "\0" in role.entrypoint:
        problems.append(f"{where}.entrypoint is {role.entrypoint!r}; give a program name or path")
    n = role.num_replicas
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        problems.append(f"{where}.num_replicas is {n!r}; it must be a whole number >= 1")
    elif role.min_replicas is not None and not (
        isinstance(role.min_replicas, int) and 0 < role.min_replicas <= n
    ):
        problems.append(
            f"{where}.min_replicas is {role.min_replicas!r}; it must be between 1 and "
            f"num_replicas ({n})"
        )
    retries = role.max_retries
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        problems.append(f"{where}.max_retries is {retries!r}; it must be a whole number >= 0")
    if not isinstance(role.retry_policy, RetryPolicy):
        problems.append(
            f"{where}.retry_policy is {role.retry_policy!r}; use one of "
            + ", ".join(p.value for p in RetryPolicy)
        )
    problems.extend(_resource_problems(where, role.resource))
    problems.extend(_env_problems(where, role.env))
    problems.extend(_args_problems(where, role.args))
    problems.extend(_mounts_problems(where, role.mounts))
    if not isinstance(role.port_map, Mapping):
        problems.append(f"{where}.port_map is {role.port_map!r}; give a dict name -> port")
    else:
        for name, port in role.port_map.items():
            if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
                problems.append(f"{where}.port_map[{name!r}] is {port!r}; use a port 1-65535")
    return problems


def validate_app(app: AppDef) -> None:
    """Raise AppDefError listing every problem of ``app``; return silently if none.

    A role's ``mounts`` or its resource's ``capabilities`` that are None are set to
    empty, so that schedulers never see None.
    """
    if not isinstance(app, AppDef):
        raise AppDefError(
            repr(app),
            [
                f"the app is {app!r}; give a specs.AppDef (run a component by name with"
                " run_component)"
            ],
        )
    problems: list[str] = []
    if p := _name_problem("app name", app.name):
        problems.append(p)
    roles = app.roles
    if not isinstance(roles, (list, tuple)):
        problems.append(f"the app's roles are {roles!r}; give a list of Role objects")
        roles = []
    elif not roles:
        problems.append("the app has no roles; add at least one Role")
    seen: set[str] = set()
    for i, role in enumerate(roles):
        if not isinstance(role, Role):
            problems.append(f"role[{i}] is {role!r}; give a specs.Role")
            continue
        where = f"role[{i}] {role.name!r}" if isinstance(role.name, str) else f"role[{i}]"
        if p := _name_problem(f"{where} name", role.name):
            problems.append(p)
        if role.name in seen:
            problems.append(f"{where}: role names must be unique; {role.name!r} appears twice")
        if isinstance(role.name, str):
            seen.add(role.name)
        problems.extend(_role_problems(where, role))
    if problems:
        raise AppDefError(str(app.name), problems)
