"""AppDef validation: every problem found before anything is submitted, in one error."""

from __future__ import annotations

import re

from torchx.specs._app import MISSING, AppDef, Resource
from torchx.specs._errors import SpecsError

# Names end up in process titles, log directories, Slurm job names and Kubernetes
# objects: letters, digits, '-', '_' and '.', starting with a letter or digit.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
MAX_NAME_LEN = 63


class AppDefError(SpecsError):
    """An AppDef that no scheduler should accept; ``problems`` lists each issue."""

    def __init__(self, app_name: str, problems: list[str]) -> None:
        self.problems = problems
        ValueError.__init__(
            self,
            f"app {app_name!r} is not valid:\n" + "\n".join(f"  - {p}" for p in problems),
        )
        self.field, self.value, self.expected = "app", app_name, "; ".join(problems)


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


def _resource_problems(where: str, res: Resource) -> list[str]:
    problems = []
    for attr in ("cpu", "gpu", "memMB"):
        value = getattr(res, attr)
        # -1 is the "unset" marker of NULL_RESOURCE; anything else below zero is a mistake.
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append(f"{where}.resource.{attr} is {value!r}; give a number")
        elif value < 0 and value != -1:
            problems.append(f"{where}.resource.{attr} is {value}; it cannot be negative")
    for dev, count in res.devices.items():
        if not isinstance(count, int) or count < 0:
            problems.append(f"{where}.resource.devices[{dev!r}] is {count!r}; give a count >= 0")
    return problems


def validate_app(app: AppDef) -> None:
    """Raise AppDefError listing every problem of ``app``; return silently if none."""
    problems: list[str] = []
    if p := _name_problem("app name", app.name):
        problems.append(p)
    if not app.roles:
        problems.append("the app has no roles; add at least one Role")
    seen: set[str] = set()
    for i, role in enumerate(app.roles):
        where = f"role[{i}] {role.name!r}" if isinstance(role.name, str) else f"role[{i}]"
        if p := _name_problem(f"{where} name", role.name):
            problems.append(p)
        if role.name in seen:
            problems.append(f"{where}: role names must be unique; {role.name!r} appears twice")
        seen.add(role.name)
        if not role.entrypoint or role.entrypoint == MISSING:
            problems.append(f"{where}.entrypoint is empty; give the program to run")
        if not isinstance(role.num_replicas, int) or role.num_replicas < 1:
            problems.append(f"{where}.num_replicas is {role.num_replicas!r}; it must be >= 1")
        elif role.min_replicas is not None and not (0 < role.min_replicas <= role.num_replicas):
            problems.append(
                f"{where}.min_replicas is {role.min_replicas}; it must be between 1 and "
                f"num_replicas ({role.num_replicas})"
            )
        if not isinstance(role.max_retries, int) or role.max_retries < 0:
            problems.append(f"{where}.max_retries is {role.max_retries!r}; it must be >= 0")
        problems.extend(_resource_problems(where, role.resource))
        for k, v in role.env.items():
            if not isinstance(v, str):
                problems.append(f"{where}.env[{k!r}] is {v!r}; env values must be strings")
        for name, port in role.port_map.items():
            if not isinstance(port, int) or not 0 < port < 65536:
                problems.append(f"{where}.port_map[{name!r}] is {port!r}; use a port 1-65535")
    if problems:
        raise AppDefError(str(app.name), problems)
