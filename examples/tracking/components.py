"""app1.py and app2.py as torchx components, and a script that runs them in sequence.

    python examples/tracking/components.py --tracker_base /tmp/tracking

or one at a time with the CLI:

    torchx run examples/tracking/components.py:app1 --tracker_base /tmp/tracking
    torchx run examples/tracking/components.py:app2 --tracker_base /tmp/tracking
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torchx.specs as specs
from torchx.components.utils import python

HERE = Path(__file__).resolve().parent


def app1(tracker_base: str) -> specs.AppDef:
    """Computes an accuracy and leaves it in the tracker under app1_out.

    Args:
        tracker_base: the tracker's base (any fsspec URL both apps reach)
    """
    return python("--tracker_base", tracker_base, script=str(HERE / "app1.py"), name="app1")


def app2(tracker_base: str) -> specs.AppDef:
    """Reads app1_out from the tracker and continues from it.

    Args:
        tracker_base: the same tracker base app1 was given
    """
    return python("--tracker_base", tracker_base, script=str(HERE / "app2.py"), name="app2")


if __name__ == "__main__":
    from torchx.runner import get_runner

    parser = argparse.ArgumentParser(description="runs app1 then app2 on the local scheduler")
    parser.add_argument("--tracker_base", required=True)
    base = parser.parse_args().tracker_base
    with get_runner() as runner:
        for make in (app1, app2):
            app = make(base)
            handle = runner.run(app)
            status = runner.wait(handle)
            # The role's name comes from the component (utils.python names it "python"),
            # not from the app's name, so read it from the AppDef.
            for line in runner.log_lines(handle, app.roles[0].name):
                print(f"{make.__name__}: {line}", end="")
            if status is None or status.state.name != "SUCCEEDED":
                raise SystemExit(f"{make.__name__} did not succeed: {status}")
            print(f"{handle} {status.state.name}")
