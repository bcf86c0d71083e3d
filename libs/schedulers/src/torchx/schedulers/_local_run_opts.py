"""The run options of local_cwd and local_dir, and the check of those naming a directory."""

from __future__ import annotations

import os

from torchx.schedulers._local_requeue import DEFAULT_MAX_REQUEUES
from torchx.specs import CfgVal, SpecsError, runopts


def local_run_opts(default_log_dir: str) -> runopts:
    """The local schedulers' run options; ``default_log_dir``: where logs go without
    ``log_dir``."""
    opts = runopts()
    opts.add(
        "log_dir",
        str,
        "directory that holds <session>/<app_id>/<role>/<replica>/stdout.log|stderr.log "
        f"(default: {default_log_dir})",
    )
    opts.add(
        "cwd",
        str,
        "directory the replicas run in (the image); default: the role's image if it is "
        "a directory, else the current directory",
    )
    opts.add(
        "workspace",
        str,
        "directory copied (less what .torchxignore lists) into the app's own directory when "
        "it is submitted, for the replicas to run in instead of cwd; the copy is removed "
        "with the app's record (set by --workspace)",
    )
    opts.add(
        "auto_set_cuda_visible_devices",
        bool,
        "give each replica its own CUDA_VISIBLE_DEVICES slice of resource.gpu GPUs",
        default=False,
    )
    opts.add(
        "prepend_cwd",
        bool,
        "put the replica's working directory first on its PATH, so the programs kept "
        "there win over those of PATH",
        default=False,
    )
    opts.add(
        "cancel_grace_seconds",
        float,
        "seconds between SIGTERM and SIGKILL when an app is cancelled or restarted",
        default=5.0,
    )
    opts.add(
        "max_requeues",
        int,
        "how often an app may exit asking to be run again (exit code 75) before it "
        "counts as FAILED; requeues by `torchx requeue` are not counted",
        default=DEFAULT_MAX_REQUEUES,
    )
    return opts


def check_dir(option: str, value: CfgVal) -> str:
    """Run option ``option`` as an absolute path, refused unless it names a directory."""
    path = os.path.abspath(os.path.expanduser(str(value)))
    if not os.path.isdir(path):
        raise SpecsError(f"run option {option!r}", value, "give an existing directory")
    return path
