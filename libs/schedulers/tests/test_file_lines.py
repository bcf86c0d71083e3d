"""Log lines from bytes: FileLines (a file that grows between reads, how Slurm's logs are
read) and decoded_lines (a stream of chunks, as Docker and Kubernetes send logs)."""

from __future__ import annotations

from pathlib import Path


def test_each_read_gives_the_lines_written_since_the_last_and_rest_the_unfinished_one(
    tmp_path: Path,
) -> None:
    from torchx.schedulers._bounded_lines import FileLines

    path = tmp_path / "slurm-1.out"
    reader = FileLines(path)
    assert list(reader.new_lines()) == []  # not written yet: empty, no error
    path.write_bytes(b"one\ntw")
    assert list(reader.new_lines()) == ["one\n"]
    with path.open("ab") as f:
        f.write(b"o\nthr\xffee")
    assert list(reader.new_lines()) == ["two\n"]
    assert list(reader.new_lines()) == []
    assert list(reader.rest()) == ["thr\ufffdee"]  # a bad byte is replaced, not fatal
    assert list(reader.rest()) == []


def test_a_line_over_the_cap_comes_in_pieces(tmp_path: Path) -> None:
    from torchx.schedulers._bounded_lines import MAX_LINE_BYTES, FileLines

    path = tmp_path / "slurm-2.out"
    path.write_bytes(b"x" * (MAX_LINE_BYTES + 10) + b"\nend\n")
    got = list(FileLines(path).new_lines())
    assert [len(line) for line in got] == [MAX_LINE_BYTES, 11, 4]
    assert got[1:] == ["x" * 10 + "\n", "end\n"]


def test_decoded_lines_joins_lines_and_characters_split_between_chunks() -> None:
    from torchx.schedulers._bounded_lines import decoded_lines

    data = "héllo\nwörld\n\nlast".encode()
    chunks = [data[i : i + 3] for i in range(0, len(data), 3)]  # "é" and "ö" are cut in two
    assert list(decoded_lines(chunks)) == ["héllo\n", "wörld\n", "\n", "last"]
    assert list(decoded_lines([b"bad \xff\n"])) == ["bad \ufffd\n"]
    assert list(decoded_lines([])) == []


def test_a_timestamped_line_over_the_cap_keeps_every_piece_whole() -> None:
    # Kubernetes prefixes each line with its time; the later pieces of a cut line have none
    from torchx.schedulers._bounded_lines import MAX_LINE_BYTES, decoded_lines
    from torchx.schedulers._kubernetes_status import stamped

    long = "word " * (MAX_LINE_BYTES // 5 + 1)
    data = f"2024-05-01T10:20:30Z {long}\n2024-05-01T10:20:31Z next\n".encode()
    got = list(stamped(decoded_lines([data[:4096], data[4096:]]), None))
    assert len(got) == 3
    assert "".join(line for _, line in got) == f"{long}\nnext\n"
    assert [t is None for t, _ in got] == [False, True, False]
