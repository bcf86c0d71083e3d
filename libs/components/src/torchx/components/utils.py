"""Utility components: small ready-to-run apps and thin wrappers around a command."""

from __future__ import annotations

from torchx.components._common import (
    IMAGE,
    fill_shared_arg_help,
    log_level_env,
    one_of,
    python_app,
    role_resource,
    sized_role,
)
from torchx.specs import AppDef, Resource, Role, SpecsError


def echo(msg: str = "hello world", image: str = IMAGE, num_replicas: int = 1) -> AppDef:
    """Prints a message to stdout.

    Args:
        msg: the message to print
    """
    if num_replicas < 1:
        raise SpecsError("utils.echo --num_replicas", num_replicas, "expected 1 or more")
    return AppDef(
        name="echo",
        roles=[
            Role(
                name="echo",
                image=image,
                entrypoint="echo",
                args=[msg],
                num_replicas=num_replicas,
            )
        ],
    )


def touch(file: str, image: str = IMAGE) -> AppDef:
    """Creates an empty file, or updates the modification time of an existing one.

    Args:
        file: the path of the file
    """
    return AppDef(
        name="touch",
        roles=[Role(name="touch", image=image, entrypoint="touch", args=[file])],
    )


def sh(
    *args: str,
    image: str = IMAGE,
    num_replicas: int = 1,
    cpu: float = -1,
    gpu: int = -1,
    memMB: int = -1,
    h: str | None = None,
    env: dict[str, str] | None = None,
    max_retries: int = 0,
    mounts: list[str] | None = None,
) -> AppDef:
    """Runs a shell command line with ``sh -c``.

    The words after the options are joined with spaces into one command line, so shell
    syntax (pipes, ``&&``, ``$VARS``) works: ``torchx run utils.sh 'echo $HOME | wc -c'``.
    Among several words, one that is empty or holds whitespace, a quote or a backslash was
    quoted to be taken as it is, and stays one literal argument, as in torchx 0.7:
    ``torchx run utils.sh sh -c 'for i in 1 2; do echo $i; done'``.
    The app's ``LOGLEVEL`` is the one ``torchx`` was started with, else WARNING, as in
    torchx 0.7; ``--env LOGLEVEL=...`` sets it outright.

    Args:
        args: the command line
    """
    if not args:
        raise SpecsError("utils.sh command line", "", "give the command to run after the options")
    role = sized_role(
        "sh",
        image,
        "sh",
        # Macros read "$$" as an escaped "$"; doubling it keeps the shell's "$$".
        ["-c", _shell_line(args).replace("$$", "$$$$")],
        role_resource(h, cpu, gpu, memMB, where="utils.sh"),
        {**log_level_env(), **(env or {})},
        mounts,
        num_replicas=num_replicas,
        max_retries=max_retries,
    )
    return AppDef(name="sh", roles=[role])


def _shell_line(args: tuple[str, ...]) -> str:
    if len(args) == 1:
        return args[0]
    import shlex

    return " ".join(shlex.quote(a) if _literal_word(a) else a for a in args)


def _literal_word(word: str) -> bool:
    """Whether ``word`` is quoted into the shell line as 0.7 quoted every word: only the
    user's own quoting can make a word empty or put whitespace, a quote or a backslash in it
    (``echo '' x``, ``echo "it's"``, ``printf '%s\\n' x``), so it was meant as it is."""
    return not word or any(c.isspace() or c in "'\"\\" for c in word)


def python(
    *args: str,
    m: str | None = None,
    c: str | None = None,
    script: str | None = None,
    image: str = IMAGE,
    name: str = "torchx_utils_python",
    cpu: float = -1,
    gpu: int = -1,
    memMB: int = -1,
    h: str | None = None,
    num_replicas: int = 1,
    env: dict[str, str] | None = None,
    max_retries: int = 0,
    mounts: list[str] | None = None,
) -> AppDef:
    """Runs Python code: a module (``--m``), a code string (``--c``) or a script file.

    Args:
        args: arguments passed to the module, code or script
        m: the module to run, as with ``python -m`` (also set as HYDRA_MAIN_MODULE)
        c: the code to run, as with ``python -c``
        script: the script file to run
        name: the app name (the role is named python)
    """
    kind, target = one_of({"m": m, "c": c, "script": script}, "utils.python program")
    program = [target] if kind == "script" else [f"-{kind}", target]
    # how a Hydra app run as ``python -m`` finds its config module, as pytorch/torchx set it
    hydra = {"HYDRA_MAIN_MODULE": target} if kind == "m" else {}
    role = sized_role(
        "python",  # 0.7's role name, whatever the app's: `torchx log HANDLE/python/0`
        image,
        "python",
        [*program, *args],
        role_resource(h, cpu, gpu, memMB, where="utils.python"),
        {**hydra, **(env or {})},
        mounts,
        num_replicas=num_replicas,
        max_retries=max_retries,
    )
    return AppDef(name=name, roles=[role])


def binary(
    *args: str,
    entrypoint: str,
    name: str = "torchx_utils_binary",
    num_replicas: int = 1,
    cpu: float = -1,
    gpu: int = -1,
    memMB: int = -1,
    h: str | None = None,
    image: str = IMAGE,
    env: dict[str, str] | None = None,
) -> AppDef:
    """Runs a program with the given arguments, without a shell.

    Args:
        args: the program's arguments
        entrypoint: the program (a path, or a name looked up on PATH)
        name: the app name (the role is named binary)
    """
    if not entrypoint.strip():
        raise SpecsError("utils.binary --entrypoint", entrypoint, "expected a program to run")
    size = role_resource(h, cpu, gpu, memMB, where="utils.binary")
    role = sized_role(  # 0.7's role name, whatever the app's: `torchx log HANDLE/binary/0`
        "binary", image, entrypoint, list(args), size, env, mounts=None, num_replicas=num_replicas
    )
    return AppDef(name=name, roles=[role])


def copy(src: str, dst: str, image: str = IMAGE) -> AppDef:
    """Copies a file or a directory tree between any two fsspec URLs.

    ``/local/path``, ``file://...``, ``s3://bucket/key`` and any other protocol fsspec
    knows work on either side (the remote ones need their fsspec extra installed). It runs
    ``python -m torchx.apps.utils.copy_main``, as pytorch/torchx 0.7 did: the default image
    (0.7's) copies one file; an image with torchx-components also copies a directory tree.

    Args:
        src: the file or directory to copy
        dst: where to copy it to; a directory source lands at dst itself
    """
    # 0.7's program, name and size: its image (the default) has copy_main and nothing newer
    args = ["-m", "torchx.apps.utils.copy_main", "--src", src, "--dst", dst]
    return python_app("torchx-utils-copy", image, args, size=Resource(cpu=1, gpu=0, memMB=1024))


# The app ``booth`` runs: it evaluates the function and records the result with the
# tracking library of the app's image. It is a program the component names, as ``torchrun``
# is for ``dist.ddp``: the component itself imports nothing of the runtime libraries.
_BOOTH_PROGRAM = """\
import sys
from torchx.runtime.tracking import FsspecResultTracker
x1, x2, trial, base = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
value = (x1 + 2 * x2 - 7) ** 2 + (2 * x1 + x2 - 5) ** 2
FsspecResultTracker(base)[trial] = {"booth_eval": value}
print(f"booth({x1}, {x2}) = {value}")
"""


def booth(
    x1: float,
    x2: float,
    trial_idx: int = 0,
    tracker_base: str = "/tmp/torchx-util-booth",
    image: str = IMAGE,
) -> AppDef:
    """Evaluates the Booth function at (x1, x2) and records it for trial ``trial_idx``.

    The Booth function, (x1 + 2*x2 - 7)^2 + (2*x1 + x2 - 5)^2, has its minimum 0 at
    (1, 3): a cheap objective for trying hyper-parameter search. The value is stored as
    ``booth_eval`` under key ``trial_idx`` of a result tracker at ``tracker_base``.

    Args:
        x1: the first coordinate
        x2: the second coordinate
        trial_idx: the trial the result is recorded for
        tracker_base: an fsspec URL, the base of the result tracker
        image: the image to run in (it needs torchx-tracking)
    """
    args = ["-c", _BOOTH_PROGRAM, str(x1), str(x2), str(trial_idx), tracker_base]
    return python_app("torchx-utils-booth", image, args, size=Resource(cpu=1, gpu=0, memMB=1024))


fill_shared_arg_help(echo, touch, sh, python, binary, copy, booth)
