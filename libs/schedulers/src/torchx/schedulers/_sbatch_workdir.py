"""Where an sbatch command's job runs, read from its options as sbatch's getopt_long reads
them. Standard library only."""

from __future__ import annotations

import os

# sbatch's long options that take no separate value (none, or one only after '='); any
# other reads the next word as its value, whatever that word starts with.
_SBATCH_FLAGS = frozenset(
    [
        "consolidate-segments",
        "contiguous",
        "exclusive",
        "external",
        "get-user-env",
        "help",
        "hold",
        "ignore-pbs",
        "nice",
        "no-kill",
        "no-requeue",
        "oom-kill-step",
        "overcommit",
        "oversubscribe",
        "parsable",
        "propagate",
        "quiet",
        "reboot",
        "requeue",
        "resv-ports",
        "spread-job",
        "spread-segments",
        "stepmgr",
        "test-only",
        "usage",
        "use-min-nodes",
        "verbose",
        "version",
        "wait",
    ]
)
# sbatch's one-letter options that take a value: the rest of the word, else the next word
_SBATCH_SHORT_VALUED = frozenset("ABCDFGJLMNSabcdeimnopqtwx")


def job_workdir(cmd: list[str]) -> str:
    """Where the job of the sbatch command ``cmd`` runs: its last ``--chdir``/``-D``
    (job_dir's, or one in the run option 'sbatch_args', which comes after it and wins, as
    sbatch reads them), relative to this directory, where sbatch runs; else this one.
    Read as sbatch reads it: an option's value is never taken for an option, and the
    options end at the first word that is not one. (Abbreviated long names are not.)"""
    where = ""
    words = iter(cmd[1:])
    for word in words:
        if word == "--" or not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if not eq and name not in _SBATCH_FLAGS:
                value = next(words, "")
            if name == "chdir":
                where = value
            continue
        for k, letter in enumerate(word[1:], start=2):  # -vD/x: flags, then one valued
            if letter in _SBATCH_SHORT_VALUED:
                value = word[k:] or next(words, "")
                if letter == "D":
                    where = value
                break
    return os.path.abspath(where) if where else os.getcwd()
