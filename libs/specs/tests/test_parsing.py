"""Handles, mounts, run options, macros and named resources: good and bad input."""

from __future__ import annotations

import dataclasses

import pytest

from torchx.specs import (
    BindMount,
    DeviceMount,
    Resource,
    Role,
    SpecsError,
    VolumeMount,
    get_named_resources,
    macros,
    make_app_handle,
    named_resources,
    parse_app_handle,
    parse_mounts,
    resource,
    runopts,
)


@pytest.mark.parametrize(
    ("handle", "parts"),
    [
        ("local_cwd://default/echo-1a", ("local_cwd", "default", "echo-1a")),
        ("local_cwd:///echo-1a", ("local_cwd", "", "echo-1a")),
        ("kubernetes://s/ns:app-1", ("kubernetes", "s", "ns:app-1")),
    ],
)
def test_handles_round_trip(handle: str, parts: tuple[str, str, str]) -> None:
    parsed = parse_app_handle(handle)
    assert tuple(parsed) == parts
    assert make_app_handle(*parsed) == handle


@pytest.mark.parametrize("bad", ["", "echo-1", "local_cwd://default", "://s/a", "local_cwd:/s/a"])
def test_bad_handles(bad: str) -> None:
    with pytest.raises(SpecsError) as e:
        parse_app_handle(bad)
    assert e.value.field == "app handle"
    assert repr(bad) in str(e.value)
    assert "SCHEDULER://SESSION/APP_ID" in str(e.value)
    assert "e.g. local_cwd://torchx/echo-" in str(e.value)  # as `torchx run` prints handles


def test_parse_mounts() -> None:
    mounts = parse_mounts(
        "type=bind,src=/data,dst=/mnt/data,readonly "
        "type=volume,source=vol1,target=/v type=device,src=/dev/fuse,perm=rw"
    )
    assert mounts == [
        BindMount("/data", "/mnt/data", read_only=True),
        VolumeMount("vol1", "/v", read_only=False),
        DeviceMount("/dev/fuse", "/dev/fuse", "rw"),
    ]
    # the same, one per list entry, and joined by commas as --mounts collects them
    assert parse_mounts(["type=bind,src=/a,dst=/b", "type=bind,src=/c,dst=/d"]) == parse_mounts(
        "type=bind,src=/a,dst=/b,type=bind,src=/c,dst=/d"
    )


@pytest.mark.parametrize(
    ("text", "field", "fragment"),
    [
        ("src=/a,dst=/b", "mounts", "starts with type="),
        ("type=nfs,src=/a,dst=/b", "mounts.type", "bind, volume, device"),
        ("type=bind,dst=/b", "mounts.src", "needs src="),
        ("type=bind,src=/a", "mounts.dst", "needs dst="),
        ("type=bind,src=/a,dst=/b,colour=red", "mounts", "unknown option(s) colour"),
        ("type=device,src=/dev/x,perm=rwx", "mounts.perm", "r, w and m"),
        ("type=bind,src", "mounts", "is not key=value"),
    ],
)
def test_bad_mounts(text: str, field: str, fragment: str) -> None:
    with pytest.raises(SpecsError) as e:
        parse_mounts(text)
    assert e.value.field == field
    assert fragment in str(e.value)


def _opts() -> runopts:
    o = runopts()
    o.add("log_dir", str, "where logs go")
    o.add("workers", int, "how many", default=2)
    o.add("ratio", float, "a ratio", default=0.5)
    o.add("verbose", bool, "talk more", default=False)
    o.add("tags", list, "labels")
    o.add("labels", dict, "k:v pairs")
    o.add("queue", str, "the queue", required=True)
    return o


def test_runopts_resolve_and_parse() -> None:
    o = _opts()
    cfg = o.cfg_from_str("queue=q1,workers=4,ratio=1,verbose=yes,tags=a;b,labels=team:ml;env:dev")
    assert o.resolve(cfg) == {
        "log_dir": None,
        "workers": 4,
        "ratio": 1.0,
        "verbose": True,
        "tags": ["a", "b"],
        "labels": {"team": "ml", "env": "dev"},
        "queue": "q1",
    }
    # strings (from a config file) are parsed against the declared types
    assert o.resolve({"queue": "q", "workers": "7"})["workers"] == 7
    assert "queue (str, required)" in str(o)
    assert len(o) == 7 and "tags" in o


@pytest.mark.parametrize(
    ("cfg", "fragment"),
    [
        ({"queue": "q", "log_dri": "/x"}, "run option 'log_dri': got '/x'; did you mean 'log_dir'"),
        ({}, "run option 'queue': got None; it is required"),
        ({"queue": "q", "workers": "many"}, "run option 'workers': got 'many'; expected int"),
        ({"queue": "q", "workers": True}, "expected int"),
        ({"queue": "q", "verbose": "maybe"}, "expected a bool"),
        ({"queue": "q", "tags": [1, 2]}, "expected list of str"),
        ({"queue": "q", "labels": "novalue"}, "expected a map"),
    ],
)
def test_runopts_bad_input(cfg: dict[str, object], fragment: str) -> None:
    with pytest.raises(SpecsError) as e:
        _opts().resolve(cfg)  # type: ignore[arg-type]
    assert fragment in str(e.value)


def test_cfg_string_must_be_key_value() -> None:
    with pytest.raises(SpecsError, match=r"^cfg: got 'justaword'; the pair 'justaword' has no '='"):
        _opts().cfg_from_str("justaword")


def test_macros_apply() -> None:
    role = Role(
        "w",
        image="/img",
        entrypoint="${img_root}/bin/run",
        args=[
            "--id",
            macros.app_id,
            "--rank",
            macros.replica_id,
            "$${" + macros.rank0_env + "}",
            "$HOME",
        ],
        env={"OUT": f"/tmp/{macros.app_id}/{macros.replica_id}"},
    )
    filled = macros.Values(img_root="/img", app_id="a-1", replica_id="3", rank0_env="MASTER").apply(
        role
    )
    assert filled.entrypoint == "/img/bin/run"
    assert filled.args == ["--id", "a-1", "--rank", "3", "${MASTER}", "$HOME"]
    assert filled.env == {"OUT": "/tmp/a-1/3"}
    assert role.args[1] == "${app_id}"  # the original is untouched


def test_macros_apply_copies_the_role_and_keeps_a_subclass() -> None:
    @dataclasses.dataclass
    class Tagged(Role):
        tag: str = "t"

    values = macros.Values(img_root="/img", app_id="a-1", replica_id="0")
    for role in (
        Role(
            "w", "i", "run", args=[macros.app_id], env={"A": macros.replica_id}, port_map={"p": 1}
        ),
        Tagged("w", "i", "run", args=[macros.app_id], metadata={"k": [macros.img_root]}, tag="x"),
    ):
        filled = values.apply(role)
        assert type(filled) is type(role) and filled is not role
        assert filled.args == ["a-1"] and role.args == ["${app_id}"]
        assert filled.args is not role.args and filled.env is not role.env
        unfilled = {"args", "env", "entrypoint", "metadata"}
        for f in dataclasses.fields(role):
            if f.name not in unfilled:
                assert getattr(filled, f.name) == getattr(role, f.name), f.name
    assert filled.metadata == {"k": ["/img"]} and isinstance(filled, Tagged) and filled.tag == "x"
    # every value is offered for substitution (the mapping is written out field by field)
    names = {f.name for f in dataclasses.fields(values)}
    assert values.substitute(" ".join(f"${{{n}}}" for n in sorted(names))) == " ".join(
        str(getattr(values, n)) for n in sorted(names)
    )


def test_named_resources() -> None:
    assert resource(h="gpu.small") == Resource(cpu=8, gpu=1, memMB=32 * 1024)
    p4d = get_named_resources("p4d.24xlarge")
    assert p4d.gpu == 8 and p4d.capabilities["node.kubernetes.io/instance-type"] == "p4d.24xlarge"
    assert resource(cpu=2, gpu=0, memMB=512) == Resource(cpu=2, gpu=0, memMB=512)
    assert resource() == Resource(cpu=2, gpu=0, memMB=1024)  # as pytorch/torchx
    assert "cpu.small" in named_resources and len(named_resources) > 10
    # each lookup is a fresh copy, so editing one does not change the registry
    a = get_named_resources("cpu.small")
    a.capabilities["x"] = 1
    assert get_named_resources("cpu.small").capabilities == {}


def test_unknown_named_resource_suggests() -> None:
    with pytest.raises(SpecsError) as e:
        resource(h="gpu.smal")
    assert "'gpu.small'" in str(e.value) and e.value.field == "named resource"
    # nothing near: the generic sizes first, never the "no request" names NULL and MISSING
    with pytest.raises(SpecsError) as e:
        resource(h="nosuch")
    message = str(e.value)
    assert message.startswith("named resource: got 'nosuch'; known: gpu.small, ")
    assert "gpu.small" in message and "NULL" not in message and "MISSING" not in message


def test_unknown_named_resource_lists_plugin_names_apart_from_cloud_types(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata as md

    from torchx.specs._named_resources import MAX_HINT_PLUGIN_NAMES, _NamedResources

    plugins: list[str] = []

    def entry_points(group: str) -> list[md.EntryPoint]:
        assert group == "torchx.named_resources"
        return [md.EntryPoint(n, "torchx.specs:Resource", group) for n in plugins]

    monkeypatch.setattr(md, "entry_points", entry_points)
    builtin = _NamedResources()
    with pytest.raises(SpecsError) as e:
        builtin["zzzz"]
    clouds = len(builtin) - 12  # besides the 10 generic sizes, NULL and MISSING
    assert f", cpu.xlarge, {clouds} cloud instance types (list(" in str(e.value)
    plugins.extend(f"mycluster.n{k}" for k in range(MAX_HINT_PLUGIN_NAMES + 2))
    with pytest.raises(SpecsError) as e:
        _NamedResources()["zzzz"]
    # the built-in count is unchanged; the plug-ins' names are shown, the first ten
    shown = ", ".join(f"mycluster.n{k}" for k in range(MAX_HINT_PLUGIN_NAMES))
    assert (
        f", cpu.xlarge, {clouds} cloud instance types and from plug-ins {shown} and 2 more "
        "(list(torchx.specs.named_resources) names them all)"
    ) in str(e.value)


def test_a_named_resource_that_is_not_a_str_is_one_line() -> None:
    for name in (3, None, ["gpu.small"]):
        with pytest.raises(SpecsError) as e:
            named_resources[name]  # type: ignore[index]
        assert (
            str(e.value)
            == f"named resource: got {name!r}; give its name as a str, e.g. 'gpu.small'"
        )
    with pytest.raises(KeyError, match="give its name as a str"):
        resource(h=3)  # type: ignore[arg-type]


def test_cfg_from_str_splits_and_keeps_keys_as_0_7() -> None:
    from typing import List  # noqa: UP035 (as 0.7's docstring writes it)

    opts = runopts()
    opts.add("FOO", type_=List[str], default=["a"], help="an optional list option")  # noqa: UP006
    opts.add("BAR", type_=str, required=True, help="a required str option")
    # the examples of 0.7's runopts.cfg_from_str docstring
    assert opts.cfg_from_str("") == {}
    assert opts.cfg_from_str("UNKNOWN=VALUE") == {}
    assert opts.cfg_from_str("FOO=v1") == {"FOO": ["v1"]}
    assert opts.cfg_from_str("FOO=v1,v2") == {"FOO": ["v1", "v2"]}
    assert opts.cfg_from_str("FOO=v1;v2") == {"FOO": ["v1", "v2"]}
    for text in ("FOO=v1,v2,BAR=v3", "FOO=v1;v2,BAR=v3", "FOO=v1;v2;BAR=v3"):
        assert opts.cfg_from_str(text) == {"FOO": ["v1", "v2"], "BAR": "v3"}, text
    assert opts.cfg_from_str("BAR=''") == {"BAR": ""}
    # a value may still hold '=' where no key follows the delimiter
    assert opts.cfg_from_str("BAR=--gres=gpu:1,FOO=x") == {"BAR": "--gres=gpu:1", "FOO": ["x"]}
