"""The scheduler contract, under the module path plug-ins written for pytorch/torchx import.

Subclass :class:`Scheduler` and implement ``_submit_dryrun``, ``schedule``, ``describe``,
``list``, ``_cancel_existing`` and ``log_iter`` (``_run_opts`` is optional); register the
factory under the ``torchx.schedulers`` entry-point group.
"""

from torchx.schedulers._api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    filter_regex,
    split_lines,
    split_lines_iterator,
)
from torchx.schedulers._errors import SchedulerError
from torchx.specs import NONE, NULL_RESOURCE, AppDryRunInfo

# pytorch/torchx 0.7's constant: two weeks, in days.
DAYS_IN_2_WEEKS = 14

__all__ = [
    "DAYS_IN_2_WEEKS",
    "NONE",
    "NULL_RESOURCE",
    "AppDryRunInfo",
    "DescribeAppResponse",
    "ListAppResponse",
    "Scheduler",
    "SchedulerError",
    "Stream",
    "filter_regex",
    "split_lines",
    "split_lines_iterator",
]
