"""The tutorial notebooks of examples/ run from top to bottom (nbclient, Debian's
ipykernel), and are committed without outputs."""
import glob
import os

import pytest

from conftest import ROOT

NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "examples", "*.ipynb")))


def test_there_are_tutorials():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs_and_is_committed_without_outputs(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path}: outputs are committed"
    # The kernel inherits the environment: the built module first, figures drawn off-screen.
    monkeypatch.setenv("PYTHONPATH", os.path.join(ROOT, "build", "python"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
