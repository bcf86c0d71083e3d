"""Every call that pytorch/torchx 0.7.0's public callables accepted binds the same way here.

``upstream_signatures_0_7_0.json`` holds the parameters of 0.7's public functions, class
constructors and public methods, read from the 0.7 source by ``tools/upstream_signatures.py``.
Each is compared with this project's callable of the same name through ``inspect.signature``:

- 0.7's positional parameters keep their names and their order (``f("s", 50)`` means the
  same here), and stay positional;
- every parameter 0.7 took by name is taken by that name;
- a parameter that had a default still has one, and any parameter added here has a default
  and comes after 0.7's positional ones (or is keyword-only);
- ``*args``/``**kwargs`` stay.

Default values are compared too, where 0.7's source text says what the value is. The
generator records, for each default, one of:

- ``literal``: a Python literal (number, string, bool, None, or a list/tuple/dict/set of
  them), arithmetic on number literals (``60 * 60``), an empty-container call (``list()``,
  what ``field(default_factory=list)`` gives), or a module-level name that 0.7 binds to one of
  those (``NONE`` is ``"<NONE>"``, ``TORCHX_IGNORE``); ours must be equal and of the same type
  (``1`` is not ``1.0``, ``True`` is not ``1``);
- ``member``: ``Class.NAME`` of an ``Enum`` 0.7 defines; ours must be an enum member of the
  same class name and member name;
- nothing, for a default read at run time or built by a call (``sys.argv[1:]``,
  ``sys.stderr``, ``torchx.IMAGE``, a class, ``_null_resource()``): skipped, and
  ``test_the_default_rule_compares_all_but_calls_and_runtime_values`` counts them.

A dataclass field's ``default_factory`` is called to get ours. A different default is listed
in ``DEFAULT_EXEMPT`` with the MIGRATING.md section that describes it, or it fails.

The protected hooks a custom scheduler or workspace overrides (``_submit_dryrun``, ...) are
called by this project's base classes with 0.7's parameters, so theirs must be 0.7's exactly.
The five cloud schedulers this project does not provide are skipped (see MIGRATING.md).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

DATA = json.loads(Path(__file__).with_name("upstream_signatures_0_7_0.json").read_text())


def _not_provided() -> tuple[str, ...]:
    """The surface test's list of 0.7 modules this project does not provide."""
    path = Path(__file__).with_name("test_upstream_surface.py")
    spec = importlib.util.spec_from_file_location("upstream_surface_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.NOT_PROVIDED)


NOT_PROVIDED = _not_provided()

# Deliberate differences, each described in MIGRATING.md (its section and bullet named).
# Keys are where 0.7 defined the callable; its re-exports share the entry. Every entry must
# still differ: one that binds as in 0.7 again fails the test, so the list stays true.
EXEMPT: dict[str, str] = {
    "torchx.specs.api:Role": "specs, components and the CLI: Role's fields after image "
    "come in another order",
    # The request types are what each scheduler submits, so they hold its own fields.
    "torchx.schedulers.docker_scheduler:DockerContainer": "Docker: The dryrun shows the "
    "Engine API request",
    "torchx.schedulers.docker_scheduler:DockerJob": "Docker: The dryrun shows the Engine "
    "API request (DockerJob is DockerRequest)",
    "torchx.schedulers.kubernetes_scheduler:KubernetesJob": "Kubernetes: A Volcano Job has "
    "one task per role (KubernetesJob is KubernetesRequest)",
    "torchx.schedulers.kubernetes_scheduler:app_to_resource": "Schedulers: app_to_resource"
    "(app, cfg, app_id) returns a plain manifest",
    "torchx.schedulers.ray_scheduler:RayJob": "Schedulers: RayJob holds the arguments of "
    "Ray's JobSubmissionClient.submit_job",
    "torchx.schedulers.local_scheduler:PopenRequest": "Schedulers: local_cwd's request "
    "types hold its own fields",
    "torchx.schedulers.local_scheduler:ReplicaParam": "Schedulers: as PopenRequest",
    "torchx.schedulers.local_scheduler:LocalScheduler.auto_set_CUDA_VISIBLE_DEVICES": "Schedulers"
    ": as PopenRequest (the auto_set_cuda_visible_devices run option does it at dry-run)",
    "torchx.workspace.api:walk_workspace": "Schedulers: walk_workspace(workspace, ignore_files) "
    "yields the kept files' paths",
    "torchx.schedulers.slurm_scheduler:SlurmBatchRequest": "Schedulers: A Slurm job has one "
    "heterogeneous component per role",
    "torchx.schedulers.slurm_scheduler:SlurmReplicaRequest": "Schedulers: as SlurmBatchRequest",
}

# Differences MIGRATING.md does not describe: defects not fixed yet. Same rules as EXEMPT;
# fixing one fails the test until its entry is removed.
NOT_FIXED_YET: dict[str, str] = {
    # The driver that runs in the cluster is this project's; 0.7's methods are not on it.
    "torchx.schedulers.ray.ray_driver:RayDriver.create_and_schedule_actor": "gone",
    "torchx.schedulers.ray.ray_driver:RayDriver.init_placement_groups": "gone",
    "torchx.schedulers.ray.ray_driver:RayDriver.place_command_actors": "gone",
    "torchx.schedulers.ray.ray_driver:RayDriver.pop_actor_info": "gone",
}

# 0.7 keywords that a callable here takes out of its ``**kwargs`` on purpose (a named
# parameter could not do what it does); each has a test of the 0.7 call, named here.
FROM_KWARGS: dict[str, frozenset[str]] = {
    # put("k", key="v") stores a result named key; put(key="k", acc=1) is 0.7's form
    # (libs/tracking/tests/test_tracker.py::test_field_named_key_can_be_passed_to_put)
    "torchx.runtime.tracking.api:ResultTracker.put": frozenset({"key"}),
    "torchx.runtime.tracking.api:FsspecResultTracker.put": frozenset({"key"}),
}

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
KEYWORD = (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)


def compare(
    upstream: list[dict[str, Any]],
    ours: inspect.Signature,
    from_kwargs: frozenset[str] = frozenset(),
) -> list[str]:
    """How a call valid against ``upstream`` (0.7's parameters) would bind differently here;
    ``from_kwargs`` are 0.7 keywords this callable reads out of its ``**kwargs``."""
    problems: list[str] = []
    params = list(ours.parameters.values())
    by_name = {p.name: p for p in params}
    our_positional = [p for p in params if p.kind in POSITIONAL]
    kinds = {p.kind for p in params}
    up_positional = [
        u for u in upstream if u["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
    ]
    for i, u in enumerate(up_positional):
        if i >= len(our_positional):
            # *args here would take it, but 0.7's callers may also give it by name
            problems.append(f"0.7's positional #{i + 1} {u['name']!r} is not positional here")
            continue
        ours_i = our_positional[i]
        if u["kind"] == "POSITIONAL_OR_KEYWORD" and ours_i.name != u["name"]:
            problems.append(f"positional #{i + 1} is {ours_i.name!r} here, 0.7's is {u['name']!r}")
    for u in upstream:
        kind = u["kind"]
        if kind == "VAR_POSITIONAL" and P.VAR_POSITIONAL not in kinds:
            problems.append(f"0.7 took *{u['name']}")
        elif kind == "VAR_KEYWORD" and P.VAR_KEYWORD not in kinds:
            problems.append(f"0.7 took **{u['name']}")
        elif kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"):
            mine = by_name.get(u["name"])
            if u["name"] in from_kwargs and P.VAR_KEYWORD in kinds:
                # the keyword lands in **kwargs unless a required positional-only parameter
                # of that name is left unfilled (put(self, key, /, **results))
                if mine is not None and mine.kind is P.POSITIONAL_ONLY and mine.default is P.empty:
                    problems.append(f"0.7's keyword {u['name']!r} is positional-only here")
                continue
            if mine is None or mine.kind not in KEYWORD:
                # **kwargs alone is not enough: it may refuse names (check_params) or drop them
                problems.append(f"0.7's keyword {u['name']!r} is not a parameter here")
                continue
            if u["default"] and mine.default is P.empty:
                problems.append(f"{u['name']!r} had a default in 0.7 ({u.get('value')}), none here")
    known = {u["name"] for u in upstream}
    n_up_positional = len(up_positional)
    for p in params:
        if p.name in known or p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            continue
        if p.default is P.empty:
            problems.append(f"{p.name!r} is new here and required")
        elif p.kind in POSITIONAL and our_positional.index(p) < n_up_positional:
            problems.append(f"{p.name!r} is new here and placed among 0.7's positionals")
    return problems


def compare_hook(upstream: list[dict[str, Any]], ours: inspect.Signature) -> list[str]:
    """A hook is called by the base class: 0.7's overrides must receive what 0.7 passed."""
    mine = [(p.name, p.kind.name) for p in ours.parameters.values()]
    theirs = [(u["name"], u["kind"]) for u in upstream]
    return [] if mine == theirs else [f"hook takes {mine} here, 0.7's {theirs}"]


def _signature_of_method(cls: type, name: str) -> inspect.Signature | str:
    try:
        raw = inspect.getattr_static(cls, name)
    except AttributeError:
        return "missing"
    if isinstance(raw, property):
        return "a property here, a method in 0.7"
    if isinstance(raw, staticmethod):
        return inspect.signature(raw.__func__)
    sig = inspect.signature(getattr(cls, name))
    if isinstance(raw, classmethod):
        return sig  # bound to the class: cls is already left out
    params = list(sig.parameters.values())[1:]  # self
    return sig.replace(parameters=params)


def check(where: str, record: dict[str, Any]) -> dict[str, list[str]]:
    """Problems per callable (``module:name`` or ``module:Class.method``) for one record."""
    module, name = where.split(":")
    obj = getattr(importlib.import_module(module), name, None)
    if obj is None:
        return {where: ["missing"]}
    found: dict[str, list[str]] = {}
    if record["kind"] == "function":
        found[where] = compare(record["params"], inspect.signature(obj))
        return found
    if record["init"] is not None:
        found[where] = compare(record["init"]["params"], inspect.signature(obj))
    for method, info in record["methods"].items():
        sig = _signature_of_method(obj, method)
        key = f"{where}.{method}"
        if isinstance(sig, str):
            found[key] = [sig]
        elif method.startswith("_"):
            found[key] = compare_hook(info["params"], sig)
        else:
            home = f"{info['source'].rsplit('.', 1)[0]}.{method}"
            found[key] = compare(info["params"], sig, FROM_KWARGS.get(home, frozenset()))
    return found


def _targets() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """(name here, 0.7 record) pairs, grouped by the module they are looked up in."""
    pairs = list(DATA["callables"].items())
    pairs += [(alias, DATA["callables"][home]) for alias, home in DATA["aliases"].items()]
    grouped: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for where, record in pairs:
        module = where.split(":")[0]
        if not module.startswith(NOT_PROVIDED):
            grouped.setdefault(module, []).append((where, record))
    return grouped


TARGETS = _targets()


def test_the_records_are_upstreams() -> None:
    # A truncated or regenerated-from-elsewhere file would make the checks pass vacuously.
    callables = DATA["callables"]
    assert DATA["upstream"] == "pytorch/torchx 0.7.0"
    assert len(callables) == 300 and len(DATA["aliases"]) == 34
    assert sum(len(r.get("methods", {})) for r in callables.values()) == 301
    run = callables["torchx.runner.api:Runner"]["methods"]["run"]["params"]
    assert [p["name"] for p in run] == ["app", "scheduler", "cfg", "workspace", "parent_run_id"]
    local = callables["torchx.schedulers.local_scheduler:create_scheduler"]["params"]
    assert [p["name"] for p in local][:2] == ["session_name", "cache_size"]


def test_each_exemption_names_a_section_of_migrating() -> None:
    text = (Path(__file__).parents[2] / "MIGRATING.md").read_text()
    sections = {line[3:].strip() for line in text.splitlines() if line.startswith("## ")}
    assert {reason.split(":")[0] for reason in EXEMPT.values()} <= sections


def test_the_check_sees_a_moved_parameter() -> None:
    # The defect the check exists for: a parameter inserted before 0.7's positional ones.
    def moved(session_name: str, state_dir: str | None = None, cache_size: int = 100) -> None: ...

    def added_after(session_name: str, cache_size: int = 100, *, state_dir: str = "") -> None: ...

    def swallowed(session_name: str, **params: object) -> None: ...

    upstream = DATA["callables"]["torchx.schedulers.local_scheduler:create_scheduler"]["params"]
    assert any("cache_size" in p for p in compare(upstream[:2], inspect.signature(moved)))
    assert compare(upstream[:2], inspect.signature(added_after)) == []
    assert compare(upstream[:2], inspect.signature(swallowed)) == [
        "0.7's positional #2 'cache_size' is not positional here",
        "0.7's keyword 'cache_size' is not a parameter here",
    ]


def test_the_check_sees_a_keyword_of_0_7_that_kwargs_cannot_take() -> None:
    # put(key="k", acc=1) is 0.7's call: a required positional-only ``key`` leaves it unfilled
    # (the keyword goes into **results), while one with a default takes it from there.
    def required(key: str, /, **results: object) -> None: ...

    def defaulted(key: str = "", /, **results: object) -> None: ...

    def named(key: str, **results: object) -> None: ...

    home = "torchx.runtime.tracking.api:ResultTracker"
    upstream = DATA["callables"][home]["methods"]["put"]["params"]
    taken = FROM_KWARGS[f"{home}.put"]
    assert compare(upstream, inspect.signature(required), taken) == [
        "0.7's keyword 'key' is positional-only here"
    ]
    assert compare(upstream, inspect.signature(defaulted), taken) == []
    assert compare(upstream, inspect.signature(named), taken) == []


@pytest.mark.parametrize("module", sorted(TARGETS))
def test_signatures_bind_as_in_0_7(module: str) -> None:
    problems: dict[str, list[str]] = {}
    for where, record in TARGETS[module]:
        home = DATA["aliases"].get(where, where)
        for key, found in check(where, record).items():
            listed = key.replace(where, home, 1)
            if listed in EXEMPT or listed in NOT_FIXED_YET:
                assert found, f"{listed} binds as in 0.7 now: drop it from the lists above"
            elif found:
                problems[key] = found
    assert problems == {}, "\n".join(f"{k}: {'; '.join(v)}" for k, v in problems.items())


# Default values. 0.7's default differing here changes what a 0.7 call that leaves the
# parameter out does. Keys are ``module:Callable(param)`` where 0.7 defined it; values name the
# MIGRATING.md section (before the colon) that describes the difference. Every entry must still
# differ, as above.
SPECS = "specs, components and the CLI"
DEFAULT_EXEMPT: dict[str, str] = {
    **{
        f"torchx.components.utils:{component}({size})": f"{SPECS}: utils.sh, utils.python "
        "and utils.binary are unsized by default"
        for component in ("sh", "python", "binary")
        for size in ("cpu", "gpu", "memMB")
    },
    **{
        f"{where}({field})": f"{SPECS}: AppStatus (their messages default to an empty string)"
        for where, field in [
            ("torchx.specs.api:AppStatus", "structured_error_msg"),
            ("torchx.specs.api:ReplicaStatus", "structured_error_msg"),
            ("torchx.schedulers.api:DescribeAppResponse", "msg"),
            ("torchx.schedulers.api:DescribeAppResponse", "structured_error_msg"),
        ]
    },
    "torchx.schedulers.api:DescribeAppResponse(num_restarts)": f"{SPECS}: AppStatus "
    "(DescribeAppResponse.num_restarts defaults to 0)",
}


def our_defaults(obj: object, sig: inspect.Signature) -> dict[str, object]:
    """The value each parameter of ``sig`` defaults to; a dataclass field's
    ``default_factory`` is called (its signature shows only a placeholder)."""
    out = {n: p.default for n, p in sig.parameters.items() if p.default is not P.empty}
    if isinstance(obj, type) and dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            if f.name in out and f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
    return out


def default_differs(upstream: dict[str, Any], mine: object) -> str | None:
    """How ``mine`` differs from 0.7's recorded default, None when it does not (or when the
    recorded default is not comparable: see the module docstring)."""
    if "literal" in upstream:
        theirs = ast.literal_eval(upstream["literal"])
        if (
            mine == theirs
            and isinstance(mine, type(theirs))
            and isinstance(mine, bool) == isinstance(theirs, bool)
        ):
            return None
    elif "member" in upstream:
        if (
            isinstance(mine, enum.Enum)
            and f"{type(mine).__name__}.{mine.name}" == upstream["member"]
        ):
            return None
    else:
        return None
    return f"{upstream['name']!r} defaults to {mine!r} here, to {upstream['value']} in 0.7"


def check_defaults(where: str, record: dict[str, Any]) -> dict[str, str]:
    """Differing defaults of one record, keyed ``module:Callable(param)``."""
    module, name = where.split(":")
    obj = getattr(importlib.import_module(module), name, None)
    if obj is None:
        return {}  # reported missing by the signature test
    calls: list[tuple[str, list[dict[str, Any]], dict[str, object]]] = []
    if record["kind"] == "function":
        calls.append((where, record["params"], our_defaults(obj, inspect.signature(obj))))
    else:
        if record["init"] is not None:
            sig = inspect.signature(obj)
            calls.append((where, record["init"]["params"], our_defaults(obj, sig)))
        for method, info in record["methods"].items():
            sig_or_why = _signature_of_method(obj, method)
            if not isinstance(sig_or_why, str):
                calls.append((f"{where}.{method}", info["params"], our_defaults(None, sig_or_why)))
    found: dict[str, str] = {}
    for key, params, mine in calls:
        for u in params:
            if u["default"] and u["name"] in mine:
                why = default_differs(u, mine[u["name"]])
                if why is not None:
                    found[f"{key}({u['name']})"] = why
    return found


def _recorded_defaults() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for record in DATA["callables"].values():
        groups = [record["params"]] if record["kind"] == "function" else []
        groups += [record["init"]["params"]] if record.get("init") else []
        groups += [m["params"] for m in record.get("methods", {}).values()]
        out += [u for params in groups for u in params if u["default"]]
    return out


def test_the_default_rule_compares_all_but_calls_and_runtime_values() -> None:
    recorded = _recorded_defaults()
    compared = [u for u in recorded if "literal" in u or "member" in u]
    skipped = sorted({u["value"] for u in recorded if u not in compared})
    assert (len(recorded), len(compared)) == (321, 306)
    # what the rule leaves out: a value read at run time, a class, a call
    assert skipped == [
        "CWDImageProvider",
        "_null_resource()",
        "sys.argv[1:]",
        "sys.stderr",
        "torchx.IMAGE",
    ]


def test_the_default_check_sees_a_changed_default() -> None:
    upstream = DATA["callables"]["torchx.schedulers.local_scheduler:create_scheduler"]["params"]
    cache_size = upstream[1]
    assert cache_size["literal"] == "100"
    assert default_differs(cache_size, 100) is None
    assert default_differs(cache_size, 100.0) is not None
    assert default_differs(cache_size, None) is not None
    state = DATA["callables"]["torchx.schedulers.api:DescribeAppResponse"]["init"]["params"][1]
    assert state["member"] == "AppState.UNSUBMITTED"
    from torchx.specs import AppState

    assert default_differs(state, AppState.UNSUBMITTED) is None
    assert default_differs(state, AppState.UNKNOWN) is not None
    assert default_differs(state, int(AppState.UNSUBMITTED)) is not None


def test_each_default_exemption_names_a_section_of_migrating() -> None:
    text = (Path(__file__).parents[2] / "MIGRATING.md").read_text()
    sections = {line[3:].strip() for line in text.splitlines() if line.startswith("## ")}
    assert {reason.split(":")[0] for reason in DEFAULT_EXEMPT.values()} <= sections


@pytest.mark.parametrize("module", sorted(TARGETS))
def test_defaults_are_0_7s(module: str) -> None:
    problems: dict[str, str] = {}
    for where, record in TARGETS[module]:
        home = DATA["aliases"].get(where, where)
        for key, why in check_defaults(where, record).items():
            problems[key.replace(where, home, 1)] = why
    homes = {DATA["aliases"].get(where, where) for where, _ in TARGETS[module]}
    for key in DEFAULT_EXEMPT:
        callable_ = key.split("(")[0]
        if callable_ in homes or callable_.rpartition(".")[0] in homes:
            assert key in problems, f"{key} is 0.7's default now: drop it from DEFAULT_EXEMPT"
    left = {k: v for k, v in problems.items() if k not in DEFAULT_EXEMPT}
    assert left == {}, "\n".join(f"{k}: {v}" for k, v in left.items())
