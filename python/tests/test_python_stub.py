"""python/headspec/__init__.pyi is what the built module's parameter table says
(scripts/python-stub writes it), and it agrees with the runtime signatures."""
import ast
import inspect
import os
import subprocess

import headspec
from conftest import ROOT


def test_stub_matches_the_module():
    res = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "python-stub"), "--module-path",
                          os.path.join(ROOT, "build", "python"), "--check"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_stub_declares_the_keywords_of_every_call():
    with open(os.path.join(ROOT, "python", "headspec", "__init__.pyi")) as f:
        tree = ast.parse(f.read())
    declared = {node.name: [a.arg for a in node.args.args + node.args.kwonlyargs]
                for node in tree.body if isinstance(node, ast.FunctionDef)}
    for name in ("simulate", "theory", "bayes", "mnist", "linearise", "sweep"):
        assert declared[name] == list(inspect.signature(getattr(headspec, name)).parameters), name
