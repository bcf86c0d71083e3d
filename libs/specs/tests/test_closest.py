"""closest(): the shared wording of 'unknown name' hints, public for every torchx package."""

from __future__ import annotations

import torchx.specs as specs


def test_near_names_are_suggested() -> None:
    assert specs.closest("local_cdw", ["local_cwd", "slurm", "ray"]) == "did you mean 'local_cwd'?"


def test_several_near_names_are_all_offered_in_order() -> None:
    hint = specs.closest("utils.ech", ["utils.sh", "utils.echo2", "utils.echo", "dist.ddp"])
    assert hint == "did you mean 'utils.echo' or 'utils.echo2' or 'utils.sh'?"


def test_nothing_close_lists_what_exists_sorted_and_capped() -> None:
    assert specs.closest("zzz", {"b", "a"}) == "known: a, b"
    many = [f"name{i:02d}" for i in range(20)]
    hint = specs.closest("qqq", many)
    assert hint.startswith("known: name00, name01") and hint.endswith(", ...")
    assert "name12" not in hint


def test_closest_is_public() -> None:
    assert "closest" in specs.__all__


def test_close_matches_are_the_names_closest_suggests_for_callers_that_word_it() -> None:
    assert specs.close_matches("compnent", ["cli", "component", "tracker"]) == ["component"]
    assert specs.close_matches("zzz", ["cli", "component"]) == []
    assert specs.close_matches("mgs", ["msg", "image"], n=1) == ["msg"]
    assert "close_matches" in specs.__all__
