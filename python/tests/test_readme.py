"""Every example of the README runs as written (from a fresh folder, with build/headspec)."""
import os
import re
import subprocess

from conftest import BINARY, ROOT


def readme_examples():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    section = text.split("## Examples", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_readme_has_examples():
    assert len(readme_examples()) >= 1


def test_every_readme_example_runs(tmp_path):
    for block in readme_examples():
        script = block.replace("build/headspec", BINARY)
        # OpenMPI refuses to start as root unless told it may (CI runs the tests as root).
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                             env=env)
        assert res.returncode == 0, f"README example failed:\n{block}\n{res.stderr}"


def test_readme_python_block_runs_from_another_folder(tmp_path):
    """The README's Python blocks, as written and one after the other, with the module found on PYTHONPATH (as
    scripts/setup's headspec.pth would)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        section = f.read().split("## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2  # the calls, then a plot of their results
    block = "".join(blocks)
    if not os.path.exists(os.path.join(ROOT, "data", "mnist")):
        block = "\n".join(line for line in block.splitlines() if "headspec.mnist(" not in line)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    res = subprocess.run(["/usr/bin/python3", "-c", block], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
