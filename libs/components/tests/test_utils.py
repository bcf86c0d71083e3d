from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torchx.components import get_component, utils
from torchx.specs import NULL_RESOURCE, BindMount, SpecsError, validate_app


def test_echo_builds_one_echo_role() -> None:
    app = get_component("utils.echo").call(["--msg", "hi there"])
    validate_app(app)
    (role,) = app.roles
    assert (role.entrypoint, role.args, role.num_replicas) == ("echo", ["hi there"], 1)


def test_echo_rejects_zero_replicas() -> None:
    with pytest.raises(SpecsError, match=r"num_replicas.*0.*1 or more"):
        utils.echo(num_replicas=0)


def test_touch_names_the_file() -> None:
    (role,) = utils.touch("/tmp/x").roles
    assert (role.entrypoint, role.args) == ("touch", ["/tmp/x"])


def test_sh_joins_words_into_one_shell_line_with_resources_env_and_mounts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOGLEVEL", raising=False)
    app = get_component("utils.sh").call(
        [
            "--h",
            "cpu.small",
            "--env",
            "A=1,B=2",
            "--mounts",
            "type=bind,src=/data,dst=/mnt",
            "echo",
            "$A",
            "|",
            "wc",
        ]
    )
    (role,) = app.roles
    assert role.args == ["-c", "echo $A | wc"]
    assert role.env == {"LOGLEVEL": "WARNING", "A": "1", "B": "2"}
    assert role.resource.cpu == 1 and role.resource.memMB == 2048
    assert role.mounts == [BindMount(src_path="/data", dst_path="/mnt")]


def test_sh_needs_a_command() -> None:
    with pytest.raises(SpecsError, match="command"):
        utils.sh()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--m", "pkg.mod", "a"], ["-m", "pkg.mod", "a"]),
        (["--c", "print(1)"], ["-c", "print(1)"]),
        (["--script", "train.py", "--", "--lr", "0.1"], ["train.py", "--lr", "0.1"]),
    ],
)
def test_python_runs_exactly_one_program(argv: list[str], expected: list[str]) -> None:
    (role,) = get_component("utils.python").call(argv).roles
    assert role.entrypoint == "python" and role.args == expected


@pytest.mark.parametrize("kwargs", [{}, {"m": "a", "c": "b"}, {"script": "x.py", "m": "y"}])
def test_python_refuses_zero_or_two_programs(kwargs: dict[str, str]) -> None:
    with pytest.raises(SpecsError, match="exactly one of --m, --c, --script"):
        utils.python(**kwargs)


def test_binary_passes_arguments_without_a_shell() -> None:
    binary = get_component("utils.binary")
    (role,) = binary.call(["--entrypoint", "/bin/ls", "--", "-l", "/"]).roles
    assert (role.entrypoint, role.args) == ("/bin/ls", ["-l", "/"])
    # a word first: it and all that follows are the program's, as in 0.7
    (role,) = binary.call(["--entrypoint", "/bin/ls", "/", "-l"]).roles
    assert role.args == ["/", "-l"]
    with pytest.raises(SpecsError, match="got '-l'; no such argument"):
        binary.call(["--entrypoint", "/bin/ls", "-l", "/"])
    with pytest.raises(SpecsError, match="entrypoint"):
        utils.binary(entrypoint=" ")
    # 0.7's size arguments; what is left out stays -1 (for gpu: none asked, as 0.7's 0)
    (role,) = binary.call(["--entrypoint", "ls", "--cpu", "2", "--memMB", "512"]).roles
    assert (role.resource.cpu, role.resource.gpu, role.resource.memMB) == (2, -1, 512)
    # unsized, the scheduler's default (0.7: cpu=1, gpu=0, memMB=1024; see MIGRATING.md)
    (role,) = binary.call(["--entrypoint", "ls"]).roles
    assert role.resource == NULL_RESOURCE
    (role,) = utils.binary(entrypoint="ls", h="aws_p3.2xlarge").roles
    assert role.resource.gpu == 1


def test_copy_role_runs_the_copy_program_that_really_copies(tmp_path: Path) -> None:
    src = tmp_path / "in" / "sub"
    src.mkdir(parents=True)
    (src / "a.txt").write_text("alpha")
    (tmp_path / "in" / "b.bin").write_bytes(b"\x00\x01")
    (role,) = utils.copy(str(tmp_path / "in"), str(tmp_path / "out")).roles
    assert role.entrypoint == "python"
    # Run exactly what the role runs, with this interpreter standing in for "python".
    proc = subprocess.run([sys.executable, *role.args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "sub" / "a.txt").read_text() == "alpha"
    assert (tmp_path / "out" / "b.bin").read_bytes() == b"\x00\x01"
    assert "copied 2 file(s)" in proc.stdout


def test_copy_program_between_filesystems_and_missing_source(tmp_path: Path) -> None:
    from torchx.components import _copy

    f = tmp_path / "model.pt"
    f.write_bytes(b"weights" * 1000)
    assert _copy.copy(str(f), "memory://torchx-test/model.pt") == 1
    assert _copy.copy("memory://torchx-test/model.pt", str(tmp_path / "back.pt")) == 1
    assert (tmp_path / "back.pt").read_bytes() == f.read_bytes()
    # the role's program refuses a missing source or an unknown protocol in one line
    for src in (str(tmp_path / "nope"), "nosuchprotocol://x"):
        args = ["-m", "torchx.apps.utils.copy_main", "--src", src, "--dst", str(tmp_path / "x")]
        proc = subprocess.run([sys.executable, *args], capture_output=True, text=True)
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("copy_main: "), proc.stderr


def test_sh_keeps_the_shells_double_dollar(tmp_path: Path) -> None:
    from torchx.specs import macros

    app = utils.sh("echo $$ ${app_id} $HOME")
    role = macros.Values(
        img_root=str(tmp_path), app_id="app-1", replica_id="0", rank0_env="X"
    ).apply(app.roles[0])
    assert role.args == ["-c", "echo $$ app-1 $HOME"]
    out = subprocess.run([role.entrypoint, *role.args], capture_output=True, text=True)
    pid = out.stdout.split()[0]
    assert pid.isdigit(), out.stdout  # the shell's own pid, not a literal "$"


def test_sh_keeps_a_quoted_word_with_spaces_one_argument_as_0_7_did() -> None:
    # `torchx run utils.sh sh -c 'for i in 1 2; do echo x$i; done'`: the shell's quoting
    # made the loop one word, which sh -c must get whole
    (role,) = utils.sh("sh", "-c", "for i in 1 2; do echo x$i; done").roles
    out = subprocess.run([role.entrypoint, *role.args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["x1", "x2"]
    (role,) = utils.sh("python3", "-c", "import sys; print(sys.argv[1:])", "a b", "c").roles
    out = subprocess.run([role.entrypoint, *role.args], capture_output=True, text=True)
    assert out.stdout.strip() == "['a b', 'c']", out.stderr
    # one word is the command line itself, shell syntax and all
    (role,) = utils.sh("echo one | tr o 0").roles
    out = subprocess.run([role.entrypoint, *role.args], capture_output=True, text=True)
    assert out.stdout == "0ne\n"


@pytest.mark.parametrize(
    ("words", "printed"),
    [
        # an empty word stays an argument, as 0.7 quoted it
        (("echo", "", "x"), " x\n"),
        # a quote or a backslash the user quoted is taken as it is, as in 0.7
        (("echo", "it's"), "it's\n"),
        (("echo", '"hi"'), '"hi"\n'),
        (("printf", "%s\\n", "x"), "x\n"),
        (("echo", "'$X'"), "'$X'\n"),  # literal: the quotes say so (MIGRATING.md)
        # the other words keep their shell meaning (MIGRATING.md)
        (("echo", "$X", "|", "tr", "1", "2"), "2\n"),
    ],
)
def test_sh_words_the_shell_would_misread_are_quoted_as_0_7_did(
    words: tuple[str, ...], printed: str
) -> None:
    (role,) = utils.sh(*words).roles
    assert role.entrypoint == "sh" and role.args[0] == "-c"
    out = subprocess.run(
        ["sh", "-c", role.args[1]],
        capture_output=True,
        text=True,
        env={"X": "1", "PATH": "/usr/bin:/bin"},
    )
    assert (out.returncode, out.stdout) == (0, printed), out.stderr


def test_sh_other_words_keep_globs_and_one_quoted_line_does_not(tmp_path: Path) -> None:
    """MIGRATING.md: an unquoted glob among several words is the shell's to expand; the
    command line given as one word keeps its own quoting."""
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")

    def run(*words: str) -> subprocess.CompletedProcess[str]:
        (role,) = utils.sh(*words).roles
        return subprocess.run(
            ["sh", "-c", role.args[1]], capture_output=True, text=True, cwd=tmp_path
        )

    assert run("echo", "*.py", ";", "echo", "[ab].py").stdout == "a.py b.py\na.py b.py\n"
    assert run("find", ".", "-name", "*.py").returncode != 0  # find . -name a.py b.py
    found = run("find . -name '*.py'")
    assert (found.returncode, sorted(found.stdout.split())) == (0, ["./a.py", "./b.py"])
