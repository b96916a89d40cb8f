"""Golden outputs: the commands of tests/golden/commands.txt give the bytes recorded in
tests/golden/checksums.txt (same seed, same numbers, across refactors).

Run as a script with --record to write the checksums anew (only in a commit that says
which outputs changed and why)."""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "build", "headspec")
GOLDEN = os.path.join(ROOT, "tests", "golden")
MNIST = os.path.join(ROOT, "data", "mnist")

# Two atoms of one norm in F = 2 (docs/model.md §2: weight θ_1 θ_2).
MIXTURE = "# two atoms\n0.5 1.2 0.4\n0.5 -0.3 1.1\n"
# Sidecar fields that name the build or the folder, not the run's numbers.
VOLATILE = {"git_revision", "version", "argv"}


def commands():
    out = []
    with open(os.path.join(GOLDEN, "commands.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, *args = line.split()
                out.append((name, args))
    return out


def recorded():
    sums = {}
    path = os.path.join(GOLDEN, "checksums.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    name, digest = line.split()
                    sums[name] = digest
    return sums


def canonical(data, folder):
    """The bytes hashed for one output: the run's folder written as <dir> and the
    repository's as <root> (so that any clone gives the same bytes), JSON without
    VOLATILE keys (at any depth)."""
    data = data.replace(folder.encode(), b"<dir>").replace(ROOT.encode(), b"<root>")  # mnist's --data default
    if not data.lstrip().startswith(b"{"):  # CSV; JSON whatever the file's name (linearise --out)
        return data
    try:
        doc = json.loads(data)
    except ValueError:
        return data

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in VOLATILE}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return json.dumps(strip(doc), sort_keys=True).encode()


def run_command(args, folder, threads=None):
    """Runs one golden command in `folder` (with OMP_NUM_THREADS=threads if given); returns
    the SHA-256 over stdout and every file written."""
    mixture = os.path.join(folder, "mixture.txt")
    with open(mixture, "w") as f:
        f.write(MIXTURE)
    subst = {"{mixture}": mixture, "{out}": os.path.join(folder, "out.csv"),
             "{summary}": os.path.join(folder, "summary.csv")}
    argv = [BINARY]
    for a in args:
        for key, value in subst.items():
            a = a.replace(key, value)
        argv.append(a)
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    res = subprocess.run(argv, capture_output=True, cwd=folder, env=env)
    assert res.returncode == 0, res.stderr.decode()
    digest = hashlib.sha256()
    digest.update(b"stdout\0" + canonical(res.stdout, folder))
    for name in sorted(os.listdir(folder)):
        if name == "mixture.txt":
            continue
        with open(os.path.join(folder, name), "rb") as f:
            digest.update(b"\0" + name.encode() + b"\0" + canonical(f.read(), folder))
    return digest.hexdigest()


@pytest.mark.parametrize("threads", [None, 1], ids=["default-threads", "one-thread"])
@pytest.mark.parametrize("name,args", commands(), ids=[c[0] for c in commands()])
def test_golden_output(name, args, threads, tmp_path):
    if args[0] == "mnist" and not os.path.isfile(os.path.join(MNIST, "src", "digits", "9.json")):
        pytest.skip("no data/mnist (scripts/fetch-mnist)")
    sums = recorded()
    assert name in sums, f"no recorded checksum for {name}: run python/tests/test_golden.py --record"
    got = run_command(args, str(tmp_path), threads)
    assert got == sums[name], f"{name} (OMP_NUM_THREADS={threads}): output differs from the recorded bytes"


def record():
    lines = ["# SHA-256 of each golden command's outputs (python/tests/test_golden.py --record)."]
    for name, args in commands():
        with tempfile.TemporaryDirectory() as folder:
            lines.append(f"{name} {run_command(args, folder)}")
            print(lines[-1], flush=True)
    with open(os.path.join(GOLDEN, "checksums.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: test_golden.py --record")
    record()
