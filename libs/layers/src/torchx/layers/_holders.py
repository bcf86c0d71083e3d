"""The built layers that hold a container whose chain can still be edited.

An ``L.Sequential`` can be edited after its build (append, insert, ...). When it sits
inside another built layer (a Sequential, a TimeDistributed, a Functional), that layer
was built for the container's output shape as it was, so an edit that changes it must
be refused. The links are weak: a model that is dropped does not keep its parts
refusing edits. ``copy.deepcopy`` of a whole model links the copies to each other;
pickling drops the links (an unpickled model's nested containers are not protected).
"""

from __future__ import annotations

import weakref
from typing import Any

from torch import nn

# In a container's __dict__: its Holders, made when a built layer first takes it in.
HOLDERS = "_holders"


class Holders:
    """Weak references to the layers whose build took this container in."""

    def __init__(self) -> None:
        self.refs: list[weakref.ref[nn.Module]] = []

    def add(self, holder: nn.Module) -> None:
        live = [r for r in self.refs if r() is not None]
        if not any(r() is holder for r in live):
            live.append(weakref.ref(holder))
        self.refs = live

    def __deepcopy__(self, memo: dict[int, Any]) -> Holders:
        # a holder copied along with the container holds the container's copy; one that
        # was not copied holds the original, not the copy
        copied = Holders()
        for r in self.refs:
            holder = r()
            twin = memo.get(id(holder)) if holder is not None else None
            if isinstance(twin, nn.Module):
                copied.refs.append(weakref.ref(twin))
        return copied

    def __reduce__(self) -> tuple[type[Holders], tuple[()]]:
        return (Holders, ())  # weak references cannot be pickled


def note_holder(container: nn.Module, holder: nn.Module) -> None:
    """Record that ``holder``, being built, takes ``container`` in as one of its parts."""
    holders: Holders | None = container.__dict__.get(HOLDERS)
    if holders is None:
        holders = container.__dict__[HOLDERS] = Holders()
    holders.add(holder)


def built_holder(container: nn.Module) -> nn.Module | None:
    """A built layer that holds ``container`` as a direct part now, if there is one."""
    holders: Holders | None = container.__dict__.get(HOLDERS)
    for r in holders.refs if holders is not None else ():
        holder = r()
        if holder is None or holder.__dict__.get("_input_shapes") is None:
            continue  # dropped, or not built (its next build sees the container as it is)
        if any(m is container for _, m in nn.Module.named_children(holder)):
            return holder
    return None
