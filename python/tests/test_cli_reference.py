"""docs/cli.md is what the built program's --help says (scripts/cli-reference writes it)."""
import os
import subprocess

from conftest import BINARY, ROOT


def test_cli_reference_matches_the_program():
    res = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "cli-reference"), "--bin", BINARY, "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_cli_reference_names_every_subcommand():
    with open(os.path.join(ROOT, "docs", "cli.md")) as f:
        text = f.read()
    listed = subprocess.run([BINARY, "--help"], capture_output=True, text=True, check=True).stdout
    lines = listed.split("Subcommands:", 1)[1].splitlines()
    names = [line.split()[0] for line in lines if line.startswith("  ") and line.strip()]
    assert "simulate" in names and "sweep" in names
    for name in names:
        assert f"## headspec {name}\n" in text, name
