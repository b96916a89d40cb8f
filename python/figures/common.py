"""Shared pieces of the figure scripts: running headspec, reading its CSV, saving figures."""
import concurrent.futures
import hashlib
import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time


import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The tables and drawing helpers are headspec.plot's (make_figure.py finds the built module).
from headspec.plot import HEAD_COLOURS, directions, heads, read_csv, select_run  # noqa: E402,F401

# The `headspec` children running now, so that a signal to the driver reaches them too
# (docs/cli.md "Signals"): `headspec figure` forwards SIGINT/SIGTERM/SIGHUP to this driver,
# which forwards them to its children, waits for them and exits with 128 + the signal.
_children = set()
_children_lock = threading.RLock()  # re-entered by the handler, which runs in the main thread
_stopping = threading.Event()


def run_child(cmd, **kwargs):
    """subprocess.run for a `headspec` child, known to the signal handler while it runs."""
    with _children_lock:
        if _stopping.is_set():
            raise SystemExit(130)
        proc = subprocess.Popen(cmd, **kwargs)
        _children.add(proc)
    try:
        out, err = proc.communicate()
    finally:
        with _children_lock:
            _children.discard(proc)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def forward_signals():
    """Installs handlers that send SIGINT, SIGTERM and SIGHUP on to the running children,
    start no new one, and end the driver with status 128 + the signal."""
    def stop(sig, frame):
        _stopping.set()
        with _children_lock:
            for proc in _children:
                proc.send_signal(sig)
        raise SystemExit(128 + sig)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, stop)


def is_regular_file(path):
    """Whether path is a regular file, not following a last symbolic link (a FIFO, device or
    folder is none: reading one could block, docs/cli.md "Output files")."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def check_replaceable(path):
    """Refuses (status 2, one line) a figure output whose name is taken by a folder, FIFO,
    device or socket: the driver writes only regular files (a symbolic link's own entry is
    replaced, never the file it points to)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        sys.stderr.write(f"headspec: error: --out-dir: '{path}' is not a regular file: the figure is not written\n")
        raise SystemExit(2)


def make_out_dir(out_dir):
    """Makes --out-dir, or refuses it (status 2, one line): '' or a path under a file."""
    if not out_dir:
        sys.stderr.write("headspec: error: --out-dir: an empty value (leave the flag out for figures/)\n")
        raise SystemExit(2)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        sys.stderr.write(f"headspec: error: --out-dir: cannot make the folder '{out_dir}': {e.strerror}\n")
        raise SystemExit(2)


def write_whole(path, data):
    """Writes data (bytes) to path whole: into a new temporary file beside it (created
    exclusively, so no link or FIFO planted under some name is followed), with the mode the
    umask gives, then renamed over path. The rename replaces a symbolic link itself, not the
    file it points to, so nothing outside the output folder is written."""
    check_replaceable(path)
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def figure_bytes(fig, fmt, **kwargs):
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


class Figure:
    """One figure's run: where its files go, which binary computes, and what was run."""

    def __init__(self, number, binary, out_dir, quick, lr_schedule="", mc_method="", mc_seed=None):
        self.number = number
        # `figure N --mc-method M`: every theory, linearise and theory-sweep command takes it
        self.mc_method = mc_method
        # `figure N --mc-seed S`: every command's Monte Carlo samples are those of seed S (with_monte_carlo)
        self.mc_seed = mc_seed
        # `figure 4 --lr-schedule S`: the runs take the schedule, the files are named fig4_<S>.*
        self.lr_schedule = lr_schedule
        self.name = f"fig{number}" + (("_" + re.sub(r"[^A-Za-z0-9.]+", "_", lr_schedule)) if lr_schedule else "")
        self.binary = binary
        self.out_dir = out_dir
        self.quick = quick
        self.commands = []
        self.reused = []
        self.parameters = {}
        self.sde_runs = 0  # figures 1, 9, 10: runs of the stochastic theory for its band (`figure --sde-runs`)
        self.started = time.time()
        make_out_dir(out_dir)
        for suffix in (".png", ".svg", ".json"):  # before any work (docs/cli.md "Output files")
            check_replaceable(self.path(suffix))

    def path(self, suffix):
        return os.path.join(self.out_dir, f"{self.name}{suffix}")

    def run(self, *args):
        """Runs `headspec ARGS`; its CSV is written with --out. Returns the parsed table."""
        args = self.with_monte_carlo([str(a) for a in args])
        out = args[args.index("--out") + 1]
        cmd = [self.binary] + args
        self.commands.append(" ".join(["headspec"] + args))
        if self.reusable(args):
            return read_csv(out)
        res = run_child(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if res.returncode not in (0, 3):
            sys.stderr.write(res.stderr)
            raise SystemExit(f"figure {self.number}: headspec {' '.join(args)} failed with status {res.returncode}")
        if res.returncode == 3:
            sys.stderr.write(res.stderr)
        return read_csv(out)

    def reusable(self, args):
        """With HEADSPEC_FIGURE_REUSE=1 in the environment, a command whose CSV is already in
        the output folder with a sidecar recording exactly these arguments is not run again
        (to resume an interrupted full-size run or redraw one). Off by default."""
        if os.environ.get("HEADSPEC_FIGURE_REUSE") != "1":
            return False
        out = args[args.index("--out") + 1]
        if not (is_regular_file(out) and is_regular_file(out + ".json")):
            return False  # a FIFO would block the read; a link may name any file
        try:
            with open(out + ".json") as f:
                side = json.load(f)
            # The sidecar names the CSV it belongs to by its SHA-256 (docs/cli.md "Output
            # files"): a CSV of another run (two writers, an interrupted rewrite) is not reused.
            with open(out, "rb") as f:
                same = side["argv"][1:] == args and side["sha256"]["csv"] == hashlib.sha256(f.read()).hexdigest()
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if same:
            self.reused.append(out)
        return same

    def bayes(self, *args):
        """Runs `headspec bayes ARGS` and returns its JSON (ε_Bayes and its standard error)."""
        return self.printed_json("bayes", *args)

    def printed_json(self, *args):
        """Runs `headspec ARGS` (with the figure's Monte Carlo flags) for the one JSON document it
        prints, e.g. `bayes` or `linearise`, and returns it parsed."""
        args = self.with_monte_carlo([str(a) for a in args])
        self.commands.append(" ".join(["headspec"] + args))
        res = run_child([self.binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if res.returncode != 0:
            sys.stderr.write(res.stderr)
            raise SystemExit(f"figure {self.number}: headspec {' '.join(args)} failed with status {res.returncode}")
        return json.loads(res.stdout)

    def run_all(self, commands, jobs=2):
        """Runs many `headspec` commands (lists of arguments, each with --out), `jobs` at a
        time and each on one thread: independent runs share the cores better than one run's
        per-evaluation thread team on a loaded machine, and the numbers do not depend on the
        thread count. Fewer than 2·jobs commands to run go one after another with every thread
        instead: a few commands of unequal length, one thread each, would leave cores idle while
        the longest finishes (Fig. 8's laplace half went on alone, on one of the two cores, long after
        its sobol half had finished). Returns their tables in the order given (commands recorded in that order)."""
        commands = [self.with_monte_carlo([str(a) for a in args]) for args in commands]
        todo = [args for args in commands if not self.reusable(args)]
        env = dict(os.environ)
        if len(todo) >= 2 * jobs:
            env["OMP_NUM_THREADS"] = "1"
        else:
            jobs = 1

        def one(args):
            return run_child([self.binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, env=env)

        self.commands.extend(" ".join(["headspec"] + args) for args in commands)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            finished = list(pool.map(one, todo))
        for args, res in zip(todo, finished):
            if res.stderr:
                sys.stderr.write(res.stderr)
            if res.returncode not in (0, 3):
                raise SystemExit(f"figure {self.number}: headspec {' '.join(args)} failed with status "
                                 f"{res.returncode}")
        return [read_csv(args[args.index("--out") + 1]) for args in commands]

    def with_monte_carlo(self, args):
        """args with the figure's Monte Carlo flags. `--mc-method M` goes to the commands that take
        it (theory, linearise, sweep --engine theory; without it they run their default, auto: laplace
        where it applies, sobol otherwise).
        `--mc-seed S` sets the seed of the samples: --mc-seed S of theory (ODE and --sde) and of
        sweep --engine theory or sde, in place of the one the figure gave (so with --runs every run
        shares sample set S, as theory --mc-seed means), and --seed S of linearise, whose --seed is
        its Monte Carlo seed; the initial states keep the figure's seeds."""
        engine = args[args.index("--engine") + 1] if args[0] == "sweep" and "--engine" in args else ""
        if self.mc_method and (args[0] in ("theory", "linearise") or engine == "theory"):
            args = args + ["--mc-method", self.mc_method]
        if self.mc_seed is not None:
            flag = "--seed" if args[0] == "linearise" else "--mc-seed"
            if args[0] in ("theory", "linearise") or engine in ("theory", "sde"):
                args = replace_flag(args, flag, str(self.mc_seed))
        return args

    def write_table(self, suffix, columns, rows):
        """The figure's own derived table (e.g. one value per point and run), written whole:
        DIR/figN{suffix}, a CSV with a header line; not one of `headspec`'s outputs."""
        path = self.path(suffix)
        lines = [",".join(columns)] + [",".join(f"{v:.10g}" if isinstance(v, float) else str(v) for v in r) for r in rows]
        write_whole(path, ("\n".join(lines) + "\n").encode())
        return path

    def save(self, fig, columns_note=""):
        png, svg = figure_bytes(fig, "png", dpi=130, bbox_inches="tight"), figure_bytes(fig, "svg", bbox_inches="tight")
        plt.close(fig)
        write_whole(self.path(".png"), png)
        write_whole(self.path(".svg"), svg)
        meta = {
            "figure": self.number,
            "quick": self.quick,
            "lr_schedule": self.lr_schedule or "constant",
            "mc_method": self.mc_method or "default",
            "mc_seed": self.mc_seed if self.mc_seed is not None else "default",
            "parameters": self.parameters,
            "commands": self.commands,
            "reused_outputs": self.reused,
            "seconds": round(time.time() - self.started, 1),
        }
        write_whole(self.path(".json"), json.dumps(meta, indent=2).encode())


def replace_flag(args, flag, value):
    """args with `flag value` in place of the flag's value when present, else at the end."""
    if flag in args:
        i = args.index(flag)
        return args[: i + 1] + [value] + args[i + 2:]
    return args + [flag, value]


def method_and_samples(settings):
    """(method, N) with which a theory or linearise command took its expectations (docs/model.md
    §6, docs/theory.md §2), from the settings it records (a CSV sidecar's "theory", linearise's
    "settings"); N is None for laplace (quadrature, no samples)."""
    used = settings.get("mc_method_used", settings.get("mc_method", "plain"))
    return (used, None) if used == "laplace" else (used, settings.get("mc_samples_used") or settings.get("mc"))


def theory_settings_of_csv(path):
    """The "theory" settings of the run that wrote the CSV at path (its sidecar PATH.json)."""
    with open(str(path) + ".json") as f:
        return json.load(f).get("theory", {})


def expectations_of(settings):
    """method_and_samples as a title's text: "laplace" or "<method> N = <samples>"."""
    used, n = method_and_samples(settings)
    return used if n is None else f"{used} N = {n}"


def expectations_of_csv(path):
    """expectations_of for the theory run that wrote the CSV at path."""
    return expectations_of(theory_settings_of_csv(path))


def expectations_by_panel(panels):
    """One text for a title from (panel name, expectations_of) pairs: the method if every panel
    took the same, else each method with its panels, e.g. "laplace (H = 2); sobol N = 20480 (H = 4)".
    Under the default method auto a figure's panels may differ (laplace for softmax and softmax-1
    with H ≤ 2, sobol otherwise), so titles name the method per panel instead of one N."""
    groups = {}
    for name, label in panels:
        names = groups.setdefault(label, [])
        if name not in names:
            names.append(name)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{label} ({', '.join(names)})" for label, names in groups.items())


def with_size_overrides(sizes):
    """sizes with N ("mc") and the number of runs ("runs") replaced by HEADSPEC_FIGURE_MC and
    HEADSPEC_FIGURE_RUNS when set (the N-doubling checks of docs/results.md: run k keeps its
    initialisation, so a smaller number of runs is the first runs of the full size)."""
    for key, var in (("mc", "HEADSPEC_FIGURE_MC"), ("runs", "HEADSPEC_FIGURE_RUNS")):
        if os.environ.get(var):
            sizes[key] = int(os.environ[var])
    return sizes


def simulation_test_samples(quick):
    """Test samples of the simulation in Fig. 1, 9, 10. `simulate` reuses one test set at every
    record, so its error curve is offset as a whole by that set's error: ~0.05 with the default
    2000 (Fig. 9), 0.01 with 2·10^4 (Fig. 9 at t = 20: 0.571 against 0.5608 with 2·10^5), and
    with 2·10^5 still 0.010 (4 of its standard errors) at the end of Fig. 10's Bayes-softmax
    run (0.489 against 0.4992 with 2·10^6, docs/figures.md), so 10^6 at full size (s.e. 0.001)."""
    return 20000 if quick else 1000000


def simulation_engine():
    """The SGD engine of the figures that set theory against simulation (Fig. 1, 9, 10): `gram`
    (exact in distribution, docs/model.md §9), or `dense` with HEADSPEC_FIGURE_ENGINE=dense."""
    engine = os.environ.get("HEADSPEC_FIGURE_ENGINE", "gram")
    if engine not in ("gram", "dense"):
        sys.stderr.write(f"headspec: error: figure: HEADSPEC_FIGURE_ENGINE must be gram or dense, got '{engine}'\n")
        raise SystemExit(2)  # bad input (docs/cli.md), before anything is run or written
    return engine
