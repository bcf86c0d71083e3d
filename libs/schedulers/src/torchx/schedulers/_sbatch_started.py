"""``sbatch`` started before its script is made.

Half of what one ``sbatch`` costs is its own start (loading Slurm's configuration and
plugins), before it reads the script; started as soon as its command line is known,
that overlaps the making of the script (a sweep calls its component once per trial). It
reads nothing until ``submit`` hands it the finished script, so nothing is submitted
before every check passed: ``stop`` kills it unread, and should this process die first,
sbatch reads an empty script, which it refuses.
"""

from __future__ import annotations

import os
import subprocess

from torchx.schedulers._slurm_commands import SlurmError, finish, run, start


class StartedSbatch:
    """``sbatch`` with ``argv``, started now, waiting for its script on stdin."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = list(argv)
        # What the job gets from sbatch's own process: a submit with others runs afresh.
        self._env = dict(os.environ)
        self._cwd = os.getcwd()
        self._proc: subprocess.Popen[str] | None
        try:
            self._proc = start(self.argv, stdin=True)
        except SlurmError:
            self._proc = None  # ``submit`` runs it afresh, and says why it cannot

    def submit(self, argv: list[str], script: str) -> subprocess.CompletedProcess[str]:
        """sbatch ``argv`` of ``script``: the started one, where it was started with the
        same command line, environment and directory, else a new one."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if argv == self.argv and self._cwd == os.getcwd() and self._env == os.environ:
                return finish(proc, script)
            _kill(proc)
        return run(argv, stdin=script)

    def stop(self) -> None:
        """End it unread, if ``submit`` did not run (no-op after)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _kill(proc)


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.communicate()  # reaps it and closes its pipes


__all__ = ["StartedSbatch"]
