"""An app's UI URL from what its component declared, once a host runs it.

A component that serves a UI (``metrics.tensorboard``) declares its address in the
AppDef's metadata, ``ui_url``, with ``{host}`` for the host of its first running replica.
It wins over the scheduler's own URL (a cluster dashboard, a local app's log directory):
it is what the app is for. Until a replica runs, the scheduler's URL stays.
"""

from __future__ import annotations

from torchx.schedulers import DescribeAppResponse
from torchx.specs import AppStatus

UI_URL_KEY = "ui_url"


def app_status(desc: DescribeAppResponse | None) -> AppStatus | None:
    """The status of the app ``desc`` describes (None for an app its scheduler does not
    know), with the URL the app's metadata declares, once it can be filled in."""
    if desc is None:
        return None
    status = desc.to_status()
    if desc.app is None:
        return status
    template = desc.app.metadata.get(UI_URL_KEY)
    if not template:
        return status
    hosts = [r.hostname for role in status.roles for r in role.replicas if r.hostname]
    if "{host}" in str(template) and not hosts:
        return status  # not placed yet: no address to give
    status.ui_url = str(template).replace("{host}", hosts[0] if hosts else "")
    return status
