"""Specs: layers and models as plain data (dict, JSON, YAML), never pickled code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._errors import SpecError
from ._registry import LAYER_TYPES, SPEC_FORMAT_VERSION

if TYPE_CHECKING:
    from ._layer import Layer


def dumps_json(spec: dict[str, Any], indent: int | None = 2) -> str:
    return json.dumps(spec, indent=indent)


def dumps_yaml(spec: dict[str, Any]) -> str:
    import yaml

    return str(yaml.safe_dump(spec, sort_keys=False))


def parse(text: str) -> Any:
    """Parse a JSON or YAML document."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise SpecError(f"the spec is not valid JSON: {e}") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise SpecError(f"the spec is not valid YAML: {e}") from None


def from_spec(spec: dict[str, Any] | str) -> Layer:
    """Rebuild a layer or model from ``to_spec()`` output, or from its JSON/YAML text."""
    data = parse(spec) if isinstance(spec, str) else spec
    if not isinstance(data, dict):
        raise SpecError(f"a spec must be a mapping, got {type(data).__name__}")
    version = data.get("format_version")
    if version is None:
        raise SpecError(
            f"spec field 'format_version' is missing; this library writes {SPEC_FORMAT_VERSION}"
        )
    if not isinstance(version, int) or not 1 <= version <= SPEC_FORMAT_VERSION:
        raise SpecError(
            f"spec field format_version={version!r} is not supported; this library reads "
            f"versions 1 to {SPEC_FORMAT_VERSION}"
        )
    body = {k: v for k, v in data.items() if k != "format_version"}
    return layer_from_body(body, "spec")


def layer_from_body(body: Any, where: str) -> Layer:
    if not isinstance(body, dict):
        raise SpecError(f"{where}: expected a layer spec mapping, got {body!r}")
    kind = body.get("type")
    cls = LAYER_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise SpecError(
            f"{where}.type={kind!r} is not a known layer type; known types include "
            f"{', '.join(sorted(LAYER_TYPES)[:12])}, ..."
        )
    unknown = set(body) - {"type", "name", "config", "input_shapes"}
    if unknown:
        raise SpecError(
            f"{where}: unknown field(s) {sorted(unknown)}; a layer spec has type, name, config "
            "and input_shapes"
        )
    config = body.get("config", {})
    if not isinstance(config, dict):
        raise SpecError(f"{where}.config={config!r}: expected a mapping of arguments")
    name = body.get("name")
    try:
        layer = cls.from_config(config, name)
    except SpecError:
        raise
    except (TypeError, ValueError, KeyError) as e:
        raise SpecError(f"{where} ({kind}): bad config: {e}") from None
    shapes = body.get("input_shapes")
    if shapes is not None and not layer.built:
        if not isinstance(shapes, list):
            raise SpecError(f"{where}.input_shapes={shapes!r}: expected a list of shapes")
        try:
            layer.build(*shapes)
        except (TypeError, ValueError) as e:
            raise SpecError(f"{where}.input_shapes={shapes!r}: {e}") from None
    return layer


def save_spec(layer: Layer, path: str | Path) -> None:
    """Write ``layer.to_spec()`` to ``path``: YAML for .yaml/.yml, JSON otherwise."""
    p = Path(path)
    spec = layer.to_spec()
    text = dumps_yaml(spec) if p.suffix in (".yaml", ".yml") else dumps_json(spec)
    p.write_text(text, encoding="utf-8")


def load_spec(path: str | Path) -> Layer:
    """Read a spec file written by :func:`save_spec` (or by hand) and rebuild the layer."""
    return from_spec(Path(path).read_text(encoding="utf-8"))
