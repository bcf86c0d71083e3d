"""Preemption and time limits in torchx's sbatch script (torchx.runtime.preemption's
contract on Slurm).

- Where the run asks for it (``preempt_warning_seconds`` above 0; 0, the default, asks for
  none, as 0.7's script did: an app that does not checkpoint would only be stopped early),
  the script asks Slurm for SIGUSR1 that many seconds ahead of the time limit
  (``--signal=B:USR1@LEAD``, to the batch shell only); ``scancel --signal=USR1 --batch``
  stands in for a preemption the same way, with or without it.
- The batch shell passes the warning on as SIGTERM to every task of its steps (what a pod
  gets): torchrun forwards SIGTERM to its workers, which USR1 would kill. Each replica's
  wrapper shell traps both, so it outlives the app and writes its exit record.
- Once the steps end, a job whose app asked for a requeue (exit code 75, or the file
  ``$TORCHX_REQUEUE_ASKED_FILE`` that ``requeue()`` creates, which survives torchrun) or
  that was preempted without finishing is requeued with ``scontrol requeue``. A warning long
  before the time limit is a preemption, never capped; near the limit (Slurm may send the
  signal up to a minute early), or the app's own request, it is a time-limit requeue,
  capped by ``max_time_requeues``. An app that did not ask is not requeued at its time
  limit: it would only start over.
- Each requeue appends its kind and attempt to ``slurm-<job id>.requeues``; past the cap the
  reason goes to ``slurm-<job id>.reason`` and the job ends FAILED. ``torchx requeue`` writes
  a file of each request's own instead, ``slurm-<job id>.requested/<attempt>.<request>``
  (a trial ``A_I``'s in ``slurm-A.requested/I/``), never the script's: the script and other
  requests may write at the same moment, and a refused request is taken back by removing
  its own file alone. An attempt counts as requeued once however many of these name it;
  the script and ``describe`` read them all, and skip a ``.requeues`` line without an
  attempt, which no torchx wrote. The requests have a folder of their own so that finding
  them never lists the job directory, which holds a sweep's every log.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import TextIO, TypeVar

from torchx.specs import CfgVal, SpecsError

_T = TypeVar("_T")

REQUEUE_EXIT_CODE = 75  # torchx.runtime.preemption.REQUEUE_EXIT_CODE
# How the script's reason file starts when the time-limit warning ended the app.
TIMEOUT_REASON_PREFIX = "TIMEOUT:"
# No warning ahead of the time limit unless asked: 0.7's jobs ran up to their limit.
DEFAULT_WARNING_S = 0
DEFAULT_MAX_TIME_REQUEUES = 3
# sbatch's --signal takes at most this many seconds.
_MAX_WARNING_S = 65535
# Slurm sends the --signal warning up to this much earlier than asked.
_SIGNAL_RESOLUTION_S = 60
# sbatch --time's forms; "D-" alone (whole days) is one too.
_TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$|^(\d+)-$")
# What sbatch reads as no time limit (any letter case); 0 in any form is one too.
_UNLIMITED = ("UNLIMITED", "INFINITE", "-1")


def requeues_name(job_id: str) -> str:
    return f"slurm-{job_id}.requeues"


def requests_dir(job_id: str, task: str | None = None) -> str:
    """The folder, relative to the job directory, where ``torchx requeue`` writes its
    requests for the job ``job_id`` (``A_I``: the folder of the array job ``A``'s task
    ``I``, inside ``A``'s, so that a submit clears an array's at once). Its own folder:
    finding them lists it alone, never the job directory, which holds every trial's logs.
    ``task`` given, ``job_id`` is the array job's part (as the script writes both)."""
    if task is None:
        job_id, _, task = job_id.partition("_")
    return f"slurm-{job_id}.requested" + (f"/{task}" if task else "")


def request_name(attempt: int, request: str) -> str:
    """A request's file in its job's ``requests_dir``, one a request (``request`` tells
    concurrent ones apart), named after the attempt it stops."""
    return f"{attempt}.{request}"


def _requested_attempt(name: str) -> int | None:
    """The attempt a request file ``name`` (``<attempt>.<request>``) names; None for any
    other name (an array's folder also holds its trials' folders, named by index)."""
    attempt, dot, _ = name.partition(".")
    return int(attempt) if dot and _is_count(attempt) else None


def _is_count(word: str) -> bool:
    """Whether ``word`` is a count as torchx writes it: ASCII digits only (``isdigit``
    alone takes '²', which ``int`` refuses)."""
    return word.isascii() and word.isdigit()


def clear_requests(job_dir: str, job_id: str) -> None:
    """Remove the request folder of an earlier job under the id (or array job id, its
    tasks' folders inside) that Slurm just gave a new one: done at submit, before anyone
    can ask to requeue it, never by the job itself, which may start while a request is
    being written."""
    import shutil

    shutil.rmtree(os.path.join(job_dir, requests_dir(job_id)), ignore_errors=True)


def reason_name(job_id: str) -> str:
    return f"slurm-{job_id}.reason"


def time_limit_seconds(text: str) -> int | None:
    """sbatch's --time in seconds (``M``, ``M:S``, ``H:M:S``, ``D-``, ``D-H``, ``D-H:M``,
    ``D-H:M:S``); None for no limit (``UNLIMITED``, ``INFINITE``, ``-1``, and 0, which
    Slurm reads as no limit) and for what it cannot read."""
    seconds = _time_seconds(text.strip())
    return seconds or None


def _time_seconds(text: str) -> int | None:
    m = _TIME.match(text)
    if m is None:
        return None
    days, a, b, c, whole_days = m.groups()
    if whole_days is not None:  # D-
        return int(whole_days) * 86400
    if days is None:
        if c is not None:  # H:M:S
            return int(a) * 3600 + int(b) * 60 + int(c)
        return int(a) * 60 + (int(b) if b is not None else 0)  # M or M:S
    rest = [int(x) for x in (a, b, c) if x is not None]  # H[:M[:S]]
    rest += [0] * (3 - len(rest))
    return int(days) * 86400 + rest[0] * 3600 + rest[1] * 60 + rest[2]


def _whole(option: str, value: CfgVal, default: int, upper: int | None = None) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpecsError(f"run option {option!r}", value, "give a whole number, 0 or more")
    if upper is not None and value > upper:
        raise SpecsError(f"run option {option!r}", value, f"give at most {upper} (sbatch's limit)")
    return value


def warning_and_cap(cfg: Mapping[str, CfgVal]) -> tuple[int, int, int | None]:
    """(lead seconds, time-limit requeue cap, time limit in seconds or None), checked."""
    explicit = cfg.get("preempt_warning_seconds")
    lead = _whole("preempt_warning_seconds", explicit, DEFAULT_WARNING_S, _MAX_WARNING_S)
    cap = _whole("max_time_requeues", cfg.get("max_time_requeues"), DEFAULT_MAX_TIME_REQUEUES)
    text = str(cfg["time"]).strip() if cfg.get("time") else ""
    limit = time_limit_seconds(text) if text else None
    if text and _time_seconds(text) is None and text.upper() not in _UNLIMITED:
        # sbatch would refuse it at submit; said here, a dry run shows it too
        raise SpecsError(
            "run option 'time'",
            cfg["time"],
            "write it as sbatch --time reads it: minutes (30), M:S, H:M:S (1:00:00), D-H, "
            "D-H:M or D-H:M:S (2-00:00:00), or UNLIMITED (also -1 or 0)",
        )
    if limit is not None and lead and lead >= limit:
        raise SpecsError(
            "run option 'preempt_warning_seconds'",
            lead,
            f"it is not shorter than the time limit (time={cfg['time']}, {limit}s); "
            f"give fewer seconds than {limit}, or a longer time",
        )
    return lead, cap, limit


def sbatch_options(lead: int) -> list[str]:
    # 0: no warning at all (``@0`` would still come up to a minute early)
    return [f"--signal=B:USR1@{lead}"] if lead else []


def script_setup(lead: int, cap: int, limit: int | None, array: bool = False) -> list[str]:
    """Lines near the top of the batch script: the warning's trap and the counters. The
    files are named after the app's id: an array task's (``A_I``, ``$TORCHX_APP_ID``), not
    its own job id, which neither ``describe`` nor ``requeue`` of the trial is given."""
    # A warning earlier than this many seconds into the job is a preemption.
    # Without a limit, or a warning asked ahead of it, every warning is a preemption.
    preempt_before = (limit - lead - _SIGNAL_RESOLUTION_S) if limit and lead else 2**31
    app_id = "${TORCHX_APP_ID}" if array else "${SLURM_JOB_ID}"
    requested = (
        requests_dir("${TORCHX_APP_ID%%_*}", "${TORCHX_APP_ID#*_}")
        if array
        else requests_dir("${SLURM_JOB_ID}", "")
    )
    # An array task's files of the previous naming: a stale one would be read in place of
    # the task's own (``read_requeues``' fallback), so a first attempt removes them too.
    legacy = "".join(
        f' "$TORCHX_JOB_DIR/{name("${SLURM_JOB_ID}")}"' for name in (requeues_name, reason_name)
    )
    return [
        f'torchx_requeues="$TORCHX_JOB_DIR/{requeues_name(app_id)}"',
        f'torchx_reason="$TORCHX_JOB_DIR/{reason_name(app_id)}"',
        f'torchx_requested="$TORCHX_JOB_DIR/{requested}"',
        # torchx.runtime.preemption.requeue() creates it: the app asked to run again
        f'export TORCHX_REQUEUE_ASKED_FILE="$TORCHX_JOB_DIR/slurm-{app_id}.asked-$TORCHX_ATTEMPT"',
        'if [ "$TORCHX_ATTEMPT" = 0 ]; then rm -f -- "$torchx_requeues" "$torchx_reason" '
        f'"$TORCHX_JOB_DIR/slurm-{app_id}.asked-"*{legacy if array else ""}; fi',
        "torchx_warned=0 torchx_started=$SECONDS",
        "# The warning (Slurm's --signal, or scancel --signal=USR1 --batch) goes on to the",
        "# app's processes as SIGTERM; the app checkpoints and exits.",
        "torchx_warn() {",
        '    [ "$torchx_warned" = 0 ] || return 0',
        "    torchx_warned=$((SECONDS - torchx_started + 1))",
        '    scancel --signal=TERM "$SLURM_JOB_ID" || true',
        "}",
        "trap torchx_warn USR1",
        f"torchx_preempt_before={preempt_before}",
        f"torchx_max_time_requeues={cap}",
    ]


def script_wait_and_requeue() -> list[str]:
    """Replaces the plain wait: a trapped signal interrupts ``wait``, which is then resumed;
    a warned job (or one whose app asked) is requeued, within the cap."""
    return [
        "rc=0",
        'for pid in "${pids[@]}"; do',
        "    while :; do",
        '        wait "$pid"; code=$?',
        '        if [ "$code" -gt 128 ] && kill -0 "$pid" 2>/dev/null; then continue; fi',
        "        break",
        "    done",
        '    [ "$code" = 0 ] || rc=$code',
        "done",
        "# The earlier attempts that were requeued (not failed), each once: the script's own",
        "# lines and torchx requeue's files (...requested/<attempt>.<request>) may both name",
        "# one. With none, the pattern stays as written: its '*' is no file. An array's",
        "# folder holds its trials' folders: only files named <attempt>.<request> count,",
        "# the attempt ASCII digits alone, checked here: a newline in a name would split it.",
        "# An attempt is a number, as describe reads it: 01 and 1 are one attempt.",
        'torchx_requeued=$({ cut -d" " -f2 "$torchx_requeues" 2>/dev/null; for f in '
        '"$torchx_requested"/*; do [ -f "$f" ] || continue; f=${f##*/}; a=${f%%.*}; '
        'case $a in "$f"|""|*[!0123456789]*) continue;; esac; echo "$a"; done; } | '
        "awk -v n=\"$TORCHX_ATTEMPT\" '/^[0-9]+$/ && $1 < n && !seen[$1+0]++' | wc -l)",
        "torchx_asked=0",
        f'if [ -e "$TORCHX_REQUEUE_ASKED_FILE" ] || [ "$rc" = {REQUEUE_EXIT_CODE} ]; then',
        "    torchx_asked=1",
        "fi",
        "kind=time_limit",
        'if [ "$torchx_warned" != 0 ] && [ "$torchx_warned" -le "$torchx_preempt_before" ]; then',
        "    kind=preemption",
        "fi",
        "# A preempted app that did not finish runs again; near the time limit, only an app",
        "# that asked to (one that does not checkpoint would start over).",
        'if [ "$rc" != 0 ] && { [ "$torchx_asked" = 1 ] || { [ "$torchx_warned" != 0 ] && '
        '[ "$kind" = preemption ]; }; }; then',
        '    used=$(grep -c "^time_limit" "$torchx_requeues" 2>/dev/null || true)',
        '    if [ "$kind" = time_limit ] && [ "${used:-0}" -ge "$torchx_max_time_requeues" ]; then',
        '        printf "%s\\n" "the time limit was reached after ${used:-0} time-limit '
        "requeue(s), the most run option 'max_time_requeues' ($torchx_max_time_requeues) "
        'allows; raise it or give a longer time" > "$torchx_reason"',
        '        exit "$([ "$rc" = 0 ] && echo 1 || echo "$rc")"',
        "    fi",
        '    echo "$kind $TORCHX_ATTEMPT" >> "$torchx_requeues"',
        "    # This kills the script. Slurm holds the requeued job until its begin time,",
        "    # AuthInfo's cred_expire (120 s by default) later; only once the job is pending",
        "    # can `scontrol update JobId=... StartTime=now` lift that, from outside the job.",
        '    scontrol requeue "$SLURM_JOB_ID"',
        "    exit 0",
        "fi",
        "# Warned near the time limit, not asking to run again: the time limit ended it, as",
        "# Slurm's TIMEOUT would have (and a retry would only start the app over).",
        'if [ "$rc" != 0 ] && [ "$torchx_warned" != 0 ] && [ "$kind" = time_limit ]; then',
        f'    printf "%s\\n" "{TIMEOUT_REASON_PREFIX} the app was warned ${{torchx_warned}}s into '
        "the run, preempt_warning_seconds ahead of its time limit, and stopped without asking "
        "to run again; give a longer time, set preempt_warning_seconds=0 to run up to the "
        'limit, or have the app call torchx.runtime.preemption.requeue()" > "$torchx_reason"',
        '    exit "$rc"',
        "fi",
        "# Failures (not requeues) count against the roles' max_retries.",
        "torchx_failures=$((TORCHX_ATTEMPT - torchx_requeued))",
        'if [ "$rc" != 0 ] && [ "$TORCHX_MAX_RETRIES" -gt "$torchx_failures" ]; then',
        '    scontrol requeue "$SLURM_JOB_ID"',
        "fi",
        'exit "$rc"',
        "",
    ]


def read_requeues(
    job_dir: str, job_id: str, legacy_id: str = "", *, before: int | None = None
) -> tuple[int, str]:
    """(how many attempts of the job were requeued, by torchx's script or ``torchx
    requeue``, why it failed past the cap or ""), from the job directory; (0, "") where it
    holds none of the files. ``legacy_id``: an array task's own job id, whose files are
    read where the task has none of its own (scripts of earlier versions named a task's
    files after it). ``before``: the current attempt (Slurm's Restarts), where known; a
    request for it is not a requeue yet."""
    if not job_dir:
        return 0, ""
    legacy_id = legacy_id if legacy_id != job_id else ""
    attempts: set[int] = set()
    # Only the job's own request folder is listed (usually absent: one failed call) and
    # the two files are opened by name, never a listing of the job directory, which holds
    # a sweep's every log; an earlier version's name only where the job's own is absent.
    try:
        with os.scandir(os.path.join(job_dir, requests_dir(job_id))) as entries:
            for entry in entries:
                attempt = _requested_attempt(entry.name)
                if attempt is not None and entry.is_file(follow_symlinks=False):
                    attempts.add(attempt)
    except OSError:
        pass  # no request (the most), or none readable: the script's own lines count
    attempts |= _read_own_or_legacy(
        job_dir, requeues_name, job_id, legacy_id, _line_attempts, set()
    )
    count = sum(1 for a in attempts if before is None or a < before)
    return count, _read_own_or_legacy(job_dir, reason_name, job_id, legacy_id, _reason_text, "")


def _read_own_or_legacy(
    job_dir: str,
    name: Callable[[str], str],
    job_id: str,
    legacy_id: str,
    read: Callable[[TextIO], _T],
    absent: _T,
) -> _T:
    """``read`` of the job's own file ``name(job_id)``, or where that does not exist of an
    earlier version's, ``name(legacy_id)`` ("" for none); ``absent`` where neither can be
    read."""
    for file_id in (job_id, legacy_id) if legacy_id else (job_id,):
        try:
            # a damaged byte spoils its line alone, not the whole status
            with open(
                os.path.join(job_dir, name(file_id)), encoding="utf-8", errors="replace"
            ) as f:
                return read(f)
        except FileNotFoundError:
            pass
        except OSError:
            break  # the job's own file, unreadable: an earlier version's is not its
    return absent


def _line_attempts(f: TextIO) -> set[int]:
    attempts: set[int] = set()
    try:
        for words in map(str.split, f):
            # a line without its attempt is skipped, as the script's count does
            if len(words) > 1 and _is_count(words[1]):
                attempts.add(int(words[1]))
    except OSError:
        pass  # a read error partway: the attempts read before it still count
    return attempts


def _reason_text(f: TextIO) -> str:
    return f.read(4096).strip()
