"""Hostile specs: YAML aliases, deep nesting and deep models end in a SpecError naming the limit."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable

import pytest
import torch
import yaml

import torchx.layers as L
from torchx.layers import SpecError
from torchx.layers._layer import MAX_NESTING
from torchx.layers._spec import MAX_DOCUMENT_DEPTH, parse

# the "billion laughs" shape: nine aliases of nine aliases ..., a few hundred bytes of text
LAUGHS = "\n".join(
    [
        "type: Linear\nconfig: {out_features: 3}",
        "a: &a [" + ",".join(['"lol"'] * 9) + "]",
        *(
            f"{name}: &{name} [{','.join(['*' + prev] * 9)}]"
            for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "format_version: 1",
    ]
)


def _refused(fn: Callable[[], object]) -> tuple[int, str]:
    """The SpecError's message and the peak memory traced while ``fn`` raised it."""
    yaml.safe_load("warm: up")  # the parser's first use loads code; not the spec's cost
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as info:
            fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, str(info.value)


def test_yaml_aliases_are_refused_before_anything_expands() -> None:
    assert len(LAUGHS) < 700
    peak, message = _refused(lambda: L.from_spec(LAUGHS))
    assert "alias *a" in message
    assert "line 4" in message
    assert peak < 1_000_000  # the expanded document would be about 1.4 GB


def test_a_single_alias_is_refused_too() -> None:
    text = "format_version: 1\ntype: Linear\nconfig: &c {out_features: 3}\nextra: *c\n"
    with pytest.raises(SpecError, match="refuse aliases"):
        L.from_spec(text)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # YAML flow
        "a:\n" + "".join(" " * (i + 1) + "b:\n" for i in range(2_000)),  # YAML block
        '{"a": ' * 100_000 + "1" + "}" * 100_000,  # JSON
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["yaml-flow", "yaml-block", "json-objects", "json-lists"],
)
def test_deep_documents_name_the_depth_limit(text: str) -> None:
    peak, message = _refused(lambda: L.from_spec(text))
    assert f"more than {MAX_DOCUMENT_DEPTH} levels" in message
    assert peak < 20 * len(text) + 1_000_000


def test_deep_dict_spec_names_the_limit() -> None:
    spec: object = 1
    for _ in range(100_000):
        spec = [spec]
    with pytest.raises(SpecError, match=f"more than {MAX_DOCUMENT_DEPTH} levels"):
        L.from_spec({"format_version": 1, "type": "Linear", "config": {"x": spec}})


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_parsed_spec_is_a_small_multiple_of_its_text(fmt: str) -> None:
    layers = [{"type": "Linear", "config": {"out_features": i}} for i in range(1, 20_001)]
    spec = {"format_version": 1, "type": "Sequential", "config": {"layers": layers}}
    text = json.dumps(spec) if fmt == "json" else yaml.safe_dump(spec)
    yaml.safe_load("warm: up")
    tracemalloc.start()
    data = parse(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert data == spec
    # safe_load's node tree alone takes over 100 times the text
    assert peak < 12 * len(text)


def test_yaml_typing_matches_safe_load() -> None:
    text = "a: 1\nb: [1, 2.5, null, true, x, '3', 0x10, 1e3, ~]\nc: {d: 'e', f: -2}\n"
    assert parse(text) == yaml.safe_load(text)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("a: !!python/object:os.system x\n", "tag"),
        ("a: !!set {x: null}\n", "tag"),
        ("? [a, b]\n: 1\n", "mapping key"),
        ("a: 1\n---\nb: 2\n", "one YAML document"),
        ("a: [1, 2\n", "not valid YAML"),
        ("a: " + "9" * 5000 + "\n", "digits"),
        ('{"a": ' + "9" * 5000 + "}", "digits"),
    ],
)
def test_text_that_is_not_plain_data_is_refused(text: str, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        L.from_spec(text)


def test_nested_sequential_past_the_limit_is_refused() -> None:
    model: L.Layer = L.Linear(4)
    for _ in range(MAX_NESTING):
        model = L.Sequential(model)
    with pytest.raises(ValueError, match=f"past the limit of {MAX_NESTING}"):
        L.Sequential(model)


def test_nested_sequential_at_the_limit_works_everywhere() -> None:
    model: L.Layer = L.Linear(4)
    for _ in range(MAX_NESTING - 1):
        model = L.Sequential(model)
    x = torch.ones(2, 3)
    model(x).sum().backward()
    model.eval()
    again = L.from_spec(model.to_yaml())
    again.load_state_dict(model.state_dict())
    again.eval()
    assert torch.equal(again(x), model(x))
    assert "total params: 16" in L.summary(model)


def test_a_spec_nesting_past_the_limit_is_a_spec_error() -> None:
    body: dict[str, object] = {"type": "Linear", "config": {"out_features": 2}}
    for _ in range(MAX_NESTING + 1):
        body = {"type": "Sequential", "config": {"layers": [body]}}
    with pytest.raises(SpecError, match=f"past the limit of {MAX_NESTING}"):
        L.from_spec(json.dumps({"format_version": 1, **body}))


def test_specs_are_read_by_a_safe_loader_subclass() -> None:
    from torchx.layers._spec import _spec_loader

    loader = _spec_loader()
    assert issubclass(loader, yaml.constructor.SafeConstructor)
    assert loader(LAUGHS.split("\nb:")[0]).get_single_data()["a"] == ["lol"] * 9
    with pytest.raises(SpecError, match="alias"):
        loader(LAUGHS).get_single_data()


def _relus(n: int) -> dict[str, object]:
    layers = [{"type": "ReLU", "config": {}} for _ in range(n)]
    return {"format_version": 1, "type": "Sequential", "config": {"layers": layers}}


@pytest.mark.parametrize("fmt", ["json", "yaml", "dict"])
def test_a_spec_of_too_many_layers_is_refused_while_it_is_read(
    fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx.layers import _spec

    assert _spec.MAX_SPEC_LAYERS == 100_000
    limit = 2_000  # the same code at a smaller scale, so the test stays quick
    monkeypatch.setattr(_spec, "MAX_SPEC_LAYERS", limit)
    spec = _relus(10 * limit)
    if fmt == "json":
        text: object = json.dumps(spec)
    elif fmt == "yaml":
        text = yaml.dump(spec, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper))
    else:
        text = spec
    peak, message = _refused(lambda: L.from_spec(text))  # type: ignore[arg-type]
    assert f"more than {limit} layers, the limit (MAX_SPEC_LAYERS)" in message
    if fmt != "dict":
        # refused once the limit is passed, before the rest of the text is parsed and
        # before any layer exists: a few hundred bytes a layer read, and the YAML
        # parser's copy of the text; the whole text parsed would be ten times that, and
        # the layers built a hundred times
        assert isinstance(text, str)
        assert peak < 500 * limit + len(text) + 200_000


def test_a_spec_at_the_layer_limit_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from torchx.layers import _spec

    monkeypatch.setattr(_spec, "MAX_SPEC_LAYERS", 2_000)
    spec = _relus(2_000 - 1)  # with the Sequential itself, exactly the limit
    assert parse(json.dumps(spec)) == spec
    assert parse(yaml.safe_dump(spec)) == spec
    assert len(L.from_spec(spec).items) == 2_000 - 1
