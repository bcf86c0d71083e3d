"""The record of one torchx API call: :class:`TorchxEvent`, and where it came from."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from typing import Any

from torchx.specs import SpecsError

# The version of an event's JSON form; ``deserialize`` reads this and earlier ones.
EVENT_VERSION = 1


class SourceType(str, Enum):
    """Who made the call an event records."""

    UNKNOWN = "<unknown>"
    INTERNAL = "INTERNAL"
    EXTERNAL = "EXTERNAL"


@dataclasses.dataclass
class TorchxEvent:
    """One call of the runner's API (``api``: ``schedule``, ``status``, ...).

    ``session`` is the runner's session name; ``scheduler`` and ``app_id`` what the call
    was about; ``app_image``, ``runcfg`` and ``workspace`` what it was given.
    ``raw_exception`` is the traceback when the call raised. Times are microseconds:
    ``cpu_time_usec`` and ``wall_time_usec`` that the call took, ``start_epoch_time_usec``
    when it began.
    """

    session: str
    scheduler: str
    api: str
    app_id: str | None = None
    app_image: str | None = None
    runcfg: str | None = None
    raw_exception: str | None = None
    source: SourceType = SourceType.UNKNOWN
    cpu_time_usec: int | None = None
    wall_time_usec: int | None = None
    start_epoch_time_usec: int | None = None
    workspace: str | None = None

    def __str__(self) -> str:
        return self.serialize()

    def serialize(self) -> str:
        """The event as one line of JSON."""
        data: dict[str, Any] = dataclasses.asdict(self)
        data["source"] = self.source.value
        return json.dumps(data)

    @staticmethod
    def deserialize(data: str | TorchxEvent) -> TorchxEvent:
        """An event from ``serialize()``'s JSON (an event is returned as it is).

        Keys this version does not know are ignored, so events written by a newer torchx
        still read; an unknown ``source`` reads as ``UNKNOWN``.
        """
        if isinstance(data, TorchxEvent):
            return data
        try:
            raw = json.loads(data)
        except (TypeError, ValueError) as e:
            raise SpecsError("event", str(data)[:80], f"a TorchxEvent's JSON ({e})") from None
        if not isinstance(raw, dict):
            raise SpecsError("event", str(data)[:80], "a JSON object from TorchxEvent.serialize()")
        fields = {f.name for f in dataclasses.fields(TorchxEvent)}
        kept = {k: v for k, v in raw.items() if k in fields}
        try:
            kept["source"] = SourceType(kept.get("source", SourceType.UNKNOWN))
        except ValueError:
            kept["source"] = SourceType.UNKNOWN
        missing = [n for n in ("session", "scheduler", "api") if n not in kept]
        if missing:
            raise SpecsError("event", str(data)[:80], f"an event with {', '.join(missing)}")
        return TorchxEvent(**kept)


__all__ = ["EVENT_VERSION", "SourceType", "TorchxEvent"]
