"""pytorch/torchx 0.7's torchx.util modules and the specs names added for it."""

from __future__ import annotations

import argparse
import ast
import sys
import time
import types
from pathlib import Path

import pytest


def test_specs_tables_and_load_group() -> None:
    import torchx.specs as specs
    from torchx.specs import named_resources_aws, named_resources_generic

    assert specs.AWS_NAMED_RESOURCES is named_resources_aws.NAMED_RESOURCES
    assert specs.GENERIC_NAMED_RESOURCES is named_resources_generic.NAMED_RESOURCES
    assert specs.GENERIC_NAMED_RESOURCES["gpu.small"]().gpu == 1
    assert specs.load_group("torchx.no-such-group") is None


def test_finder_module_helpers() -> None:
    import torchx
    import torchx.components as c
    import torchx.components.dist as d
    from torchx.specs.finder import is_namespace_package, is_package, module_relname

    assert is_namespace_package(torchx) and not is_namespace_package(c)
    assert is_package(c) and is_package(torchx) and not is_package(d)
    assert module_relname(d, relative_to=c) == "dist" and module_relname(d, relative_to=d) == ""
    with pytest.raises(ValueError, match="not a submodule"):
        module_relname(c, relative_to=d)


def test_file_linter_validators() -> None:
    from torchx.specs import file_linter as fl

    tree = ast.parse(
        "def good(a: int, b: Optional[List[str]] = None) -> AppDef: ...\n"
        "def bad(a, b: object, **kw) -> int: ...\n"
    )
    good, bad = (n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert fl.TorchxFunctionArgsValidator().validate(good) == []
    assert fl.TorchxReturnValidator().validate(good) == []
    problems = fl.TorchxFunctionArgsValidator().validate(bad)
    assert [p.name for p in problems] == ["TorchxFunctionArgsValidator"] * 3
    assert "'a'" in problems[0].description and "**kw" in problems[2].description
    (ret,) = fl.TorchxReturnValidator().validate(bad)
    assert "returns int" in ret.description and ret.line == 2
    visitor = fl.TorchFunctionVisitor("bad")
    visitor.visit(tree)
    assert visitor.visited_function and len(visitor.linter_errors) == 4
    assert issubclass(fl.TorchxReturnValidator, fl.TorchxFunctionValidator)

    parser = argparse.ArgumentParser(formatter_class=fl.TorchXArgumentHelpFormatter)
    parser.add_argument("--x", type=str, required=True, help="the x")
    parser.add_argument("--y", type=int, default=3, help="the y")
    text = parser.format_help()
    assert "the x (required)" in text and "the y (default: 3)" in text


def test_util_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torchx.util import datetime as tdt
    from torchx.util import io as tio
    from torchx.util import modules, shlex, strings

    assert abs(tdt.get_past_epoch_time(2) - (time.time() - 2 * 86400)) < 5
    assert shlex.join(["echo", "a b", "$x"]) == "echo 'a b' '$x'"
    assert strings.normalize_str("-My_App.1-x") == "myapp1-x"
    assert modules.load_module("os.path:join") is __import__("os").path.join
    assert modules.load_module("json") is __import__("json")
    assert modules.load_module("no.such.module") is None
    assert modules.load_module("json:no_such_attr") is None

    conf = tmp_path / "c.txt"
    conf.write_text("hello")
    assert tio.read_conf_file(str(conf)) == "hello"
    # A path under the install root, when the file is not found as given.
    assert Path(tio.get_abspath("torchx/util/io.py")).resolve() == Path(tio.__file__).resolve()
    monkeypatch.chdir(tmp_path)
    assert tio.read_conf_file("torchx/util/io.py").startswith('"""Reading a configuration')
    with pytest.raises(FileNotFoundError, match=r"no-such\.conf"):
        tio.read_conf_file("no-such.conf")
    assert Path("torchx/components") == tio.COMPONENTS_DIR


def test_cuda_helper_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    from torchx.util import cuda

    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 0)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake)
    # A CUDA build on a host without a device cannot put tensors on a GPU.
    assert cuda.has_cuda_devices() is False
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="needs torch"):
        cuda.has_cuda_devices()


def test_macros_base_img_root() -> None:
    from torchx.specs import Role, macros

    values = macros.Values(img_root="/i", app_id="a", replica_id="0", base_img_root="/b")
    role = Role("r", image="", entrypoint="e", args=[macros.base_img_root, macros.img_root])
    assert values.apply(role).args == ["/b", "/i"]
    assert macros.Values("/i", "a", "0").substitute(macros.base_img_root) == "DEPRECATED"


def test_bind_mount_source_expands_home() -> None:
    import os

    from torchx.specs.builders import BindMount, parse_mounts

    (m,) = parse_mounts(["type=bind", "src=~/data", "dst=/data"])
    assert m == BindMount(src_path=os.path.expanduser("~/data"), dst_path="/data")
