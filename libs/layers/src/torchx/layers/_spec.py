"""Specs: layers and models as plain data (dict, JSON, YAML), never pickled code."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._errors import SpecError
from ._registry import LAYER_TYPES, SPEC_FORMAT_VERSION
from ._spec_types import check_config

if TYPE_CHECKING:
    from ._layer import Layer


def dumps_json(spec: dict[str, Any], indent: int | None = 2) -> str:
    return json.dumps(spec, indent=indent)


def dumps_yaml(spec: dict[str, Any]) -> str:
    import yaml

    return str(yaml.safe_dump(spec, sort_keys=False))


#: How deeply lists and mappings may nest in a spec document. A model nested
#: MAX_NESTING containers deep needs about three levels per container.
MAX_DOCUMENT_DEPTH = 256


#: How many layers one spec may describe (each mapping with a ``type`` counts). A built
#: layer is a torch module of a few kilobytes whatever its spec's size, so a spec of
#: millions of one-line layers would take gigabytes; it is refused while it is read,
#: before any layer is made.
MAX_SPEC_LAYERS = 100_000


def parse(text: str) -> Any:
    """Parse a JSON or YAML document into plain data, refusing what could blow it up.

    YAML aliases (anchors referred to again, the "billion laughs" shape) and
    documents nested deeper than :data:`MAX_DOCUMENT_DEPTH` raise :class:`SpecError`,
    so the parsed data is never more than a small multiple of the text's size.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text, object_hook=_LayerCounter())
        except SpecError:
            raise
        except ValueError as e:  # JSONDecodeError, or an int past Python's digit limit
            raise SpecError(f"the spec is not valid JSON: {e}") from None
        except RecursionError:
            # the decoder recurses per level; far past the limit below in any case
            raise _too_deep() from None
        check_depth(data)
        return data
    return _parse_yaml(text)


def _too_deep() -> SpecError:
    return SpecError(
        f"the spec nests lists and mappings more than {MAX_DOCUMENT_DEPTH} levels deep, "
        "the limit; a spec written by to_spec() stays far below it"
    )


def _too_many() -> SpecError:
    return SpecError(
        f"the spec describes more than {MAX_SPEC_LAYERS} layers, the limit "
        "(MAX_SPEC_LAYERS): each built layer is a torch module of a few kilobytes, so such "
        "a spec would take gigabytes; build a model that large in Python instead"
    )


class _LayerCounter:
    """A JSON object hook that refuses a spec past MAX_SPEC_LAYERS as it is decoded."""

    __slots__ = ("layers",)

    def __init__(self) -> None:
        self.layers = 0

    def __call__(self, value: dict[str, Any]) -> dict[str, Any]:
        if "type" in value:
            self.layers += 1
            if self.layers > MAX_SPEC_LAYERS:
                raise _too_many()
        return value


def check_depth(data: Any) -> None:
    """Raise SpecError if ``data`` nests lists/dicts beyond the limit, or describes more
    than MAX_SPEC_LAYERS layers (no recursion)."""
    stack = [(data, 1)]
    layers = 0
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            if depth > MAX_DOCUMENT_DEPTH:
                raise _too_deep()
            if isinstance(value, dict) and "type" in value:
                layers += 1
                if layers > MAX_SPEC_LAYERS:
                    raise _too_many()
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items if isinstance(v, (dict, list, tuple)))


class _Frame:
    """A list or mapping being filled from YAML events (a mapping keeps its pending key)."""

    __slots__ = ("container", "has_key", "key")

    def __init__(self, container: dict[Any, Any] | list[Any]) -> None:
        self.container = container
        self.key: Any = None
        self.has_key = False


_STR_TAG = "tag:yaml.org,2002:str"
_MISSING = object()
#: distinct non-string scalars a loader keeps typed (a bound, so memory stays the text's)
_TYPED_CACHE = 4096


@functools.cache
def _spec_loader() -> type[Any]:
    """The YAML loader for specs: PyYAML's safe loader, refusing aliases, nodes kept out.

    Made on first use, so importing torchx.layers does not import yaml.
    """
    import yaml

    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class SpecLoader(base):  # type: ignore[misc]
        """A safe loader whose single document is built from the parser's events.

        The loader's own composer would keep a node tree of the whole document
        (about 70 to 90 times the text, and ten times slower in pure Python) before
        anything is constructed; here each scalar is typed by the loader itself
        (its resolver and safe constructors) as its event arrives, and lists and
        mappings are filled without recursion. An alias is refused where the parser
        meets it, so nothing is ever expanded.
        """

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.typed: dict[tuple[str, str], Any] = {}

        def get_single_data(self) -> Any:
            try:
                return _build(self)
            finally:
                self.dispose()

        def scalar(self, event: Any) -> Any:
            """A scalar's value, typed as safe_load types it (int, float, bool, null, str)."""
            tag = event.tag
            if tag is None or tag == "!":
                tag = self.resolve(yaml.ScalarNode, event.value, event.implicit)
            if tag == _STR_TAG:  # a plain string is its own text (most keys and names)
                return event.value
            # numbers, booleans and nulls repeat through a spec (sizes, flags); each
            # distinct one is constructed once, and every such value is immutable
            key = (tag, event.value)
            known = self.typed.get(key, _MISSING)
            if known is not _MISSING:
                return known
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
            try:
                value = self.construct_document(node)
                if len(self.typed) < _TYPED_CACHE:
                    self.typed[key] = value
                return value
            except (yaml.YAMLError, ValueError) as e:  # ValueError: an int past the digit limit
                message = str(e)
                if "constructor" in message or "expected a" in message:
                    message = f"the YAML tag {tag} is not accepted"
                raise SpecError(f"{_where(event)}: {message.splitlines()[0]}") from None

    return SpecLoader


def _parse_yaml(text: str) -> Any:
    return _spec_loader()(text).get_single_data()


def _build(loader: Any) -> Any:
    """Plain data from ``loader``'s event stream (see ``SpecLoader``)."""
    import yaml

    stack: list[_Frame] = []
    result: Any = None
    documents = 0
    layers = 0
    # one str object per distinct key, as json.loads does: a spec repeats its keys
    keys: dict[str, str] = {}

    def add(value: Any, event: Any) -> None:
        nonlocal result, layers
        if not stack:
            result = value
            return
        frame = stack[-1]
        if isinstance(frame.container, list):
            frame.container.append(value)
        elif frame.has_key:
            frame.container[frame.key] = value
            frame.has_key = False
        else:
            if isinstance(value, (dict, list)):
                raise SpecError(f"{_where(event)}: a mapping key must be a plain value")
            if isinstance(value, str):
                value = keys.setdefault(value, value)
                if value == "type":
                    layers += 1
                    if layers > MAX_SPEC_LAYERS:
                        raise _too_many()
            frame.key, frame.has_key = value, True

    while True:
        try:
            event = loader.get_event()
        except yaml.YAMLError as e:
            raise SpecError(f"the spec is not valid YAML: {e}") from None
        if isinstance(event, yaml.AliasEvent):
            raise SpecError(
                f"{_where(event)}: the spec uses the YAML alias *{event.anchor}; specs "
                "refuse aliases (they can expand a small file into gigabytes): write "
                "the value out in full"
            )
        if isinstance(event, yaml.ScalarEvent):
            add(loader.scalar(event), event)
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            is_list = isinstance(event, yaml.SequenceStartEvent)
            default = "tag:yaml.org,2002:seq" if is_list else "tag:yaml.org,2002:map"
            if event.tag not in (None, "!", default):
                raise SpecError(f"{_where(event)}: the YAML tag {event.tag} is not accepted")
            if len(stack) >= MAX_DOCUMENT_DEPTH:
                raise _too_deep()
            container: dict[Any, Any] | list[Any] = [] if is_list else {}
            add(container, event)
            stack.append(_Frame(container))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            stack.pop()
        elif isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise SpecError(f"{_where(event)}: a spec is one YAML document, not several")
        elif isinstance(event, yaml.StreamEndEvent):
            return result


def _where(event: Any) -> str:
    mark = event.start_mark
    return f"YAML line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"


def from_spec(spec: dict[str, Any] | str) -> Layer:
    """Rebuild a layer or model from ``to_spec()`` output, or from its JSON/YAML text."""
    if isinstance(spec, str):
        data = parse(spec)
    else:
        check_depth(spec)
        data = spec
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


def _did_you_mean(kind: object) -> str:
    # the list of known types is cut short, so a typo ("Lienar", "Relu") gets its match
    if not isinstance(kind, str):
        return ""
    import difflib  # only paid for on the error path

    by_lower = {name.lower(): name for name in LAYER_TYPES}
    close = difflib.get_close_matches(kind.lower(), by_lower, n=1)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


def layer_from_body(body: Any, where: str) -> Layer:
    if not isinstance(body, dict):
        raise SpecError(f"{where}: expected a layer spec mapping, got {body!r}")
    kind = body.get("type")
    cls = LAYER_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise SpecError(
            f"{where}.type={kind!r} is not a known layer type{_did_you_mean(kind)}; known types "
            f"include {', '.join(sorted(LAYER_TYPES)[:12])}, ..."
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
    check_config(cls, config, where)
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
