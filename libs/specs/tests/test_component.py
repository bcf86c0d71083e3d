"""Component introspection: schema from signature + docstring, CLI parsing, validation."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from torchx.specs import (
    AppDef,
    ComponentValidationError,
    Role,
    SpecsError,
    get_component_schema,
    parse_docstring,
    validate_component,
)


def trainer(
    script: str,
    nnodes: int = 1,
    lr: float = 0.1,
    debug: bool = False,
    tag: str | None = None,
    limit: Optional[int] = None,  # noqa: UP045 - the old spelling must work too
    mounts: list[str] | None = None,
    env: dict[str, str] | None = None,
    *script_args: str,
) -> AppDef:
    """Train a model.

    Runs the given script on ``nnodes`` nodes.

    Args:
        script: the training script
        nnodes: number of nodes
            (one process each)
        lr: learning rate
        debug: verbose distributed logs until the ``stop`` file appears
        tag: optional tag
        limit: optional limit
        mounts: extra mounts
        env: extra environment
        script_args: passed to the script

    Returns:
        the app
    """
    args = [script, str(nnodes), str(lr), str(debug), str(tag), str(limit), *script_args]
    return AppDef("t", [Role("t", image="/tmp", entrypoint="python", args=args, env=env or {})])


def test_schema_fields() -> None:
    schema = get_component_schema(trainer)
    assert schema.summary == "Train a model."
    assert "Runs the given script" in schema.description
    by_name = {a.name: a for a in schema.args}
    assert by_name["script"].required and by_name["script"].help == "the training script"
    assert by_name["nnodes"].help == "number of nodes (one process each)"
    assert by_name["nnodes"].default == 1 and not by_name["nnodes"].required
    assert by_name["tag"].type.optional and by_name["limit"].type.optional
    assert by_name["mounts"].type.kind == "list" and by_name["env"].type.kind == "dict"
    assert by_name["script_args"].remainder and not by_name["script_args"].required
    help_text = schema.help()
    assert "--script (str, required)" in help_text and "[--debug]" in help_text
    # reStructuredText literals read as on a terminal: `x`, not ``x``
    assert "the ``stop`` file" in by_name["debug"].help
    assert "the `stop` file" in help_text and "``" not in help_text


def test_parse_typed_values() -> None:
    schema = get_component_schema(trainer)
    pos, kw = schema.parse(
        [
            "--script", "t.py", "--nnodes=4", "--lr", "0.5", "--debug", "--tag", "none",
            "--limit", "7", "--mounts", "a,b", "--mounts", "c", "--env", "A=1,B=x=y",
            "--env", "C=3", "--", "--epochs", "3",
        ]
    )  # fmt: skip
    env = {"A": "1", "B": "x=y", "C": "3"}
    assert pos == ["t.py", 4, 0.5, True, None, 7, ["a", "b", "c"], env, "--epochs", "3"]
    assert kw == {}
    app = schema.call(["--script", "t.py", "extra", "--flag"])
    assert app.roles[0].args[-2:] == ["extra", "--flag"]


def test_bool_forms() -> None:
    def c(debug: bool = True, name: str = "x") -> AppDef:
        return AppDef(name, [Role(name, "/", entrypoint=str(debug))])

    s = get_component_schema(c)
    assert s.parse(["--debug", "false", "--name", "y"])[1] == {"debug": False, "name": "y"}
    assert s.parse(["--no-debug"])[1] == {"debug": False}
    assert s.parse(["--debug=TRUE"])[1] == {"debug": True}
    assert s.parse(["--debug", "off"])[1] == {"debug": False}
    # no *args: the word after a bool flag is its value, refused as a bool when it is none
    with pytest.raises(SpecsError, match=r"c --debug: got 'maybe'; expected a bool"):
        s.parse(["--debug", "maybe"])
    assert s.parse(["--debug", "--name", "y"])[1] == {"debug": True, "name": "y"}


def test_a_bad_value_in_a_dict_names_its_key() -> None:
    def c(sizes: dict[str, int] | None = None) -> AppDef:
        return AppDef("c", [Role("c", "/", entrypoint="echo", args=[str(sizes)])])

    s = get_component_schema(c)
    assert s.parse(["--sizes", "a=1,b=2"])[1] == {"sizes": {"a": 1, "b": 2}}
    with pytest.raises(SpecsError, match=r"^c --sizes \(key 'b'\): got 'x'; expected int$"):
        s.parse(["--sizes", "a=1,b=x"])


def test_an_error_names_a_one_letter_flag_as_written() -> None:
    def c(n: int = 1) -> AppDef:
        return AppDef("c", [Role("c", "/", entrypoint="echo", args=[str(n)])])

    s = get_component_schema(c)
    with pytest.raises(SpecsError, match=r"^c --n: got 'two'; expected int"):
        s.parse(["--n", "two"])
    with pytest.raises(SpecsError, match=r"^c -n: got 'two'; expected int"):
        s.parse(["-n", "two"])


def _raises(field: str, value: Any) -> Any:
    """A component ``c(a, b, n, e)`` that raises SpecsError(field, value) when called."""

    def c(a: str = "", b: str = "", n: int = 0, e: list[str] | None = None) -> AppDef:
        raise SpecsError(field, value(a, b) if callable(value) else value, "fix it")

    return get_component_schema(c)


@pytest.mark.parametrize(
    ("field", "value", "argv", "message"),
    [
        # about a value made from two arguments: not the flag whose text it is
        ("combined a+b", lambda a, b: b, ["--a", "xy", "--b", "2"], "combined a+b"),
        # a field that only looks like a value given: the component's own words stay
        ("b", "2", ["--a", "1", "--b", "2"], "b"),
        ("c b", "2", ["--a", "1", "--b", "2"], "c b"),
        ("c --a", "2", ["--a", "1", "--b", "2"], "c --a"),  # names a: its value is no matter
        # the flag the component names, spelled as given
        ("c -n", "3", ["-n", "3"], "c -n"),
        ("c -n", "3", ["--n", "3"], "c --n"),
        ("c --n (the count)", "3", ["-n3"], "c -n (the count)"),
        ("c --n", "3", [], "c --n"),  # a default: nothing was written
        ("c -a", "1", ["--a", "1"], "c --a"),
        ("c --zz", "1", ["--a", "1"], "c --zz"),  # no such parameter
        # a list flag given twice, spelled two ways: the one whose text is the value,
        # the first as well as the last
        ("c -e", "A=1", ["-e", "B=2", "--e", "A=1"], "c --e"),
        ("c -e", "A=1", ["--e", "A=1", "-e", "B=2"], "c --e"),
        ("c -e", "B=2", ["--e", "A=1", "-e", "B=2"], "c -e"),
        ("c -e", "C=3", ["--e", "A=1", "-e", "B=2"], "c -e"),  # neither: left as raised
        ("c -e", "C=3", ["--e", "A=1", "--e", "B=2"], "c --e"),  # one spelling: that one
    ],
)
def test_a_components_error_changes_only_the_spelling_of_its_own_parameters_flag(
    field: str, value: Any, argv: list[str], message: str
) -> None:
    with pytest.raises(SpecsError) as info:
        _raises(field, value).call(argv)
    assert info.value.field == message
    assert str(info.value) == f"{message}: got {info.value.value!r}; fix it"


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--nnodes", "2"], "trainer --script: not given; required; add --script SCRIPT"),
        (["--script", "t.py", "--nnodes", "two"], "--nnodes: got 'two'; expected int"),
        (["--script", "t.py", "--lr", "fast"], "expected float"),
        (["--script", "t.py", "--debug=maybe"], "expected a bool"),
        (["--script", "t.py", "--env", "noequals"], "expected key=value pairs"),
        (["--script"], "--script value: not given; it takes a value of type str"),
    ],
)
def test_parse_bad_input(argv: list[str], fragment: str) -> None:
    with pytest.raises(SpecsError) as e:
        get_component_schema(trainer).parse(argv)
    assert fragment in str(e.value)


def test_unknown_option_suggests_closest() -> None:
    def echo(msg: str = "hi") -> AppDef:
        return AppDef("e", [Role("e", "/", entrypoint="echo", args=[msg])])

    with pytest.raises(SpecsError) as e:
        get_component_schema(echo).parse(["--mgs", "x"])
    assert "did you mean '--msg'" in str(e.value)
    with pytest.raises(SpecsError, match="takes no positional arguments"):
        get_component_schema(echo).parse(["stray"])


@pytest.mark.parametrize("argv", [["--", "x"], ["--msg", "a", "--", "x", "y"]])
def test_words_after_dashdash_without_star_args_are_refused(argv: list[str]) -> None:
    # 0.7 refused them (argparse: unrecognized arguments); dropping them would launch
    # without what the user meant for the program
    def echo(msg: str = "hi") -> AppDef:
        return AppDef("e", [Role("e", "/", entrypoint="echo", args=[msg])])

    with pytest.raises(SpecsError) as e:
        get_component_schema(echo).parse(argv)
    assert str(e.value).startswith(
        "echo argument: got 'x'; unexpected; this component takes no positional"
    )
    # a bare ``--`` with nothing after it stays accepted, as argparse took it
    assert get_component_schema(echo).parse(["--msg", "a", "--"]) is not None


def bad_component(a, b: object, c: list[list[int]], **kw: str) -> int:  # type: ignore[no-untyped-def]
    return 0


def test_validator_reports_every_problem_with_location() -> None:
    problems = validate_component(bad_component)
    messages = [p.message for p in problems]
    assert any("'a' has no type annotation" in m for m in messages)
    assert any("'b' has type" in m for m in messages)
    assert any("'c' has type" in m for m in messages)
    assert any("**kw" in m for m in messages)
    assert any("return annotation is <class 'int'>" in m for m in messages)
    assert all(p.file == __file__ for p in problems)
    assert problems[0].line == bad_component.__code__.co_firstlineno
    with pytest.raises(ComponentValidationError) as e:
        get_component_schema(bad_component)
    assert f"{__file__}:{problems[0].line}" in str(e.value)


def test_component_returning_wrong_type_fails_at_call() -> None:
    def sneaky(x: int = 1):  # type: ignore[no-untyped-def]
        return {"not": "an app"}

    with pytest.raises(ComponentValidationError, match="returned dict, not an AppDef"):
        get_component_schema(sneaky).call([])


def test_docstring_without_args_section() -> None:
    d = parse_docstring("Just one line.")
    assert d.summary == "Just one line." and d.args == {}
    assert parse_docstring(None).summary == ""


def _unused(x: Any) -> None:  # keeps Any imported for the annotation test above
    del x


def test_what_a_component_raises_keeps_its_type_and_gains_a_note_naming_it() -> None:
    def strict(x: int) -> AppDef:
        """Refuses odd x.

        Args:
            x: an even number
        """
        if x % 2:
            raise KeyError("x must be even")
        return AppDef("strict", [Role("r", image="/tmp", entrypoint="true")])

    schema = get_component_schema(strict)
    with pytest.raises(KeyError) as e:
        schema.call(["--x", "1"])
    assert getattr(e.value, "__notes__", None) == [
        f"raised by component {schema.name}; fix the component or the arguments given to it"
    ]
    with pytest.raises(SpecsError) as bad:  # a bad argument names its field, without a note
        schema.call(["--x", "one"])
    assert not hasattr(bad.value, "__notes__")


def test_a_command_line_as_one_string_and_a_component_name_are_one_line() -> None:
    from torchx.specs.builders import materialize_appdef

    with pytest.raises(SpecsError) as info:
        materialize_appdef(trainer, "--script t.py --lr 0.5")  # type: ignore[arg-type]
    assert str(info.value) == (
        "trainer arguments: got '--script t.py --lr 0.5'; give a list of tokens, e.g."
        " ['--script', 't.py', '--lr', '0.5'] (shlex.split(text) splits one)"
    )
    with pytest.raises(SpecsError) as info:
        materialize_appdef("utils.echo", [])  # type: ignore[arg-type]
    assert str(info.value).startswith("component: got 'utils.echo'; give the component function;")
