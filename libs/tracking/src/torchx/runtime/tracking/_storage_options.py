"""Storage options a filesystem would silently ignore, found before it is made.

fsspec hands every keyword to the filesystem's constructor. Its base class,
``AbstractFileSystem``, takes any keyword and keeps it (for pickling and its instance
cache) without using it, and some filesystems (local disk, memory) take ``**kwargs`` only
to hand them to that base: a misspelt option there (``auto_mkdirs=True``) is dropped
without a word. Other filesystems use the keywords they do not name (HTTP passes them to
each request, for instance), so a keyword is refused only where the constructors of the
filesystem's class, read through ``inspect.signature``, show that nothing can take it:

* a constructor's named parameters are options it takes;
* a constructor without ``**kwargs`` passes nothing else on: the walk ends there;
* a constructor with ``**kwargs`` takes any option, unless it is one of fsspec's own
  below, whose code hands them unchanged to the next class (so the walk goes on);
* ``AbstractFileSystem`` takes the options its docstring lists: its listings cache's
  (``DirCache``'s parameters), ``skip_instance_cache``, ``asynchronous`` and ``loop``.

Two keywords are ``url_to_fs``'s own, not a filesystem's: ``protocol=`` and
``<protocol>={...}``. They are resolved first, as it resolves them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import inspect
    from typing import Any

# Options AbstractFileSystem takes besides its listings cache's (see its docstring).
_BASE_OPTIONS = ("skip_instance_cache", "asynchronous", "loop")
# fsspec classes whose ``**kwargs`` go unchanged to their base class: (module, class name)
_FORWARDING = frozenset(
    {
        ("fsspec.implementations.local", "LocalFileSystem"),
        ("fsspec.implementations.memory", "MemoryFileSystem"),
        ("fsspec.asyn", "AsyncFileSystem"),
    }
)


def accepted_options(cls: type) -> frozenset[str] | None:
    """The options filesystem class ``cls`` takes, or None when it takes any."""
    import inspect

    from fsspec.dircache import DirCache  # type: ignore[import-untyped]
    from fsspec.spec import AbstractFileSystem  # type: ignore[import-untyped]

    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is AbstractFileSystem:
            names.update(_named(inspect.signature(DirCache.__init__)), _BASE_OPTIONS)
            break
        constructor = vars(klass).get("__init__")
        if constructor is None:
            continue  # inherited: its base's constructor is read in its turn
        signature = inspect.signature(constructor)
        names.update(_named(signature))
        takes_more = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
        if not takes_more:
            break
        if (klass.__module__, klass.__qualname__) not in _FORWARDING:
            return None
    return frozenset(names)


def _named(signature: inspect.Signature) -> list[str]:
    """The keyword parameters of a constructor's signature, less ``self``."""
    params = list(signature.parameters.values())[1:]
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def unknown_option(url: str, options: dict[str, Any], own: tuple[str, ...] = ()) -> str | None:
    """Why one of ``options`` would be ignored by the filesystem of ``url`` (one line naming
    the option, the protocol and the fix), or None when it takes them all. ``own`` are the
    caller's own keywords, offered as close matches too. Unknown protocols and chained
    URLs (``a::b``, whose options go per protocol) are left to fsspec.

    ``options`` are read as ``fsspec.core.url_to_fs`` reads them: ``protocol=`` names the
    filesystem in place of the URL's, and ``<protocol>={...}`` holds more options for it;
    what is checked is those merged with the rest."""
    if not options or "::" in url:
        return None
    import fsspec  # type: ignore[import-untyped]
    from fsspec.core import split_protocol  # type: ignore[import-untyped]

    rest = dict(options)
    protocol = rest.pop("protocol", None) or split_protocol(url)[0] or "file"
    try:
        cls = fsspec.get_filesystem_class(protocol)
    except (ValueError, ImportError, TypeError):
        return None  # fsspec itself says so, when the filesystem is made
    nested = rest.pop(protocol, {})
    if not isinstance(nested, dict):
        return (
            f"storage option {protocol!r} is {type(nested).__name__}, not a dict; fsspec"
            f" reads it as more options for the {protocol!r} filesystem: give"
            f" {protocol}={{'option': value}}, or the options themselves as keywords"
        )
    within = [name for name in nested if name not in rest]
    return unknown_for(cls, protocol, {**nested, **rest}, own, within)


def unknown_for(
    cls: type,
    protocol: str,
    options: dict[str, Any],
    own: tuple[str, ...] = (),
    within: list[str] | tuple[str, ...] = (),
) -> str | None:
    """:func:`unknown_option` for filesystem class ``cls``, known already; ``within`` are
    the options given inside ``<protocol>={...}``, named as such."""
    accepted = accepted_options(cls)
    if accepted is None:
        return None
    unknown = sorted(set(options) - accepted)
    if not unknown:
        return None
    import difflib

    name = unknown[0]
    where = f" (in {protocol}={{...}})" if name in within else ""
    close = difflib.get_close_matches(name, [*accepted, *own], n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"storage option {name!r}{where} is not one the {protocol!r} filesystem"
        f" ({cls.__qualname__}) takes, so it would be ignored; {hint}it takes"
        f" {', '.join(sorted(accepted))}"
    )
