"""torchx.specs: describe an app once, independent of where it runs.

Pure data and parsing; no I/O, nothing heavy imported. Component introspection, validation
and named resources load on first use, so importing the data types stays cheap.
"""

from typing import TYPE_CHECKING, Any

from torchx.specs._app import (
    ALL,
    MISSING,
    NULL_RESOURCE,
    AppDef,
    Resource,
    Resources,
    RetryPolicy,
    Role,
)
from torchx.specs._dryrun import AppDryRunInfo
from torchx.specs._errors import (
    ComponentNotFoundException,
    InvalidRunConfigException,
    MalformedAppHandleException,
    SpecsError,
    UnknownAppException,
    UnknownSchedulerException,
    close_matches,
    closest,
)
from torchx.specs._handle import AppHandle, ParsedAppHandle, make_app_handle, parse_app_handle
from torchx.specs._macros import macros
from torchx.specs._mounts import (
    BindMount,
    DeviceMount,
    Mount,
    MountType,
    VolumeMount,
    parse_mounts,
)
from torchx.specs._runopts import CfgVal, get_type_name, runopt, runopts, split_cfg
from torchx.specs._state import (
    NONE,
    AppState,
    AppStatus,
    AppStatusError,
    ReplicaState,
    ReplicaStatus,
    RoleStatus,
    is_started,
    is_terminal,
)

# Loaded on first attribute access (PEP 562): name -> defining module.
_LAZY = {
    **dict.fromkeys(
        (
            "ComponentArg",
            "ComponentProblem",
            "ComponentSchema",
            "ComponentValidationError",
            "ComponentValidationException",
            "get_component_schema",
            "materialize_appdef",
            "validate_component",
        ),
        "torchx.specs._component",
    ),
    "ArgType": "torchx.specs._arg_types",
    "all_component_functions": "torchx.specs._discovery",
    "find_component_function": "torchx.specs._discovery",
    "is_component_function": "torchx.specs._discovery",
    "ParsedArgs": "torchx.specs._component_argv",
    "UnknownComponentArgumentError": "torchx.specs._component_argv",
    "Docstring": "torchx.specs._docstring",
    "parse_docstring": "torchx.specs._docstring",
    "AppDefError": "torchx.specs._validate",
    "validate_app": "torchx.specs._validate",
    "GiB": "torchx.specs._named_resources",
    "get_named_resources": "torchx.specs._named_resources",
    "named_resources": "torchx.specs._named_resources",
    "resource": "torchx.specs._named_resources",
    "load_group": "torchx.util.entrypoints",
}
# pytorch/torchx 0.7's names for tables kept here under another name: name -> (module, attr).
_RENAMED = {
    "AWS_NAMED_RESOURCES": ("torchx.specs._named_resources", "AWS"),
    "GENERIC_NAMED_RESOURCES": ("torchx.specs._named_resources", "GENERIC"),
}

if TYPE_CHECKING:
    from torchx.specs._arg_types import ArgType
    from torchx.specs._component import (
        ComponentArg,
        ComponentProblem,
        ComponentSchema,
        ComponentValidationError,
        ComponentValidationException,
        get_component_schema,
        materialize_appdef,
        validate_component,
    )
    from torchx.specs._component_argv import ParsedArgs, UnknownComponentArgumentError
    from torchx.specs._discovery import (
        all_component_functions,
        find_component_function,
        is_component_function,
    )
    from torchx.specs._docstring import Docstring, parse_docstring
    from torchx.specs._named_resources import AWS as AWS_NAMED_RESOURCES
    from torchx.specs._named_resources import GENERIC as GENERIC_NAMED_RESOURCES
    from torchx.specs._named_resources import (
        GiB,
        get_named_resources,
        named_resources,
        resource,
    )
    from torchx.specs._validate import AppDefError, validate_app
    from torchx.util.entrypoints import load_group


def __getattr__(name: str) -> Any:
    module, attr = _RENAMED.get(name, (_LAZY.get(name), name))
    if module is None:
        raise AttributeError(f"module 'torchx.specs' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ALL",
    "AWS_NAMED_RESOURCES",
    "GENERIC_NAMED_RESOURCES",
    "MISSING",
    "NONE",
    "NULL_RESOURCE",
    "AppDef",
    "AppDefError",
    "AppDryRunInfo",
    "AppHandle",
    "AppState",
    "AppStatus",
    "AppStatusError",
    "ArgType",
    "BindMount",
    "CfgVal",
    "ComponentArg",
    "ComponentNotFoundException",
    "ComponentProblem",
    "ComponentSchema",
    "ComponentValidationError",
    "ComponentValidationException",
    "DeviceMount",
    "Docstring",
    "GiB",
    "InvalidRunConfigException",
    "MalformedAppHandleException",
    "Mount",
    "MountType",
    "ParsedAppHandle",
    "ParsedArgs",
    "ReplicaState",
    "ReplicaStatus",
    "Resource",
    "Resources",
    "RetryPolicy",
    "Role",
    "RoleStatus",
    "SpecsError",
    "UnknownAppException",
    "UnknownComponentArgumentError",
    "UnknownSchedulerException",
    "VolumeMount",
    "all_component_functions",
    "close_matches",
    "closest",
    "find_component_function",
    "get_component_schema",
    "get_named_resources",
    "get_type_name",
    "is_component_function",
    "is_started",
    "is_terminal",
    "load_group",
    "macros",
    "make_app_handle",
    "materialize_appdef",
    "named_resources",
    "parse_app_handle",
    "parse_docstring",
    "parse_mounts",
    "resource",
    "runopt",
    "runopts",
    "split_cfg",
    "validate_app",
    "validate_component",
]
