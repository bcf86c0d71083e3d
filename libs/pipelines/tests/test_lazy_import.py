"""kfp is imported on first use, and kfp-kubernetes only matters when it is installed.

Each check runs in a fresh interpreter so that nothing already imported by the test
session can hide an import."""

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_importing_the_adapter_does_not_import_kfp() -> None:
    out = _run(
        """
        import sys
        import torchx.pipelines.kfp as adapter
        import torchx.pipelines.kfp.adapter as compat
        import torchx.pipelines.kfp.version as version
        assert callable(adapter.task_from_app) and callable(compat.container_from_app)
        assert version.__version__
        heavy = ("kfp", "torch", "kubernetes", "yaml")
        print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
        """
    )
    assert out == "[]"


def test_kfp_on_first_call_and_refusals_without_kfp_kubernetes() -> None:
    # One interpreter for both checks: importing kfp is the slow part.
    # A None entry in sys.modules makes the import fail exactly as a missing package does.
    out = _run(
        """
        import sys
        sys.modules["kfp.kubernetes"] = None
        import torchx.specs as specs
        from torchx.pipelines.kfp import KfpAdapterError, component_from_app, task_from_app

        component_from_app(specs.AppDef("c", [specs.Role("c", image="img", entrypoint="echo")]))
        print("kfp.dsl" in sys.modules)
        from kfp import dsl

        app = specs.AppDef("a", [specs.Role(
            "a", image="img", entrypoint="echo", resource=specs.resource(h="g5.xlarge"))])
        plain = specs.AppDef("b", [specs.Role("b", image="img", entrypoint="echo")])
        seen = []

        @dsl.pipeline(name="p")
        def p():
            task_from_app(plain)
            for kw in ({}, {"use_kubernetes": True}):
                try:
                    task_from_app(app, **kw)
                except KfpAdapterError as e:
                    seen.append(e.field)

        print(seen)
        """
    )
    loaded, refused = out.splitlines()
    assert loaded == "True"
    assert refused == (
        "[\"role 'a'.resource.capabilities['node.kubernetes.io/instance-type']\", 'use_kubernetes']"
    )
