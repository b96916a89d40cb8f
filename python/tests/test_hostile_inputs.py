"""Hostile and careless command lines (docs/cli.md "Output files", "Input files", "Numbers",
"Signals"): each case asserts the exit status, one line on stderr naming the flag, and that
nothing in the folder but the run's own outputs was created, changed or removed. Devices
and FIFOs are made in the test's temporary folder, never taken from /dev."""
import hashlib
import json
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import time

import pytest

import headspec
from conftest import BINARY, ROOT

GRAM = ["simulate", "--engine", "gram", "--D", "100", "--T", "0.2", "--record-every", "0.1"]


def gram(D="100", T="0.2"):
    return ["simulate", "--engine", "gram", "--D", D, "--T", T, "--record-every", "0.1"]
MIXTURE = "0.25 1 0\n0.25 -1 0\n0.25 0 1\n0.25 0 -1\n"  # sign-symmetric: linearise takes it


def snapshot(folder):
    """Every entry under folder: its kind, and for regular files their bytes' SHA-256."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            key = os.path.relpath(path, folder)
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    out[key] = "file " + hashlib.sha256(f.read()).hexdigest()
            else:
                out[key] = f"mode {stat.S_IFMT(st.st_mode):o} rdev {st.st_rdev}"
    return out


def run(args, cwd, timeout=60, **kwargs):
    return subprocess.run([BINARY, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, **kwargs)


def prepare(folder):
    """The inputs every case may name: a mixture file, a regular text file, a FIFO and a
    folder; a character device where the system lets the test make one."""
    (folder / "a.txt").write_text(MIXTURE)
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "wd").mkdir()
    os.mkfifo(folder / "fifo")
    try:
        os.mknod(folder / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pass


REFUSED = [
    # (case, arguments, the flag the message must name)
    ("out_onto_fifo", GRAM + ["--out", "fifo"], "--out"),
    ("out_onto_folder", GRAM + ["--out", "wd"], "--out"),
    ("out_is_the_mixture", GRAM + ["--prior", "mixture:a.txt", "--nu", "1,1", "--out", "a.txt"], "--out"),
    ("checkpoint_is_the_mixture", GRAM + ["--prior", "mixture:a.txt", "--nu", "1,1", "--checkpoint", "a.txt"],
     "--checkpoint"),
    ("checkpoint_is_the_out", GRAM + ["--out", "o.csv", "--checkpoint", "o.csv"], "--out"),
    ("checkpoint_is_the_sidecar", GRAM + ["--out", "o.csv", "--checkpoint", "o.csv.json"], "--out (its sidecar)"),
    ("resume_from_fifo", GRAM + ["--resume", "fifo"], "--resume"),
    ("resume_is_the_out", GRAM + ["--out", "notes.txt", "--resume", "notes.txt", "--checkpoint", "c.ckpt"],
     "--resume"),
    ("mixture_from_fifo", GRAM + ["--prior", "mixture:fifo", "--nu", "1,1"], "--prior"),
    ("mixture_is_a_folder", GRAM + ["--prior", "mixture:wd", "--nu", "1,1"], "--prior"),
    ("summary_is_the_out", ["sweep", "--engine", "gram", "--grid", "H=1:2", "--D", "100", "--T", "0.2",
                            "--out", "o.csv", "--summary", "o.csv"], "--out"),
    ("summary_is_the_sidecar", ["sweep", "--engine", "gram", "--grid", "H=1:2", "--D", "100", "--T", "0.2",
                                "--out", "o.csv", "--summary", "o.csv.json"], "--out (its sidecar)"),
    ("out_is_the_work_dir", ["sweep", "--engine", "gram", "--grid", "H=1:2", "--D", "100", "--T", "0.2",
                             "--out", "wd2", "--work-dir", "wd2"], "--out"),
    ("tau_is_the_out", ["mnist", "--T", "0.1", "--out", "o.csv", "--tau", "o.csv"], "--out"),
    ("keys_is_the_sidecar", ["mnist", "--T", "0.1", "--out", "o.csv", "--keys", "o.csv.json"], "--out (its sidecar)"),
    ("linearise_out_onto_fifo", ["linearise", "--out", "fifo"], "--out"),
    ("out_dash_for_summary", ["sweep", "--engine", "gram", "--grid", "H=1:2", "--D", "100", "--T", "0.2",
                              "--summary", "-"], "--summary"),
    ("figure_out_dir_is_a_file", ["figure", "1", "--quick", "--out-dir", "notes.txt"], "--out-dir"),
    ("figure_out_dir_empty", ["figure", "1", "--quick", "--out-dir", ""], "--out-dir"),
    ("figure_out_dir_under_a_file", ["figure", "1", "--quick", "--out-dir", "notes.txt/sub"], "--out-dir"),
    ("checkpoint_every_negative", GRAM + ["--checkpoint", "c.ckpt", "--checkpoint-every", "-1"], ">= 0"),
    # What would fail only once the run is done (docs/cli.md "Output files"): a name that is not
    # UTF-8 (the sidecar records it as JSON), a name too long for its temporary or sidecar.
    ("out_not_utf8", GRAM + ["--out", os.fsdecode(b"a\xff.csv")], "--out"),
    ("out_not_utf8_with_equals", GRAM + ["--out=" + os.fsdecode(b"a\xff.csv")], "--out"),
    ("checkpoint_not_utf8", GRAM + ["--checkpoint", os.fsdecode(b"c\xff.ckpt")], "--checkpoint"),
    ("mixture_name_not_utf8", GRAM + ["--prior", "mixture:" + os.fsdecode(b"a\xfe.txt"), "--nu", "1,1"], "--prior"),
    ("out_name_too_long", GRAM + ["--out", "x" * 236 + ".csv"], "--out"),
    ("checkpoint_name_too_long", GRAM + ["--checkpoint", "c" * 240], "--checkpoint"),
    # Numbers (docs/cli.md "Numbers")
    ("empty_T", GRAM + ["--T", ""], "--T"),
    ("empty_seed", GRAM + ["--seed", ""], "--seed"),
    ("empty_noise", GRAM + ["--noise", ""], "--noise"),
    ("blank_nu_item", GRAM + ["--nu", " "], "--nu"),
    ("empty_nu_item", GRAM + ["--nu", "2,,2"], "--nu"),
    ("hex_D", GRAM + ["--D", "0x100"], "--D"),
    ("inf_T", GRAM + ["--T", "inf"], "--T"),
    ("nan_lr", GRAM + ["--lr", "nan"], "--lr"),
    ("two_numbers", GRAM + ["--lr", "1 2"], "--lr"),
    ("fraction_for_H", GRAM + ["--H", "1.5"], "--H"),
    ("seed_past_int64", GRAM + ["--seed", "99999999999999999999"], "--seed"),
    ("lr_past_double", GRAM + ["--lr", "1e400"], "--lr"),
    ("figure_number_past_15", ["figure", "016"], "N"),
    ("sweep_grid_hex", ["sweep", "--engine", "gram", "--grid", "H=0x2", "--D", "100", "--T", "0.2"], "--grid"),
    ("sweep_grid_empty_item", ["sweep", "--engine", "gram", "--grid", "H=1,,2", "--D", "100", "--T", "0.2"],
     "--grid"),
]


@pytest.mark.parametrize("case,args,flag", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_with_status_2_naming_the_flag_and_nothing_touched(tmp_path, case, args, flag):
    prepare(tmp_path)
    before = snapshot(tmp_path)
    res = run(args, tmp_path, timeout=30)  # a FIFO opened for reading must not block
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("headspec: error: "), res.stderr
    assert flag in res.stderr, res.stderr
    assert snapshot(tmp_path) == before


# Every output flag of every subcommand against every kind of file a run reads (docs/cli.md
# "Output files"): a mixture file, a schedule's table, a grid value's file, the MNIST digits.
SCHEDULE = "0 1\n10 0.5\n"
MIXTURE_FLAGS = ["--prior", "mixture:{}", "--nu", "1,1"]
SCHEDULE_FLAGS = ["--lr-schedule", "table:{}"]
THEORY = ["theory", "--mc-method", "sobol", "--mc", "100", "--T", "0.2", "--init-D", "100"]
SWEEP = ["sweep", "--engine", "gram", "--D", "100", "--T", "0.2"]  # --grid H=1:2 unless the input is a grid's
MNIST = ["mnist", "--T", "0.1", "--data", "digits"]
OUTPUT_FLAGS = {"simulate": (GRAM, ["--out", "--checkpoint"]), "theory": (THEORY, ["--out", "--checkpoint"]),
                "sweep": (SWEEP, ["--out", "--summary"]), "linearise": (["linearise", "--T-max", "1"], ["--out"]),
                "mnist": (MNIST, ["--out", "--keys", "--tau", "--checkpoint"])}
# (input, the flags that make the run read it, the subcommands that take them, the file)
INPUT_KINDS = [("mixture", MIXTURE_FLAGS, ["simulate", "theory", "sweep", "linearise"], "a.txt"),
               ("schedule", SCHEDULE_FLAGS, ["simulate", "theory", "sweep", "mnist"], "tab.txt"),
               ("grid_schedule", ["--grid", "lr_schedule=table:{}|constant"], ["sweep"], "tab.txt"),
               ("grid_mixture", ["--nu", "1,1", "--grid", "prior=mixture:{}|flip"], ["sweep"], "a.txt"),
               ("digit_file", [], ["mnist"], "digits/src/digits/3.json"),
               ("digit_cache", [], ["mnist"], "digits/digits.cache")]
SPELLINGS = {"direct": "{}", "symlink": "link", "dotdot": "sub/../{}"}
OVERLAPS = [(f"{command}_{flag[2:]}_{kind}_{how}", command, flag, kind, how)
            for kind, _, commands, _ in INPUT_KINDS for command in commands
            for flag in OUTPUT_FLAGS[command][1] for how in SPELLINGS]


@pytest.mark.parametrize("case,command,flag,kind,how", OVERLAPS, ids=[c[0] for c in OVERLAPS])
def test_no_output_flag_replaces_an_input(tmp_path, case, command, flag, kind, how):
    """Named directly, through a symbolic link or through '..': status 2, one line naming the
    output flag, and every file as it was (the digits' checks come before they are read)."""
    (tmp_path / "a.txt").write_text(MIXTURE)
    (tmp_path / "tab.txt").write_text(SCHEDULE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "digits" / "src" / "digits").mkdir(parents=True)
    for k in range(10):
        (tmp_path / "digits" / "src" / "digits" / f"{k}.json").write_text('{"data": []}')
    (tmp_path / "digits" / "digits.cache").write_bytes(b"not a cache")
    _, reads, _, name = next(k for k in INPUT_KINDS if k[0] == kind)
    os.symlink(name, tmp_path / "link")
    base, _ = OUTPUT_FLAGS[command]
    args = base + [a.format(name) for a in reads] + [flag, SPELLINGS[how].format(name)]
    if command == "sweep" and "--grid" not in reads:
        args += ["--grid", "H=1:2"]
    if flag != "--out" and command != "linearise":
        args += ["--out", "o.csv"]
    before = snapshot(tmp_path)
    res = run(args, tmp_path, timeout=30)
    assert res.returncode == 2, (args, res.stderr)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"headspec: error: {flag}: "), (args, res.stderr)
    assert "never replaces an input" in res.stderr, res.stderr
    assert snapshot(tmp_path) == before


def test_a_device_is_never_replaced(tmp_path):
    prepare(tmp_path)
    if not (tmp_path / "null").exists():
        pytest.skip("this system does not let the test make a character device")
    before = snapshot(tmp_path)
    for out in ["null", "link"]:
        if out == "link":
            os.symlink("null", tmp_path / "link")
            before = snapshot(tmp_path)
        res = run(GRAM + ["--out", out], tmp_path)
        assert res.returncode == 2 and "--out" in res.stderr and res.stderr.count("\n") == 1, res.stderr
        assert stat.S_ISCHR(os.stat(tmp_path / "null").st_mode)
        assert snapshot(tmp_path) == before


def test_leading_zeros_are_decimal(tmp_path):
    res = run(gram(D="1e3") + ["--H", "010", "--out", "o.csv"], tmp_path)
    assert res.returncode == 0, res.stderr
    side = json.loads((tmp_path / "o.csv.json").read_text())
    assert side["model"]["H"] == 10 and side["simulation"]["D"] == 1000


def test_dash_writes_to_standard_output(tmp_path):
    res = run(GRAM + ["--out", "-"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("run,t,loss,")
    assert os.listdir(tmp_path) == []


def test_a_checkpoint_flag_never_deletes_a_file_that_is_not_a_checkpoint_of_this_run(tmp_path):
    prepare(tmp_path)
    before = snapshot(tmp_path)
    res = run(GRAM + ["--out", "o.csv", "--checkpoint", "notes.txt"], tmp_path)
    assert res.returncode == 0, res.stderr
    after = snapshot(tmp_path)
    assert after["notes.txt"] == before["notes.txt"]
    assert set(after) - set(before) == {"o.csv", "o.csv.json"}


def test_a_checkpoint_written_by_the_run_is_removed_once_spent(tmp_path):
    res = run(gram(T="2") + ["--out", "o.csv", "--checkpoint", "c.ckpt", "--checkpoint-every", "0.5"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert sorted(os.listdir(tmp_path)) == ["o.csv", "o.csv.json"]


def test_the_longest_name_runs_end_to_end_with_a_checkpoint_and_a_resume(tmp_path):
    """230 bytes, the longest --out and --checkpoint names whose temporary and sidecar names fit
    a 255-byte folder entry: interrupted, resumed, the very bytes of an uninterrupted run."""
    out, ckpt = "o" * 226 + ".csv", "c" * 225 + ".ckpt"
    args = ["simulate", "--engine", "gram", "--D", "4000", "--L", "4", "--T", "900", "--record-every", "6",
            "--test-samples", "200"]
    assert run(args + ["--out", "plain.csv"], tmp_path).returncode == 0
    p = subprocess.Popen([BINARY, *args, "--out", out, "--checkpoint", ckpt, "--checkpoint-every", "30"], cwd=tmp_path,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not (tmp_path / ckpt).exists() and p.poll() is None:
        time.sleep(0.001)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 130, err
    res = run(args + ["--out", out, "--resume", ckpt], tmp_path, timeout=600)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / out).read_bytes() == (tmp_path / "plain.csv").read_bytes()
    assert sidecar_matches(tmp_path, out) and not (tmp_path / ckpt).exists()


def sidecar_matches(folder, name="o.csv"):
    side = json.loads((folder / (name + ".json")).read_text())
    return side["sha256"]["csv"] == hashlib.sha256((folder / name).read_bytes()).hexdigest()


def limit_file_size(n):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return apply


def test_a_failed_write_leaves_the_previous_pair_whole(tmp_path):
    """Fault injection: a file-size limit makes the CSV's write fail after the sidecar's would
    have fitted. The previous CSV and sidecar stay, matching each other, and no temporary
    file is left."""
    assert run(GRAM + ["--out", "o.csv"], tmp_path).returncode == 0
    before = snapshot(tmp_path)
    big = gram(T="40") + ["--out", "o.csv"]
    res = run(big, tmp_path, preexec_fn=limit_file_size(8192))
    assert res.returncode == 1, res.stderr
    assert "o.csv" in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert snapshot(tmp_path) == before
    assert sidecar_matches(tmp_path)
    # Without the limit the new pair replaces the old one, and matches.
    assert run(big, tmp_path).returncode == 0
    assert sidecar_matches(tmp_path) and snapshot(tmp_path) != before


def test_a_failed_write_to_standard_output_is_an_error(tmp_path):
    with open(tmp_path / "stdout", "w") as sink:
        res = subprocess.run([BINARY] + gram(T="40"), stdout=sink,
                             stderr=subprocess.PIPE, text=True, preexec_fn=limit_file_size(4096), cwd=tmp_path)
    assert res.returncode != 0
    assert "standard output" in res.stderr and res.stderr.count("\n") == 1, res.stderr


def test_temporary_files_of_a_killed_run_are_removed_by_the_next_write(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".o.csv.tmp.{dead.pid}.AbCdEf"
    stale.write_text("half a CSV")
    mine = tmp_path / f".o.csv.tmp.{os.getpid()}.AbCdEf"  # a live process's: kept
    mine.write_text("in progress")
    assert run(GRAM + ["--out", "o.csv"], tmp_path).returncode == 0
    assert not stale.exists() and mine.exists()


def test_sigterm_leaves_no_temporary_file(tmp_path):
    """A run stopped by SIGTERM while it writes: at whatever moment, nothing but whole files."""
    args = ["sweep", "--engine", "gram", "--grid", "H=1:2;L=4,6", "--D", "2000", "--T", "4", "--runs", "4",
            "--record-every", "0.05", "--out", "o.csv", "--work-dir", "wd"]
    for delay in (0.05, 0.2, 0.5):
        p = subprocess.Popen([BINARY, *args], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
        leftovers = [n for _, _, files in os.walk(tmp_path) for n in files if ".tmp." in n]
        assert leftovers == [], leftovers


def test_figure_stops_its_driver_and_children_on_sigterm(tmp_path):
    p = subprocess.Popen([BINARY, "figure", "6", "--out-dir", str(tmp_path / "f")], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(6)  # the driver has started its headspec children by now
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=60) == 128 + signal.SIGTERM
    # No process that figure started (the driver, its children) is left running: each was sent
    # the signal and is waited for (a child ends within one step, well under 10 s).
    for _ in range(100):
        left = subprocess.run(["ps", "-o", "pid=,args=", "-s", str(p.pid)], capture_output=True, text=True).stdout
        if not left.strip():
            break
        time.sleep(0.1)
    assert left.strip() == "", left


def test_the_figure_driver_writes_no_file_through_a_link_and_opens_no_fifo(tmp_path):
    """Links named like the figure's own files (fig2.png, .svg, .json) pointing outside the
    folder: the driver replaces the links and leaves the files they point to as they were. A
    FIFO named like a figure file is refused before any work (status 2, one line); one named
    like a sidecar the reuse rule would read is not opened (the command refuses it)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "figs"
    out.mkdir()
    for suffix in (".png", ".svg", ".json"):
        (outside / f"mine{suffix}").write_text("mine")
        os.symlink(outside / f"mine{suffix}", out / f"fig2{suffix}")
    quick2 = [BINARY, "figure", "2", "--quick", "--mc-method", "sobol", "--out-dir"]
    res = subprocess.run(quick2 + [str(out)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    for suffix in (".png", ".svg", ".json"):
        assert (outside / f"mine{suffix}").read_text() == "mine"
        assert stat.S_ISREG(os.lstat(out / f"fig2{suffix}").st_mode)
    assert (out / "fig2.png").read_bytes()[:4] == b"\x89PNG"
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]

    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "fig2.svg")
    res = subprocess.run(quick2 + [str(fifo_dir)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "fig2.svg" in res.stderr, res.stderr
    assert sorted(os.listdir(fifo_dir)) == ["fig2.svg"]

    reuse_dir = tmp_path / "reuse"
    reuse_dir.mkdir()
    (reuse_dir / "fig2_flip.csv").write_text("run,t\n")
    os.mkfifo(reuse_dir / "fig2_flip.csv.json")
    env = dict(os.environ, HEADSPEC_FIGURE_REUSE="1")
    res = subprocess.run(quick2 + [str(reuse_dir)], capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode != 0 and "fig2_flip.csv.json" in res.stderr, res.stderr
    assert stat.S_ISFIFO(os.lstat(reuse_dir / "fig2_flip.csv.json").st_mode)


@pytest.mark.parametrize("kind", ["fifo", "folder", "link_to_fifo"])
def test_a_task_file_that_is_not_a_file_is_refused_up_front(tmp_path, kind):
    """A task file of the work folder replaced by a FIFO, a folder or a link to a FIFO could be
    neither read nor replaced (the sweep used to compute everything and end without its CSV,
    on every rerun): status 2 naming --work-dir before any work, the folder as it was."""
    args = ["sweep", "--engine", "gram", "--D", "100", "--T", "0.5", "--grid", "H=1:2", "--work-dir", "wd"]
    assert run(args + ["--out", "first.csv"], tmp_path).returncode == 0
    task = sorted((tmp_path / "wd").iterdir())[0]
    task.unlink()
    if kind == "fifo":
        os.mkfifo(task)
    elif kind == "folder":
        task.mkdir()
    else:
        os.mkfifo(tmp_path / "fifo")
        os.symlink(tmp_path / "fifo", task)
    before = snapshot(tmp_path)
    res = run(args + ["--out", "o.csv"], tmp_path, timeout=30)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("headspec: error: --work-dir: ") and task.name in res.stderr, res.stderr
    assert snapshot(tmp_path) == before


def test_a_damaged_sweep_task_file_is_computed_again(tmp_path):
    args = ["sweep", "--engine", "gram", "--grid", "H=1:2", "--D", "100", "--T", "0.5", "--runs", "2",
            "--out", "o.csv", "--work-dir", "wd"]
    assert run(args, tmp_path).returncode == 0
    first = (tmp_path / "o.csv").read_bytes()
    task = sorted((tmp_path / "wd").iterdir())[0]
    data = bytearray(task.read_bytes())
    data[-10] ^= 0x01
    task.write_bytes(bytes(data))
    res = run(args, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "SHA-256" in res.stderr and "computing it again" in res.stderr
    assert (tmp_path / "o.csv").read_bytes() == first


PYTHON_REFUSED = [
    ("H_true", dict(H=True), "H"),
    ("runs_false", dict(runs=False), "runs"),
    ("D_fraction", dict(D=100.5), "D"),
    ("D_text", dict(D="100"), "D"),
    ("lr_true", dict(lr=True), "lr"),
    ("stop_when_specialised_1", dict(stop_when_specialised=1), "stop_when_specialised"),
    ("seed_past_int64", dict(seed=10**20), "seed"),
]


@pytest.mark.parametrize("case,kw,keyword", PYTHON_REFUSED, ids=[c[0] for c in PYTHON_REFUSED])
def test_python_keywords_are_as_strict_as_the_flags(case, kw, keyword):
    with pytest.raises(ValueError) as e:
        headspec.simulate(**{**dict(engine="gram", D=100, T=0.2), **kw})
    assert f"{keyword}=" in str(e.value), str(e.value)


def test_python_takes_exact_floats_and_numpy_integers_for_counts():
    import numpy as np
    a = headspec.simulate(engine="gram", D=1e2, T=0.2, H=np.int64(2))
    b = headspec.simulate(engine="gram", D=100, T=0.2, H=2)
    assert np.array_equal(a["loss"], b["loss"])


def python_child(script, folder):
    """`python -c script` in `folder`, with this test's module path, its output as text pipes."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=folder)


INTERRUPTED_CALLS = [
    ("simulate_dense", "headspec.simulate(engine='dense', D=10000, T=2000, record_every=100)"),
    ("theory", "headspec.theory(mc=20000, T=100000, record_every=1000, dt=0.05)"),
    ("sweep_theory", "headspec.sweep(grid='H=1:2', engine='theory', mc=20000, T=100000, record_every=1000)"),
    ("sweep_gram", "headspec.sweep(grid='H=1:2', engine='gram', D=10000000, T=1000, record_every=100)"),
    ("bayes", "headspec.bayes(samples=2000000000, L=20)"),
    ("bayes_quadrature", "headspec.bayes(method='quadrature', nu=[10000], L=5)"),
    ("linearise", "headspec.linearise(mc=200000, T_max=100000, settle=1e-300)"),
    ("mnist", "headspec.mnist(T=100000, record_every=20, test_samples=100)"),
]
PARTIAL_RESULTS = {"simulate_dense", "theory", "mnist"}
SWEEPS = {"sweep_theory": 2, "sweep_gram": 2}  # a partial Sweep: one summary row per task


@pytest.mark.parametrize("case,call", INTERRUPTED_CALLS, ids=[c[0] for c in INTERRUPTED_CALLS])
def test_ctrl_c_raises_keyboard_interrupt_in_a_long_call(tmp_path, case, call):
    """Each call would run for hours; SIGINT makes it raise KeyboardInterrupt (every driver,
    each task of a sweep too, stops at its next step). The 120 s bound only keeps a
    regression from hanging the suite."""
    if case == "mnist" and not os.path.isdir(os.path.join(ROOT, "data", "mnist")):
        pytest.skip("no data/mnist (scripts/fetch-mnist)")
    script = ("import sys, headspec\n"
              "print('started', flush=True)\n"
              "try:\n"
              f"    {call}\n"
              "except KeyboardInterrupt as stop:\n"
              "    print('KeyboardInterrupt', flush=True)\n"
              "    partial = getattr(stop, 'partial', None)\n"
              "    shape = None if partial is None else getattr(partial, 'M', None)\n"
              "    shape = shape.shape if shape is not None else len(partial.summary['run']) if partial else None\n"
              "    print('partial', shape, flush=True)\n"
              "    sys.exit(7)\n")
    p = python_child(script, tmp_path)
    assert p.stdout.readline().strip() == "started"
    time.sleep(1.5)  # inside the call by now
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 7, (p.returncode, out, err)
    assert "KeyboardInterrupt" in out
    # simulate, theory, mnist and sweep attach what they computed until then (README "Python")
    shape = re.search(r"^partial (.*)$", out, re.M).group(1)
    if case in PARTIAL_RESULTS:
        runs, records = map(int, re.match(r"\((\d+), (\d+), \d+, \d+\)", shape).groups())
        assert runs == 1 and records >= 1, shape
    elif case in SWEEPS:
        assert shape == str(SWEEPS[case]), shape
    else:
        assert shape == "None"


def test_figure_reuse_takes_only_a_csv_its_sidecar_names(tmp_path, monkeypatch):
    """HEADSPEC_FIGURE_REUSE reuses a finished command's CSV only when the sidecar's SHA-256
    of the CSV matches (a CSV of another run beside it is computed again)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "figure_common", os.path.join(os.path.dirname(BINARY), "..", "python", "figures", "common.py"))
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    monkeypatch.setenv("HEADSPEC_FIGURE_REUSE", "1")
    fig = common.Figure(1, BINARY, str(tmp_path), True)
    out = str(tmp_path / "o.csv")
    args = gram() + ["--out", out]
    assert not fig.reusable(args)
    assert run(args, tmp_path).returncode == 0
    assert fig.reusable(args)
    with open(out, "a") as f:
        f.write("0,99,1\n")
    assert not fig.reusable(args)


def test_dopri5_with_a_far_too_large_step_stops_as_diverged(tmp_path):
    """η = 10^4 makes the ODE stiff: dopri5's steps shrink to ~10^-4 and, uncapped, the run
    took over five minutes; the step cap ends it with status 3 and its rows."""
    res = run(["theory", "--integrator", "dopri5", "--lr", "1e4", "--mc-method", "sobol", "--mc", "1000", "--out",
               "o.csv"], tmp_path, timeout=120)
    assert res.returncode == 3, res.stderr
    assert "dopri5" in res.stderr and "--lr" in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert (tmp_path / "o.csv").read_text().count("\n") >= 2  # the header and the record at t = 0


BOUNDED_CALLS = [
    ("simulate_gram", "headspec.simulate(engine='gram', D=1000000, T=100000, record_every=0.5, test_samples=100, "
                      "progress=seen)"),
    ("theory", "headspec.theory(mc=20000, T=100000, record_every=5, dt=0.05, integrator='rk4', mc_method='sobol', "
               "progress=seen)"),
]


@pytest.mark.parametrize("case,call", BOUNDED_CALLS, ids=[c[0] for c in BOUNDED_CALLS])
def test_ctrl_c_stops_within_two_record_intervals(tmp_path, case, call):
    """The child reports the records it has made (progress=; ≥ 0.1 s apart here, so each is
    reported); SIGINT once it has made three; the partial result holds at most two more
    (the record under way when the signal came, and one for the report's lag). The signal
    may land in the callback itself: the KeyboardInterrupt then comes from there, with the
    same partial result."""
    script = ("import sys, headspec\n"
              "def seen(done, total):\n"
              "    print(done, flush=True)\n"
              "try:\n"
              f"    {call}\n"
              "except KeyboardInterrupt as stop:\n"
              "    print('partial', stop.partial.loss.size, flush=True)\n"
              "    sys.exit(7)\n")
    p = python_child(script, tmp_path)
    reported = 0
    while reported < 3:
        line = p.stdout.readline()
        assert line, p.stderr.read()
        reported = int(line)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 7, (p.returncode, out, err)
    lines = out.split()
    made = int(lines[lines.index("partial") + 1])
    assert reported <= made <= reported + 2, (reported, made, out)


def test_a_python_signal_handler_that_raises_stops_a_long_call_with_its_partial_result(tmp_path):
    """signal.setitimer with a SIGALRM handler raising TimeoutError, the usual timeout: the handler
    runs while the call computes (at its next record), not after the whole run, and its exception
    carries the records so far. The run would take hours; the 120 s bound only keeps a
    regression from hanging the suite."""
    script = ("import signal, sys, headspec\n"
              "def timeout(signum, frame):\n"
              "    raise TimeoutError('too long')\n"
              "signal.signal(signal.SIGALRM, timeout)\n"
              "signal.setitimer(signal.ITIMER_REAL, 1.0)\n"
              "try:\n"
              "    headspec.theory(mc=20000, T=100000, record_every=0.5, dt=0.05, mc_method='sobol')\n"
              "except TimeoutError as stop:\n"
              "    print('partial', stop.partial.loss.size, flush=True)\n"
              "    sys.exit(7)\n")
    p = python_child(script, tmp_path)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 7, (p.returncode, out, err)
    made = int(out.split()[-1])
    assert 1 <= made < 100000 / 0.5, out


def test_a_python_signal_handler_that_returns_lets_the_call_finish_unchanged(tmp_path):
    """A handler that only notes the signal (here every 0.1 s) runs during the call — it sees a
    record count strictly between 0 and the total — and the call then finishes with the same
    numbers as without it."""
    script = ("import signal, numpy as np, headspec\n"
              "done, seen = [0], []\n"
              "def progress(n, total):\n"
              "    done[0] = n\n"
              "signal.signal(signal.SIGALRM, lambda signum, frame: seen.append(done[0]))\n"
              "kw = dict(mc=20000, T=20, record_every=0.25, dt=0.05, mc_method='sobol')\n"
              "signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)\n"
              "with_signals = headspec.theory(progress=progress, **kw)\n"
              "signal.setitimer(signal.ITIMER_REAL, 0)\n"
              "total = with_signals.loss.size\n"
              "print('during', any(0 < n < total for n in seen), 'records', total,\n"
              "      'same', np.array_equal(with_signals.loss, headspec.theory(**kw).loss), flush=True)\n")
    p = python_child(script, tmp_path)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, (out, err)
    assert "during True records 81 same True" in out, out
