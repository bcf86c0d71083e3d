"""torchx.util.notes.add_note: a note on an exception, kept the same way on 3.10 and 3.11+."""

from __future__ import annotations

from torchx.util.notes import add_note


def test_notes_are_kept_in_order_on_the_exception() -> None:
    error = KeyboardInterrupt()
    add_note(error, "first")
    add_note(error, "second")
    assert error.__notes__ == ["first", "second"]
