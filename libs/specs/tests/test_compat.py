"""pytorch/torchx 0.7's specs API: module paths, exception names and behaviours."""

from __future__ import annotations

import importlib
import importlib.util
import json
import textwrap
from pathlib import Path
from typing import Dict, List, Optional  # noqa: UP035 - the spelling of pytorch/torchx code

import pytest

import torchx.specs as specs
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    AppStatus,
    AppStatusError,
    ReplicaStatus,
    Resource,
    Role,
    RoleStatus,
    SpecsError,
    runopts,
)

from .statuses import failed_trainer


def test_old_module_paths_re_export_the_same_objects() -> None:
    api = importlib.import_module("torchx.specs.api")
    for name in api.__all__:
        assert hasattr(api, name), name
    assert api.AppDef is specs.AppDef and api.Role is specs.Role
    assert api.ReplicaState is api.AppState is specs.AppState
    assert (api.MISSING, api.NONE, api.ALL) == ("<MISSING>", "<NONE>", "all")
    builders = importlib.import_module("torchx.specs.builders")
    assert builders.materialize_appdef is specs.materialize_appdef
    assert builders.make_app_handle("s", "n", "a") == "s://n/a"
    assert builders.parse_mounts(["type=bind", "src=/a", "dst=/b"])[0].dst_path == "/b"
    for module in ("finder", "file_linter", "named_resources_aws", "named_resources_generic"):
        mod = importlib.import_module(f"torchx.specs.{module}")
        assert mod.__all__ and all(hasattr(mod, n) for n in mod.__all__), module
    for name in specs.__all__:
        assert getattr(specs, name) is not None, name


@pytest.mark.parametrize(
    ("call", "upstream"),
    [
        (lambda: specs.parse_app_handle("nope"), "MalformedAppHandleException"),
        (lambda: _opts().resolve({"prio": "x"}), "InvalidRunConfigException"),
        (lambda: _opts().resolve({}), "InvalidRunConfigException"),
        (lambda: _opts().resolve({"cluster": "c", "nope": 1}), "InvalidRunConfigException"),
    ],
)
def test_upstream_exception_names_and_specs_error_both_catch(call: object, upstream: str) -> None:
    exc_type = getattr(importlib.import_module("torchx.specs.api"), upstream)
    assert issubclass(exc_type, SpecsError) and issubclass(exc_type, ValueError)
    with pytest.raises(exc_type):
        call()  # type: ignore[operator]
    with pytest.raises(SpecsError):
        call()  # type: ignore[operator]


def _opts() -> runopts:
    opts = runopts()
    opts.add("cluster", type_=str, help="cluster", required=True)
    opts.add("prio", type_=float, help="priority", default=0.5)
    return opts


def test_invalid_run_config_names_the_key() -> None:
    with pytest.raises(specs.InvalidRunConfigException) as e:
        _opts().resolve({"cluster": 3})
    assert e.value.cfg_key == "cluster" and "expected str" in str(e.value)


def test_runopts_take_list_and_dict_types_spelled_with_typing() -> None:
    opts = runopts()
    opts.add("tags", type_=List[str], help="tags", default=["a"])  # noqa: UP006
    opts.add("labels", type_=Dict[str, str], help="labels", default={})  # noqa: UP006
    opts.add("mounts", type_=list[str], help="mounts")
    assert opts.cfg_from_str("tags=x;y,labels=k:v") == {"tags": ["x", "y"], "labels": {"k": "v"}}
    assert opts.resolve({"tags": ["q"]})["labels"] == {}
    assert runopts.is_type(["a"], List[str]) and not runopts.is_type([1], List[str])  # noqa: UP006
    assert runopts.is_type({"a": "b"}, Dict[str, str])  # noqa: UP006
    assert not runopts.is_type({"a": 1}, Dict[str, str])  # noqa: UP006
    assert specs.get_type_name(List[str]) == "typing.List[str]"  # noqa: UP006 (as upstream)
    assert specs.get_type_name(int) == "int" and specs.get_type_name(list) == "list"
    with pytest.raises(TypeError, match="List\\[str\\]"):
        opts.add("bad", type_=List[int], help="ints")  # noqa: UP006
    with pytest.raises(TypeError):
        opts.add("bad", type_=List[str], help="x", default="not a list")  # noqa: UP006
    with pytest.raises(TypeError):
        opts.add("bad", type_=Dict[str, str], help="x", default=["a"])  # noqa: UP006


def test_an_empty_list_or_dict_default_fits_either_container_option_as_in_0_7() -> None:
    opts = runopts()
    opts.add("env", type_=Dict[str, str], help="env", default=[])  # noqa: UP006
    opts.add("tags", type_=List[str], help="tags", default={})  # noqa: UP006
    assert opts.resolve({}) == {"env": {}, "tags": []}


def test_role_entrypoint_defaults_to_missing_and_validation_refuses_it() -> None:
    role = Role(name="r", image="img")
    assert role.entrypoint == specs.MISSING == "<MISSING>"
    assert role.base_image is None
    with pytest.raises(specs.AppDefError, match="entrypoint"):
        specs.validate_app(AppDef("a", [role]))
    info: AppDryRunInfo[str] = AppDryRunInfo("req", str)
    assert role.pre_proc("local_cwd", info) is info


def test_resource_defaults_and_named_resources_under_upstream_keys() -> None:
    assert specs.resource() == Resource(cpu=2, gpu=0, memMB=1024)
    assert specs.resource(cpu=0, memMB=0) == Resource(cpu=2, gpu=0, memMB=1024)
    assert specs.resource(cpu=4, gpu=1, memMB=10, h="gpu.small").gpu == 1
    aws = specs.named_resources["aws_p4d.24xlarge"]
    assert (aws.cpu, aws.gpu, aws.memMB) == (96, 8, 1152 * int(1024 * 0.96))
    assert aws.capabilities == {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    assert aws.devices == {"vpc.amazonaws.com/efa": 4}
    assert specs.named_resources["p4d.24xlarge"] == aws  # our earlier key, kept as an alias
    assert specs.named_resources["cpu.micro"] == Resource(cpu=1, gpu=0, memMB=1024)
    assert specs.named_resources["NULL"] == specs.NULL_RESOURCE
    aws_mod = importlib.import_module("torchx.specs.named_resources_aws")
    assert aws_mod.aws_trn1_32xlarge().devices == {
        aws_mod.EFA_DEVICE: 8,
        aws_mod.NEURON_DEVICE: 16,
    }
    assert set(aws_mod.NAMED_RESOURCES) <= set(specs.named_resources)
    assert aws_mod.instance_type_from_resource(aws) == "p4d.24xlarge"
    with pytest.warns(UserWarning, match="instance type"):
        assert aws_mod.instance_type_from_resource(Resource(1, 0, 1)) is None
    generic = importlib.import_module("torchx.specs.named_resources_generic")
    assert generic.NAMED_RESOURCES["gpu.large"]() == Resource(cpu=32, gpu=4, memMB=128 * 1024)


def test_app_status_prints_and_raises_like_upstream() -> None:
    status = AppStatus(
        AppState.FAILED,
        roles=[failed_trainer(2), RoleStatus("ps", [ReplicaStatus(0, AppState.SUCCEEDED, "ps")])],
    )
    text = status.format()
    assert text.startswith("AppStatus:\n    State: FAILED\n    Num Restarts: 0\n    Roles: ")
    assert "\n *trainer[0]:SUCCEEDED (exitcode: 0)\n  trainer[1]:FAILED (exitcode: 2)" in text
    assert "Structured Error Msg: <NONE>" in text and "UI URL: None" in text
    assert "ps[0]" not in status.format(filter_roles=["trainer"])
    # print() shows a YAML document of the fields (JSON where PyYAML is not installed, as in
    # a plain `pip install torchx-specs`), the state as NAME (value)
    printed = str(status)
    if importlib.util.find_spec("yaml") is not None:
        assert printed.startswith("AppStatus:\n") and "state: FAILED (5)" in printed
    else:
        assert json.loads(printed)["AppStatus"]["state"] == "FAILED (5)"
    assert repr(AppState.RUNNING) == "RUNNING (3)" and str(AppState.RUNNING) == "RUNNING"
    with pytest.raises(AppStatusError, match=r"(?s)^job did not succeed:.*FAILED") as e:
        status.raise_for_status()
    assert e.value.status is status
    with pytest.raises(AppStatusError):
        AppStatus(AppState.RUNNING).raise_for_status()
    AppStatus(AppState.SUCCEEDED).raise_for_status()
    assert specs.is_started(AppState.RUNNING) and not specs.is_started(AppState.PENDING)


def test_dryrun_info_prints_the_request_and_keeps_upstream_attribute_names() -> None:
    info: AppDryRunInfo[dict[str, int]] = AppDryRunInfo({"a": 1}, lambda r: f"REQ {r['a']}")
    assert repr(info) == str(info) == "REQ 1"
    app = AppDef("a", [Role("r", image="", entrypoint="true")])
    info._app, info._cfg, info._scheduler = app, {"k": "v"}, "local_cwd"
    assert (info.app, info.cfg, info.scheduler) == (app, {"k": "v"}, "local_cwd")


def _component_file(tmp_path: Path) -> Path:
    path = tmp_path / "comps.py"
    path.write_text(
        textwrap.dedent(
            '''
            from typing import Dict, List, Optional
            import torchx.specs as specs

            def train(
                *script_args: str,
                lr: float = 0.1,
                tags: Optional[List[str]] = None,
                env: Optional[Dict[str, str]] = None,
                image: str = "img",
            ) -> specs.AppDef:
                """Trains a model.

                A longer description.

                Args:
                    script_args: passed to the script
                    lr: learning rate
                    tags: labels
                    env: environment
                    image: the image
                """
                return specs.AppDef("train", [specs.Role(
                    "trainer", image=image, entrypoint="python",
                    args=[*script_args, f"--lr={lr}", *(tags or [])], env=env or {})])

            def untyped(x, y: int) -> specs.AppDef:
                return specs.AppDef("u")

            def not_a_component(x: int) -> int:
                return x
            '''
        )
    )
    return path


def test_materialize_appdef_from_cli_style_args(tmp_path: Path) -> None:
    from torchx.specs.finder import get_component

    fn = get_component(f"{_component_file(tmp_path)}:train").fn
    app = specs.materialize_appdef(fn, ["--lr", "0.5", "--tags", "a,b", "--", "x.py", "--k"])
    assert app.roles[0].args == ["x.py", "--k", "--lr=0.5", "a", "b"]
    app = specs.materialize_appdef(fn, ["--env", "A=1,B=2"], {"lr": "0.01", "image": "mine"})
    assert app.roles[0].env == {"A": "1", "B": "2"} and app.roles[0].image == "mine"
    assert "--lr=0.01" in app.roles[0].args
    app = specs.materialize_appdef(fn, ["--lr", "0.5"], config={"lr": 0.9})
    assert "--lr=0.9" in app.roles[0].args
    from torchx.specs.builders import parse_args

    ns = parse_args(fn, ["--lr", "0.3", "s.py"])
    assert (ns.lr, ns.script_args, ns.image) == (0.3, ["s.py"], "img")


def test_finder_records_and_errors(tmp_path: Path) -> None:
    from torchx.specs import finder

    path = _component_file(tmp_path)
    record = finder.get_component(f"{path}:train")
    assert (record.name, record.fn_name) == (f"{path}:train", "train")
    assert record.description == "Trains a model.\nA longer description."
    assert record.validation_errors == [] and callable(record.fn)
    with pytest.raises(finder.ComponentValidationException, match="no type annotation"):
        finder.get_component(f"{path}:untyped")
    with pytest.raises(finder.ComponentNotFoundException, match="did you mean 'untyped'"):
        finder.get_component(f"{path}:untype")
    with pytest.raises(finder.ComponentNotFoundException, match=r"did you mean 'utils\.echo'"):
        finder.get_component("utils.ecko")
    # the same class as the components' error, so either except form catches it
    from torchx.components import ComponentNotFoundError

    with pytest.raises(finder.ComponentNotFoundException):
        raise ComponentNotFoundError("component", "x", "none")
    assert finder.ComponentValidationException is specs.ComponentValidationError
    builtins = finder.get_components()
    assert {"utils.echo", "dist.ddp", "utils.booth"} <= set(builtins)
    assert builtins["utils.echo"].fn_name == "echo"
    source = finder.get_builtin_source("utils.echo")
    assert "def echo(" in source and "from torchx.specs import" in source


def test_file_linter_validate_and_docstrings(tmp_path: Path) -> None:
    from torchx.specs import file_linter

    path = str(_component_file(tmp_path))
    assert file_linter.validate(path, "train") == []
    problems = file_linter.validate(path, "untyped")
    assert [p.description for p in problems] == ["argument 'x' of untyped has no type annotation"]
    assert "returns int" in file_linter.validate(path, "not_a_component")[0].description
    assert "defines no function" in file_linter.validate(path, "missing")[0].description
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    (syntax,) = file_linter.validate(str(broken), "f")
    assert syntax.line == 1 and syntax.severity == "error"

    def documented(a: int, b: str = "x") -> AppDef:
        """Does a thing.

        Args:
            a: the a
        """
        raise NotImplementedError

    desc, args = file_linter.get_fn_docstring(documented)
    assert desc == "Does a thing." and args == {"a": "the a", "b": " "}

    def bare(a: int) -> AppDef:
        raise NotImplementedError

    desc, args = file_linter.get_fn_docstring(bare)
    assert "docstring" in desc and args == {"a": " "}


def test_util_types_decode_component_arguments() -> None:
    import inspect

    from torchx.util import types

    assert types.to_list("") == [] and types.to_list("a, b") == ["a", "b"]
    assert types.to_dict("FOO=v1,v2,BAR=v3") == {"FOO": "v1,v2", "BAR": "v3"}
    assert types.to_dict("FOO=v1;v2;BAR=''") == {"FOO": "v1;v2", "BAR": ""}
    with pytest.raises(ValueError, match="key=value"):
        types.to_dict("novalue")
    assert types.decode_optional(Optional[int]) is int  # noqa: UP045 and types.decode_optional(str) is str
    assert types.decode("1,2", List[int]) == [1, 2]  # noqa: UP006
    assert types.decode("a=1", Dict[str, int]) == {"a": 1}  # noqa: UP006
    assert types.decode("True", bool) is True and types.decode("no", bool) is False
    assert types.decode(None, int) is None and types.decode(3, int) == 3
    assert types.decode_from_string("", List[str]) is None  # noqa: UP006
    with pytest.raises(ValueError):
        types.decode_from_string("x", int)
    assert types.is_primitive(float) and not types.is_primitive(bool) and types.is_bool(bool)
    param = inspect.Parameter("p", inspect.Parameter.KEYWORD_ONLY, annotation=List[str])  # noqa: UP006
    assert types.get_argparse_param_type(param) is str
    assert types.none_throws(0) == 0
    with pytest.raises(AssertionError, match="gone"):
        types.none_throws(None, "gone")


def test_one_letter_arguments_take_a_single_dash_before_the_script_args() -> None:
    def comp(*args: str, j: str = "1", h: str = "", m: str = "") -> AppDef:
        return AppDef("c", [Role("r", image="", entrypoint="e", args=[j, h, m, *args])])

    app = specs.materialize_appdef(comp, ["-j", "2", "-h=gpu.small", "-m", "mod", "--", "-x", "-j"])
    assert app.roles[0].args == ["2", "gpu.small", "mod", "-x", "-j"]
    # as 0.7's argparse parser: a flag the component does not declare is refused, not passed on
    with pytest.raises(specs.SpecsError, match=r"got '-x'; no such argument.*after '--'\)"):
        specs.materialize_appdef(comp, ["-j", "2", "-x", "-j"])


def test_util_entrypoints_load_and_load_group() -> None:
    from torchx.util import entrypoints

    # the ``pytest`` command is an entry point wherever these tests run
    group = entrypoints.load_group("console_scripts")
    assert group is not None and "pytest" in group and callable(group["pytest"])
    assert entrypoints.load_group("torchx.no-such-group") is None
    assert entrypoints.load_group("torchx.no-such-group", default={"a": len}) == {"a": len}
    main = entrypoints.load("console_scripts", "pytest")
    assert callable(main) and main.__module__.split(".")[0] in ("pytest", "_pytest")
    assert entrypoints.load("console_scripts", "no-such-script", default=len) is len
    with pytest.raises(KeyError, match="pytest"):
        entrypoints.load("console_scripts", "no-such-script")


def test_0_7_keyword_names_of_specs_functions() -> None:
    opts = runopts()
    opts.add(cfg_key="n", type_=int, help="a number", default=1)
    assert opts.cfg_from_str(cfg_str="n=3") == {"n": 3}
    (mount,) = specs.parse_mounts(opts=["type=bind,src=/a,dst=/b"])
    assert isinstance(mount, specs.BindMount) and mount.dst_path == "/b"
    assert specs.get_named_resources(res="aws_p3.2xlarge").gpu == 1


def test_an_unknown_named_resource_is_a_key_error_too() -> None:
    with pytest.raises(KeyError) as e:
        specs.named_resources["aws_p4d.24xlarg"]
    assert isinstance(e.value, SpecsError)
    assert str(e.value).startswith("named resource: got 'aws_p4d.24xlarg'; did you mean")
    with pytest.raises(SpecsError):
        specs.resource(h="nope.nope")


def _env_component(env: Optional[Dict[str, str]] = None) -> AppDef:  # noqa: UP006, UP045
    return AppDef("c", [Role("c", "/", entrypoint="env", env=env or {})])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("CUDA_VISIBLE_DEVICES=0,1", {"CUDA_VISIBLE_DEVICES": "0,1"}),
        ("CUDA_VISIBLE_DEVICES=0,1,LOGLEVEL=INFO",
            {"CUDA_VISIBLE_DEVICES": "0,1", "LOGLEVEL": "INFO"}),
        ("NCCL_SOCKET_IFNAME=eth0,eth1;A=x;y;B=''",
            {"NCCL_SOCKET_IFNAME": "eth0,eth1", "A": "x;y", "B": ""}),
        ("A=1, B=2", {"A": "1", "B": "2"}),
        ("JAVA_OPTS=-Dx=1,B=2", {"JAVA_OPTS": "-Dx=1", "B": "2"}),  # 0.7 refused this one
        ("A=", {"A": ""}),
    ],
)  # fmt: skip
def test_a_dict_argument_is_read_as_0_7s_to_dict_reads_it(
    text: str, expected: dict[str, str]
) -> None:
    from torchx.util.types import to_dict

    assert to_dict(text) == expected
    app = specs.materialize_appdef(_env_component, ["--env", text])
    assert app.roles[0].env == expected
    # a [component:NAME] default of .torchxconfig is read the same way
    app = specs.materialize_appdef(_env_component, [], cmpnt_defaults={"env": text})
    assert app.roles[0].env == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("noequals", "the pair 'noequals' has no '='"),
        ("a,b=1", "the pair 'a' has no '='"),
        ("=1", "no key before the first '='"),
        ("A=x,=y", "no key before the '=' after 'x,'"),
    ],
)
def test_a_malformed_dict_argument_is_one_line_naming_the_argument(text: str, why: str) -> None:
    from torchx.util.types import to_dict

    with pytest.raises(SpecsError) as e:
        specs.materialize_appdef(_env_component, ["--env", text])
    assert str(e.value).startswith(f"_env_component --env: got {text!r}; {why}; expected ")
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=why):
        to_dict(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=1,x.y=2", {"a": "1", "x.y": "2"}),
        ("a=1, 2b=3", {"a": "1", "2b": "3"}),
        ("k=1,,", {"k": "1,,"}),
        ("a=1,,b=2", {"a": "1,", "b": "2"}),
        ("FOO=v1;v2;BAR=v3", {"FOO": "v1;v2", "BAR": "v3"}),
    ],
)
def test_cfg_is_split_as_0_7_split_it_by_the_dict_arguments_rule(
    text: str, expected: dict[str, str]
) -> None:
    # 0.7's runopts.cfg_from_str split -cfg with to_dict, the reader of Dict arguments
    from torchx.util.types import to_dict

    assert specs.split_cfg(text) == to_dict(text) == expected
    opts = specs.runopts()
    for key in expected:
        opts.add(key, str, "an option")
    assert opts.cfg_from_str(text) == expected


@pytest.mark.parametrize("text", ["noequals", "a,b=1", "=1", "A=x,=y"])
def test_malformed_cfg_and_dict_arguments_are_refused_in_one_wording(text: str) -> None:
    with pytest.raises(SpecsError) as cfg:
        specs.split_cfg(text)
    with pytest.raises(SpecsError) as arg:
        specs.materialize_appdef(_env_component, ["--env", text])
    assert str(cfg.value) == str(arg.value).replace("_env_component --env:", "cfg:", 1)


def _train(*script_args: str, debug: bool = False, lr: float = 0.1) -> AppDef:
    args = [*script_args, "--lr", str(lr), *(["--debug"] if debug else [])]
    return AppDef("train", [Role("trainer", "/", entrypoint="python", args=args)])


def test_a_word_after_a_bool_flag_is_its_value_never_the_programs_with_the_flag_on() -> None:
    # 0.7 (every flag took a value) read `--debug flase` as debug=False and passed
    # nothing on; it must not turn the flag on and hand `flase` to the program
    with pytest.raises(SpecsError) as e:
        specs.materialize_appdef(_train, ["--debug", "flase"])
    assert str(e.value) == (
        "_train --debug: got 'flase'; expected a bool: true or false (to pass 'flase' to "
        "the program, write --debug -- flase)"
    )
    # the forms that mean one thing still work
    for argv, args in [
        (["--debug", "false", "x"], ["x", "--lr", "0.1"]),
        (["--debug", "True", "x"], ["x", "--lr", "0.1", "--debug"]),
        (["--debug", "--", "x"], ["x", "--lr", "0.1", "--debug"]),
        (["--debug", "--lr", "0.5", "x"], ["x", "--lr", "0.5", "--debug"]),
        (["--debug"], ["--lr", "0.1", "--debug"]),
        (["x", "--debug", "maybe"], ["x", "--debug", "maybe", "--lr", "0.1"]),  # the program's
    ]:
        assert specs.materialize_appdef(_train, argv).roles[0].args == args, argv


def _rest(msg: str = "hi", count: int = 1) -> AppDef:
    """Echo a message.

    :param msg: the message
        to echo
    :param count: how many replicas
    """
    return AppDef("c", [Role("c", "/", entrypoint="echo", args=[msg], num_replicas=count)])


def _numpydoc(msg: str = "hi", count: int = 1) -> AppDef:
    """Echo a message.

    Parameters
    ----------
    msg : str
        the message to echo
    count : int
        how many replicas
    """
    return _rest(msg, count)


def _epydoc(msg: str = "hi", count: int = 1) -> AppDef:
    """Echo a message.

    @param msg: the message to echo
    @param count: how many replicas
    """
    return _rest(msg, count)


@pytest.mark.parametrize("fn", [_rest, _numpydoc, _epydoc])
def test_rest_numpydoc_and_epydoc_docstrings_give_argument_help_as_in_0_7(fn: object) -> None:
    from torchx.specs import file_linter, get_component_schema

    description, args = file_linter.get_fn_docstring(fn)  # type: ignore[arg-type]
    assert description == "Echo a message."
    assert args == {"msg": "the message to echo", "count": "how many replicas"}
    help_text = get_component_schema(fn).help()  # type: ignore[arg-type]
    assert "  --msg (str, default: 'hi')\n      the message to echo\n" in help_text
    assert "  --count (int, default: 1)\n      how many replicas" in help_text
    assert ":param" not in help_text and "@param" not in help_text and "-----" not in help_text


def test_the_docstring_parser_is_imported_when_a_docstring_is_parsed_not_with_specs() -> None:
    import subprocess
    import sys

    code = (
        "import sys, torchx.specs as s\n"
        "print('docstring_parser' in sys.modules)\n"
        "s.parse_docstring('Summary.\\n\\nArgs:\\n    x: help')\n"
        "print('docstring_parser' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


_SCHEMA_USE = '''
import sys
from torchx.specs import AppDef, Role, get_component_schema


def echo(msg: str = "hi", loud: bool = False) -> AppDef:
    """Echoes a message.

    Args:
        msg: the message
        loud: shout it
    """
    return AppDef(name="echo", roles=[Role(name="echo", image="i", entrypoint="echo", args=[msg])])


schema = get_component_schema(echo)
schema.call(["--msg", "x", "--loud", "yes"])
print("after a call:", "docstring_parser" in sys.modules)
print(schema.summary, "|", schema.options["msg"].help)
print("after help:", "docstring_parser" in sys.modules)
'''


def test_reading_and_calling_a_component_leaves_its_docstring_unparsed(tmp_path: Path) -> None:
    # `torchx run` shows no help: the parser's import is start-up time it does not need
    import subprocess
    import sys

    script = tmp_path / "use.py"
    script.write_text(_SCHEMA_USE)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "after a call: False",
        "Echoes a message. | the message",
        "after help: True",
    ]
