"""Turns an AppDef into one sbatch script: one role -> one job, several -> a heterogeneous job.

Each role is one job component of ``num_replicas`` nodes with one task per node, so a
replica is a node-sized unit as torchx expects. Replica ``k`` of a role is task ``k`` of the
``srun`` step that runs the role (``$SLURM_PROCID``). Per-replica output goes to
``slurm-<job id>-<role>-<k>.out|.err`` in the job's working directory, which Slurm itself
remembers (``WorkDir``), so logs can be found again from anywhere. When a replica's process
ends, its wrapper writes ``<exit code> <node> <attempt>`` to ``slurm-<job id>-<role>-<k>.exit``
there: Slurm keeps one exit code per step, not per task, so this is how ``describe`` tells
which replica failed. ``<attempt>`` is Slurm's restart count, so that a requeued job's
earlier run is never read as this one's.

Each role's command is a shell function, exported to its ``srun`` tasks: the user's words
are quoted once, as a person would write them.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from torchx.schedulers._replica_env import TORCHX_APP_ID, TORCHX_RANK0_HOST
from torchx.schedulers._replicas import Replica, role_replicas
from torchx.schedulers._slurm_preemption import (
    sbatch_options,
    script_setup,
    script_wait_and_requeue,
    warning_and_cap,
)
from torchx.specs import MISSING, AppDef, CfgVal, Role, SpecsError, macros

# A value exported once for the whole job at the top of the script, not per replica.
_FROM_JOB = "\x00job\x00"
# Placeholders that survive shlex.quote and are then swapped for shell expansions.
_SENTINELS = {
    "replica_id": ("\x00R\x00", "${SLURM_PROCID}"),
    "app_id": ("\x00A\x00", "${TORCHX_APP_ID}"),
    "img_root": ("\x00I\x00", "${TORCHX_IMG_ROOT}"),
}
# The macro values of every script replica: one object, so its mapping is built once.
_SENTINEL_VALUES = macros.Values(
    img_root=_SENTINELS["img_root"][0],
    app_id=_SENTINELS["app_id"][0],
    replica_id=_SENTINELS["replica_id"][0],
    rank0_env=TORCHX_RANK0_HOST,
)
_ROLE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Bytes that would end or corrupt an ``#SBATCH`` line: the script is line-oriented and
# sbatch reads each option from one line, so no quoting can carry them.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Options that belong to every component of a heterogeneous job.
_PER_COMPONENT = ("partition", "time", "constraint", "account", "qos")
# Options that are job-wide and written once, in the first component.
_JOB_WIDE = ("mail-user", "mail-type")
# An array task's app id (A_I), as its batch script spells it.
_TASK_ID = "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"


def log_name(job_id: str, role: str, k: int | str, stream: str) -> str:
    return f"slurm-{job_id}-{role}-{k}.{stream}"


def _shell_word(text: str) -> str:
    """``text`` (macros filled with the sentinels) quoted for bash, the sentinels turned
    into shell expansions."""
    quoted = shlex.quote(text)
    if "\x00" not in text:
        return quoted  # no sentinel: the common case, and a sweep quotes thousands of words
    for sentinel, expansion in _SENTINELS.values():
        quoted = quoted.replace(sentinel, f"'\"{expansion}\"'")
    # Drop the empty '' pairs the swap leaves at the ends of a word.
    if quoted.startswith("''") and len(quoted) > 2:
        quoted = quoted[2:]
    if quoted.endswith("''") and len(quoted) > 2:
        quoted = quoted[:-2]
    return quoted


def _shown(text: str) -> str:
    """``text`` with the sentinels shown as the shell expansions they become."""
    for sentinel, expansion in _SENTINELS.values():
        text = text.replace(sentinel, expansion)
    return text


def resource_options(role: Role) -> list[str]:
    """The sbatch options that size one role's job component."""
    return _resource_lines(role)


def _resource_lines(role: Role) -> list[str]:
    res = role.resource
    out = [f"--nodes={role.num_replicas}", "--ntasks-per-node=1"]
    if res.cpu > 0:
        out.append(f"--cpus-per-task={math.ceil(res.cpu)}")
    if res.memMB > 0:
        out.append(f"--mem={int(res.memMB)}")
    if res.gpu > 0:
        out.append(f"--gpus-per-node={res.gpu}")
    return out


def _one_line(option: str, value: CfgVal) -> str:
    """``value`` as text for an ``#SBATCH`` line; refused if a line cannot hold it."""
    text = str(value)
    if _CONTROL.search(text):
        raise SpecsError(
            f"run option {option!r}",
            value,
            "give one line of text without control characters (newline, tab, NUL...): "
            "sbatch reads each option from one line of the batch script",
        )
    return text


def _opt_lines(cfg: Mapping[str, CfgVal], names: tuple[str, ...]) -> list[str]:
    out = []
    for name in names:
        key = name.replace("-", "_")
        value = cfg.get(key)
        if value not in (None, ""):
            out.append(f"--{name}={_one_line(key, value)}")
    return out


def _exit_record(role: str) -> str:
    """Shell that saves the replica's exit code, node and attempt, then exits with the code;
    a replica that the stop warning reached says so in its log first."""
    path = '"$TORCHX_JOB_DIR"/' + log_name('"$TORCHX_APP_ID"', role, '"$SLURM_PROCID"', "exit")
    # written whole then renamed, so a reader never sees half a record
    return (
        f"rc=$?; f={path}\n"
        '    [ -z "${torchx_replica_warned:-}" ] || echo "[torchx] '
        f'{role}/$SLURM_PROCID was warned ($torchx_replica_warned) and exited $rc" '
        "| tee /dev/stderr\n"
        '    printf "%s %s %s\\n" "$rc" "${SLURMD_NODENAME:-$(hostname)}" "$TORCHX_ATTEMPT" '
        '> "$f.tmp" && mv "$f.tmp" "$f"\n'
        '    exit "$rc"'
    )


def script_replica(role: Role) -> Replica:
    """The one replica that stands for every task of ``role``'s ``srun`` step: macros filled
    with sentinels for the shell expansions (``${SLURM_PROCID}``...), and the replica
    environment less what the script exports once for the whole job (``TORCHX_APP_ID``,
    ``TORCHX_RANK0_HOST``, ``MASTER_ADDR``, ``MASTER_PORT``)."""
    (replica,) = role_replicas(
        role,
        app_id=_SENTINELS["app_id"][0],
        rank0_host=_FROM_JOB,
        master_port=_FROM_JOB,
        replica_id=_SENTINELS["replica_id"][0],
        values=_SENTINEL_VALUES,
    )
    env = {k: v for k, v in replica.env.items() if v != _FROM_JOB and k != TORCHX_APP_ID}
    return Replica(role, replica.replica_id, replica.filled, env)


def replica_exports(role: Role) -> dict[str, str]:
    """What each replica of ``role`` exports, with the shell expansions it holds."""
    return {k: _shown(v) for k, v in script_replica(role).env.items()}


def _function_name(index: int) -> str:
    return f"torchx_role_{index}"


@dataclass(frozen=True)
class RoleParts:
    """What of one role's shell function a trial of an array may change: the replica's
    exports (name -> shell word) and its command line, quoted."""

    exports: dict[str, str]
    command: str


def role_parts(app: AppDef, quoted: dict[str, str] | None = None) -> list[RoleParts]:
    """Each role's exports and command line, quoted for bash; each role's replica is made
    once, by the shared replica helper. ``app`` has passed ``check_roles`` (or the
    stricter ``validate_app``). ``quoted`` keeps the words already quoted: the trials of an
    array repeat most of theirs."""
    memo = {} if quoted is None else quoted

    def word(text: str) -> str:
        out = memo[text] = _shell_word(text)
        return out

    parts = []
    for role in app.roles:
        replica = script_replica(role)
        # a word quoted before is looked up in place: a call per word costs more here
        exports = {k: memo.get(v) or word(v) for k, v in replica.env.items()}
        command = " ".join([memo.get(a) or word(a) for a in replica.argv])
        parts.append(RoleParts(exports, command))
    return parts


def _role_function(
    role: Role, index: int, exports: Mapping[str, str], command: str, trial: bool = False
) -> list[str]:
    """The shell function one replica of ``role`` runs: exports, the command, its record.
    ``trial``: the trial's own exports and command are the functions ``torchx_env_<i>``
    and ``torchx_cmd_<i>`` that the array task defined (``command`` is then their call)."""
    lines = [f"# role {role.name}: {role.num_replicas} replica(s)", f"{_function_name(index)}() {{"]
    if exports:
        lines.append("    export " + " \\\n        ".join(f"{k}={v}" for k, v in exports.items()))
    if trial:
        lines.append(f"    torchx_env_{index}")
    names = f" torchx_env_{index} torchx_cmd_{index}" if trial else ""
    return [
        *lines,
        # the warning reaches every process of the step: this shell outlives the app
        "    trap 'torchx_replica_warned=SIGTERM' TERM",
        "    trap 'torchx_replica_warned=SIGUSR1' USR1",
        # the same marker line local_cwd writes, so `torchx log` tells the attempts apart
        '    [ "$TORCHX_ATTEMPT" = 0 ] || echo "[torchx] attempt $((TORCHX_ATTEMPT + 1)) of '
        f'{role.name}/$SLURM_PROCID starts: restart $TORCHX_ATTEMPT of the job" | tee /dev/stderr',
        f"    {command}",
        f"    {_exit_record(role.name)}",
        "}",
        f"export -f {_function_name(index)}{names}",
    ]


def _srun_line(role: Role, index: int, het_group: int | None) -> str:
    out = log_name("${TORCHX_APP_ID}", role.name, "%t", "out")
    err = log_name("${TORCHX_APP_ID}", role.name, "%t", "err")
    group = f" --het-group={het_group}" if het_group is not None else ""
    return (
        f"srun{group} --job-name={role.name} --kill-on-bad-exit=1 --open-mode=append "
        f'--output="{out}" --error="{err}" bash -c {_function_name(index)} &'
    )


def _role_token(role: Role) -> str:
    """``name``, or ``name:replicas`` when there are several (names cannot hold ':')."""
    return role.name if role.num_replicas == 1 else f"{role.name}:{role.num_replicas}"


def check_roles(app: AppDef) -> None:
    if not app.roles:
        raise SpecsError("app.roles", [], "the slurm scheduler needs at least one role")
    for role in app.roles:
        if not _ROLE_NAME.match(role.name):
            raise SpecsError(
                "role.name", role.name, "use letters, digits, '_', '.' or '-' (it names log files)"
            )
        if not role.entrypoint or role.entrypoint == MISSING:
            raise SpecsError(f"role {role.name!r} entrypoint", role.entrypoint, "give a program")
        if role.num_replicas < 1:
            raise SpecsError(f"role {role.name!r} num_replicas", role.num_replicas, "at least 1")
        for name in role.env:
            # the script exports names unquoted, as the shell requires
            if not _ENV_NAME.match(name):
                raise SpecsError(
                    f"role {role.name!r} env name",
                    name,
                    "use letters, digits and '_', not starting with a digit",
                )


def script_shape(app: AppDef) -> tuple[object, ...]:
    """What of ``app`` the script reads outside its role functions (``role_functions``):
    apps of equal shape under the same run options differ only in those functions, which
    is what lets one array script hold many trials."""
    roles = [
        (r.name, r.num_replicas, r.resource.cpu, r.resource.memMB, r.resource.gpu)
        for r in app.roles
    ]
    return (*roles, min(r.max_retries for r in app.roles))


def _header(
    app: AppDef, cfg: Mapping[str, CfgVal], job_name: str, lead: int, sweep: str = ""
) -> list[str]:
    """The ``#SBATCH`` lines of every job component."""
    lines: list[str] = []
    # The comment marks torchx jobs (for ``list``) and names the roles, in component order,
    # and a sweep's array its sweep (``list`` answers with it; with no space after the
    # ``;``, which tells it from the user's own comment).
    comment = "torchx:roles=" + ",".join(_role_token(r) for r in app.roles)
    if sweep:
        comment += f";sweep={sweep}"
    if cfg.get("comment"):
        comment += f"; {_one_line('comment', cfg['comment'])}"
    for i, role in enumerate(app.roles):
        if i > 0:
            lines.append("#SBATCH hetjob")
        opts = []
        if i == 0:
            opts += [f"--job-name={job_name}", f"--comment={comment}"]
            opts += ["--output=slurm-%j.out", "--requeue", *sbatch_options(lead)]
            opts += _opt_lines(cfg, _JOB_WIDE)
        opts += _opt_lines(cfg, _PER_COMPONENT)
        if cfg.get("exclusive"):
            opts.append("--exclusive")
        opts += _resource_lines(role)
        lines += [f"#SBATCH {shlex.quote(o)}" for o in opts]
    return lines


def _setup(app: AppDef, lead: int, cap: int, limit: int | None, array: bool) -> list[str]:
    """What the batch script does before it starts the roles; ``array``: whether it is a
    job array's, whose every task is its own app."""
    app_id = _TASK_ID if array else "$SLURM_JOB_ID"
    return [
        "set -u",
        f'export TORCHX_APP_ID="{app_id}" TORCHX_IMG_ROOT="$PWD" TORCHX_JOB_DIR="$PWD"',
        'export TORCHX_ATTEMPT="${SLURM_RESTART_COUNT:-0}"',
        f"export TORCHX_MAX_RETRIES={min(r.max_retries for r in app.roles)}",
        "# A first attempt owns every exit record of its job id (one may be reused).",
        # Output is appended, so each attempt's logs follow the one before.
        'if [ "$TORCHX_ATTEMPT" = 0 ]; then rm -f -- "slurm-${SLURM_JOB_ID}-"*.exit '
        '"slurm-${SLURM_JOB_ID}-"*.out "slurm-${SLURM_JOB_ID}-"*.err; fi',
        # Node names need not resolve; NodeAddr is what Slurm itself connects to.
        'first_node=$(scontrol show hostnames "${SLURM_JOB_NODELIST_HET_GROUP_0:-'
        '$SLURM_JOB_NODELIST}" | head -n1)',
        f'{TORCHX_RANK0_HOST}=$(scontrol show node -o "$first_node" '
        "| grep -o 'NodeAddr=[^ ]*' | cut -d= -f2)",
        f'export {TORCHX_RANK0_HOST}="${{{TORCHX_RANK0_HOST}:-$first_node}}"',
        f'export MASTER_ADDR="${TORCHX_RANK0_HOST}" MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))',
        *script_setup(lead, cap, limit, array=array),
        "",
        "pids=()",
    ]


def _script(
    app: AppDef,
    cfg: Mapping[str, CfgVal],
    job_name: str,
    description: str,
    array: str | None,
    trials: Mapping[int, list[RoleParts]] | None,
    sweep: str = "",
) -> str:
    """The sbatch script of one app (``trials`` None) or of an array whose task ``i`` runs
    trial ``i``, whose roles' exports and commands are ``trials[i]``."""
    check_roles(app)
    if cfg.get("time"):
        # a time that cannot stand on one #SBATCH line is refused for that, as every
        # option is, before its format is read
        _one_line("time", cfg["time"])
    lead, cap, limit = warning_and_cap(cfg)
    het = len(app.roles) > 1
    lines = [
        "#!/bin/bash",
        description,
        *_header(app, cfg, job_name, lead, sweep),
        *([f"#SBATCH --array={array}"] if array else []),
        "",
        *_setup(app, lead, cap, limit, bool(array)),
    ]
    shared = role_parts(app) if trials is None else _trial_arms(trials, lines)
    for i, role in enumerate(app.roles):
        lines += _role_function(role, i, shared[i].exports, shared[i].command, trials is not None)
        lines += [_srun_line(role, i, i if het else None), "pids+=($!)"]
    # As pytorch/torchx does, a failed job runs again while retries are left.
    lines += ["", *script_wait_and_requeue()]
    return "\n".join(lines)


def _trial_arms(trials: Mapping[int, list[RoleParts]], lines: list[str]) -> list[RoleParts]:
    """Append to ``lines`` the ``case`` whose arm ``i`` defines trial ``i``'s own exports
    and command of each role (``torchx_env_<r>``, ``torchx_cmd_<r>``); return, per role,
    the exports every trial shares (written once, in the role's function) and the call
    of the trial's command."""
    first = next(iter(trials.values()))
    shared = []
    for r, parts in enumerate(first):
        common = {
            k: v
            for k, v in parts.exports.items()
            if all(t[r].exports.get(k) == v for t in trials.values())
        }
        shared.append(RoleParts(common, f"torchx_cmd_{r}"))
    lines.append('case "$SLURM_ARRAY_TASK_ID" in')
    alike = [s.exports for s in shared]
    for index, roles in trials.items():
        lines.append(f"{index})")
        for r, parts in enumerate(roles):
            own = [f"{k}={v}" for k, v in parts.exports.items() if k not in alike[r]]
            # as written: not indented (a here-document's end marker starts its line), no
            # line dropped (a quoted argument may span lines)
            env = "export " + " \\\n        ".join(own) if own else ":"
            lines += [f"torchx_env_{r}() {{", f"    {env}", "}"]
            lines += [f"torchx_cmd_{r}() {{", f"    {parts.command}", "}"]
        lines.append("  ;;")
    lines += ["*)", '  echo "torchx: no trial $SLURM_ARRAY_TASK_ID in this array" >&2']
    lines += ["  exit 2", "  ;;", "esac"]
    return shared


def make_script(app: AppDef, cfg: Mapping[str, CfgVal], job_name: str) -> str:
    """The full sbatch script for ``app`` under the resolved run options ``cfg``."""
    roles = ", ".join(r.name for r in app.roles)
    return _script(app, cfg, job_name, f"# torchx app {app.name!r}: roles {roles}", None, None)


def array_script(
    app: AppDef,
    cfg: Mapping[str, CfgVal],
    job_name: str,
    index_spec: str,
    trials: Mapping[int, list[RoleParts]],
    sweep: str = "",
) -> str:
    """One ``sbatch --array=<index_spec>`` script for trials of ``app``'s shape: task ``i``
    defines trial ``i``'s own exports and commands (``trials[i]``, its ``role_parts``),
    then runs the roles as ``make_script``'s script does; what every trial exports alike
    is written once. Trial ``i`` is the app ``<array job>_<i>``; ``sweep``, the sweep's
    id, is written into the job's comment."""
    what = f"# torchx sweep {job_name}: {len(trials)} trial(s), array indices {index_spec}"
    return _script(app, cfg, job_name, what, index_spec, trials, sweep)
