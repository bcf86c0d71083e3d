"""``requeue`` on ray: the job is stopped (its driver passes SIGTERM on to the replicas, which
checkpoint and exit), then submitted again under the same submission id, so the handle stays.

Ray keeps one job per submission id, so the ended job is deleted first (Ray keeps its log
file, named by the submission id: the next attempt's output follows the stopped one's). The
next attempt's number travels in the runtime env (``TORCHX_ATTEMPT``, which
torchx.runtime.preemption's ``attempt()`` reads) and in the job's metadata, from which
``describe`` counts the requeues. The entrypoint's own reservation is not part of what Ray
returns for a job, so the submission records it in the metadata too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# torchx.runtime.preemption.ATTEMPT_ENV, repeated: the launcher does not depend on it.
ATTEMPT_ENV = "TORCHX_ATTEMPT"
ATTEMPT_KEY = "torchx_attempt"
RESOURCES_KEY = "torchx_entrypoint_resources"


def resources_metadata(resources: Mapping[str, float | int]) -> dict[str, str]:
    """The metadata entry that keeps the entrypoint's reservation for a resubmission."""
    return {RESOURCES_KEY: json.dumps(dict(resources), separators=(",", ":"))} if resources else {}


def attempt_of(metadata: Mapping[str, str] | None) -> int:
    """How many times torchx requeued the job (0 until then)."""
    text = (metadata or {}).get(ATTEMPT_KEY, "0")
    return int(text) if text.isdigit() else 0


def resubmit_kwargs(info: Any, submission_id: str) -> dict[str, Any]:
    """``submit_job``'s arguments for the next attempt of the ended job ``info``."""
    metadata = dict(info.metadata or {})
    attempt = attempt_of(metadata) + 1
    metadata[ATTEMPT_KEY] = str(attempt)
    runtime_env = dict(info.runtime_env or {})
    runtime_env["env_vars"] = {**(runtime_env.get("env_vars") or {}), ATTEMPT_ENV: str(attempt)}
    resources = json.loads(metadata.get(RESOURCES_KEY, "{}"))
    return {
        "submission_id": submission_id,
        "entrypoint": info.entrypoint,
        "runtime_env": runtime_env,
        "metadata": metadata,
        **resources,
    }
