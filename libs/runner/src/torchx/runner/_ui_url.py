"""An app's UI URL from what its component declared, once a host runs it.

A component that serves a UI (``metrics.tensorboard``) declares its address in the
AppDef's metadata, ``ui_url``, with ``{host}`` for the host of its first running replica.
A scheduler's own URL (a cluster dashboard) wins.
"""

from __future__ import annotations

from torchx.schedulers import DescribeAppResponse
from torchx.specs import AppStatus

UI_URL_KEY = "ui_url"


def with_ui_url(desc: DescribeAppResponse, status: AppStatus) -> AppStatus:
    """``status`` with the URL the app's metadata declares, when the scheduler gave none."""
    if status.ui_url or desc.app is None:
        return status
    template = desc.app.metadata.get(UI_URL_KEY)
    if not template:
        return status
    hosts = [r.hostname for role in status.roles for r in role.replicas if r.hostname]
    if "{host}" in str(template) and not hosts:
        return status  # not placed yet: no address to give
    status.ui_url = str(template).replace("{host}", hosts[0] if hosts else "")
    return status
