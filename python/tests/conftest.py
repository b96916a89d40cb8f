import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "build", "headspec")


@pytest.fixture
def cli(tmp_path):
    """Runs the headspec binary with --out in a temporary folder; returns the CSV as a dict of columns."""

    def run(*args):
        out = tmp_path / "out.csv"
        res = subprocess.run([BINARY, *map(str, args), "--out", str(out)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        with open(out) as f:
            header = f.readline().strip().split(",")
        data = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
        return {name: data[:, i] for i, name in enumerate(header)}

    return run


def cli_message(err):
    """The command line's message for a Python error: `--flag: reason` where the Python
    one names the keyword (`keyword flag=: reason`), else the same text."""
    return f"{err.flag}: {err.reason}" if hasattr(err, "flag") else str(err)


def assert_names(err, flag):
    """The error names the flag: as its keyword when one parameter is at fault, else as the flag."""
    if hasattr(err, "flag"):
        assert err.flag == flag
        assert str(err).startswith(f"keyword {flag[2:].replace('-', '_')}=: ")
        assert err.parameter == flag[2:].replace("-", "_")
    else:
        assert str(err).startswith(f"{flag}:")
