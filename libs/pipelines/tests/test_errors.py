"""Apps a kfp stage cannot run as they stand: each is refused with the field named."""

from typing import Any

import pytest
from kfp import dsl

import torchx.specs as specs
from torchx.pipelines.kfp import (
    ACCELERATOR_TYPE,
    KfpAdapterError,
    component_from_app,
    input_path,
    output_path,
    param,
    task_from_app,
)


def _task_error(app: specs.AppDef, **kw: Any) -> KfpAdapterError:
    """The error task_from_app raises for ``app`` while a pipeline is being defined."""
    caught: list[KfpAdapterError] = []

    @dsl.pipeline(name="bad")
    def pipeline():  # type: ignore[no-untyped-def]
        try:
            task_from_app(app, **kw)
        except KfpAdapterError as e:
            caught.append(e)
        # kfp refuses a pipeline without tasks; this one keeps it valid.
        task_from_app(specs.AppDef("ok", [specs.Role("ok", image="img", entrypoint="true")]))

    assert pipeline is not None
    assert len(caught) == 1, "task_from_app accepted an app it should refuse"
    return caught[0]


def test_no_roles() -> None:
    with pytest.raises(KfpAdapterError, match=r"roles: got \[\]; add exactly one Role"):
        component_from_app(specs.AppDef(name="empty"))


def test_two_roles_says_how_to_run_them(apps: Any) -> None:
    app = apps.python("m")
    app.roles.append(specs.Role(name="worker", image="img", entrypoint="python"))
    with pytest.raises(KfpAdapterError) as info:
        component_from_app(app)
    message = str(info.value)
    assert "['python', 'worker']" in message
    assert "kubernetes scheduler" in message


def test_multi_replica_says_how_to_run_it(apps: Any) -> None:
    with pytest.raises(KfpAdapterError, match=r"num_replicas: got 4; set it to 1.*kubernetes"):
        component_from_app(apps.python("m", num_replicas=4))


@pytest.mark.parametrize("image", ["", "  "])
def test_missing_image(apps: Any, image: str) -> None:
    app = apps.python("m")
    app.roles[0].image = image
    with pytest.raises(KfpAdapterError, match=r"role 'python'\.image: got .*container image"):
        component_from_app(app)


def test_not_an_appdef() -> None:
    with pytest.raises(KfpAdapterError, match=r"give a torchx\.specs\.AppDef"):
        component_from_app("trainer")  # type: ignore[arg-type]


def test_invalid_app_reports_specs_problems(apps: Any) -> None:
    app = apps.python("m")
    app.roles[0].entrypoint = ""
    with pytest.raises(KfpAdapterError, match="entrypoint is empty"):
        component_from_app(app)


def test_macro_kfp_cannot_fill(apps: Any) -> None:
    with pytest.raises(KfpAdapterError, match=r"args\[2\].*rank0_env.*no peer replicas"):
        component_from_app(apps.python("m", f"--master=${specs.macros.rank0_env}"))
    with pytest.raises(KfpAdapterError, match=r"env\['MASTER'\].*rank0_env"):
        component_from_app(apps.python("m", env={"MASTER": specs.macros.rank0_env}))


def test_placeholders_in_env_are_refused(apps: Any) -> None:
    with pytest.raises(KfpAdapterError, match=r"env\['RUN'\].*only in args"):
        component_from_app(apps.python("m", env={"RUN": specs.macros.app_id}))
    with pytest.raises(KfpAdapterError, match=r"env\['OUT'\].*only in args"):
        component_from_app(apps.python("m", env={"OUT": output_path("data")}))


def test_bad_placeholders(apps: Any) -> None:
    with pytest.raises(KfpAdapterError, match=r"unknown placeholder \$\{kfp\.outptu"):
        component_from_app(apps.python("m", "${kfp.outptu:data}"))
    with pytest.raises(KfpAdapterError, match=r"output name: got 'Data'; use lowercase"):
        output_path("Data")
    with pytest.raises(KfpAdapterError, match="reserved"):
        input_path("torchx_app_id")
    with pytest.raises(KfpAdapterError, match="not both"):
        component_from_app(apps.python("m", input_path("x"), output_path("x")))
    with pytest.raises(KfpAdapterError, match="not both"):
        component_from_app(apps.python("m", input_path("x"), param("x")))


def test_missing_and_unknown_inputs(apps: Any) -> None:
    app = apps.python("m", input_path("data"), param("lr"))
    err = _task_error(app, inputs={"data": "ignored"})
    assert err.field == "app 'python' inputs"
    assert "its args use lr; pass inputs={name: value}" in str(err)
    err = _task_error(apps.python("m"), inputs={"data": "x"})
    assert err.value == ["data"]
    assert "no inputs" in str(err)


def test_inputs_of_the_wrong_type_name_the_field(apps: Any) -> None:
    app = apps.python("m", param("lr"))
    err = _task_error(app, inputs=["lr"])
    assert str(err).startswith("app 'python' inputs: got ['lr']; give a dict of name -> value")
    err = _task_error(app, inputs={"lr": 0.1})
    assert str(err) == (
        "app 'python' inputs['lr']: got 0.1; param() takes a string; pass str(0.1) or a"
        " pipeline parameter"
    )


def test_outside_a_pipeline(apps: Any) -> None:
    with pytest.raises(KfpAdapterError, match=r"inside a @dsl\.pipeline function"):
        task_from_app(apps.python("m"))
    # the 0.7 factory called outside a pipeline names itself, not task_from_app
    from torchx.pipelines.kfp.adapter import component_from_app

    with pytest.raises(KfpAdapterError) as caught:
        component_from_app(apps.python("m"))()
    assert str(caught.value).startswith("component_from_app(app)(...): got 'python';")
    assert "task_from_app" not in str(caught.value)


@pytest.mark.parametrize(
    ("mount", "expected"),
    [
        (specs.BindMount(src_path="/host", dst_path="/data"), "cannot mount host paths"),
        (specs.DeviceMount(src_path="/dev/fuse", dst_path="/dev/fuse"), "host devices"),
        (specs.VolumeMount(src="pvc", dst_path="/d", read_only=True), "read-write only"),
    ],
)
def test_mounts_kfp_cannot_express(apps: Any, mount: specs.Mount, expected: str) -> None:
    err = _task_error(apps.python("m", mounts=[mount]))
    assert err.field == "role 'python'.mounts[0]"
    assert expected in str(err)


def test_kubernetes_only_settings_refused_without_it(apps: Any) -> None:
    err = _task_error(
        apps.python("m", resource=specs.resource(h="g5.xlarge")), use_kubernetes=False
    )
    assert err.field == "role 'python'.resource.capabilities['node.kubernetes.io/instance-type']"
    assert "torchx-pipelines[kubernetes]" in str(err)
    err = _task_error(
        apps.python("m", mounts=[specs.VolumeMount(src="pvc", dst_path="/d")]),
        use_kubernetes=False,
    )
    assert "cannot mount a volume" in str(err)


@pytest.mark.parametrize(
    ("resource", "field", "expected"),
    [
        (
            specs.Resource(cpu=1, gpu=1, memMB=1, devices={"vpc.amazonaws.com/efa": 1}),
            "devices",
            "one accelerator",
        ),
        (
            specs.Resource(cpu=1, gpu=0, memMB=1, devices={"a.com/x": 1, "b.com/y": 1}),
            "devices",
            "one device kind",
        ),
        (
            specs.Resource(cpu=1, gpu=0, memMB=1, capabilities={ACCELERATOR_TYPE: "x.com/gpu"}),
            f"capabilities[{ACCELERATOR_TYPE!r}]",
            "gpu is 0",
        ),
        (
            specs.Resource(cpu=1, gpu=1, memMB=1, capabilities={"zone": 3}),
            "capabilities['zone']",
            "only string capabilities",
        ),
    ],
)
def test_resources_kfp_cannot_express(
    apps: Any, resource: specs.Resource, field: str, expected: str
) -> None:
    err = _task_error(apps.python("m", resource=resource))
    assert err.field == f"role 'python'.resource.{field}"
    assert expected in str(err)
