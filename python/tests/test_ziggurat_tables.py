"""src/random/ziggurat_tables.cpp is what scripts/ziggurat-tables computes (60-digit
arithmetic, rounded once to double): the normals' tables cannot drift from their definition."""
import os
import subprocess

from conftest import ROOT


def test_ziggurat_tables_are_the_generated_ones():
    res = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "ziggurat-tables"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
