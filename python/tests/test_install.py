"""The package installs with pip, offline, into a fresh venv (README "Python"), and the
installed copy is what `import headspec` finds from any folder."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT


def test_pip_installs_into_a_fresh_venv_and_imports_from_elsewhere(tmp_path):
    if subprocess.run([sys.executable, "-c", "import ensurepip, setuptools, wheel"], capture_output=True).returncode:
        pytest.skip("needs Debian's python3-venv, python3-setuptools and python3-wheel (scripts/setup)")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # The compiled core from the tree the tests run on (setup.py: HEADSPEC_CMAKE_BUILD_DIR),
    # so the install only packages it; everything else is pip's own work, with no index.
    env["HEADSPEC_CMAKE_BUILD_DIR"] = os.path.join(ROOT, "build")
    env["PIP_NO_INDEX"] = "1"
    install = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-input", "-q", ROOT],
                             capture_output=True, text=True, env=env)
    assert install.returncode == 0, install.stdout + install.stderr
    probe = ("import headspec, os; print(os.path.dirname(headspec.__file__)); print(headspec._core.__file__); "
             "r = headspec.simulate(engine='gram', D=100, L=3, T=0.2, record_every=0.1, test_samples=50); "
             "print(r.M.shape, headspec.__version__)")
    run = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    package, core, last = run.stdout.splitlines()
    site = str(venv / "lib")
    assert package.startswith(site), package
    assert core.startswith(site), core
    assert last.split(") ")[0] == "(1, 3, 2, 2"
    import headspec
    assert last.split(") ")[1] == headspec.__version__
