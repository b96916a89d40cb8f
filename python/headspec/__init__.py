"""headspec: training dynamics of multi-head softmax attention in the high-dimensional
single-location model.

    import headspec
    run = headspec.simulate(D=2000, T=10, runs=4)      # Trajectories: run.M is (runs, records, H, F)
    ode = headspec.theory(init_D=2000, mc=4000, dt=0.2, T=10)   # the same, from the D → ∞ ODE
    headspec.bayes(prior="gauss", nu=[8, 2], L=4)      # {'mmse': ..., 'stderr': ...}
    digits = headspec.mnist(H=4, T=3, test_samples=200)   # Trajectories, with keys and tau
    lin = headspec.linearise(L=5, mc=20000)            # fixed point, Jacobian, eigenvalues, lambda_plus
    grid = headspec.sweep(grid={"lr": [0.5, 1]}, D=500, T=5, runs=2)   # Sweep: rows, summary

Each function takes exactly the keywords of its subcommand's flags (dashes become
underscores: --init-D is init_D), with the command line's defaults, except the flags that
only say where output goes or how a run resumes (--out, --checkpoint, --resume, ...); the
list of numbers of --nu may be given as text "2,2", a number or a list. Bad input raises
ValueError (headspec.UsageError) naming the keyword; its attributes `parameter`, `flag`
and `reason` say which and why. What the calls return: headspec.results.
"""
import inspect as _inspect

from . import _core
from ._core import UsageError, __version__, git_revision
from .results import Sweep, Trajectories, grid_text

_TYPES = {"int": int, "float": float, "text": str, "flag": bool, "numbers": "str | float | list[float]",
          "float list": "list[float]"}


def _signature(command):
    """The Python signature of a subcommand, from its parameter table (docs/cli.md "Parameters")."""
    table = [p for p in _core.parameters(command) if not p["cli_only"]]
    required = [_inspect.Parameter(p["keyword"], _inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                   annotation=_TYPES[p["type"]]) for p in table if p["required"]]
    optional = [_inspect.Parameter(p["keyword"], _inspect.Parameter.KEYWORD_ONLY, default=p["default"],
                                   annotation=_TYPES[p["type"]]) for p in table if not p["required"]]
    return _inspect.Signature(required + optional), table


_PROGRESS_HELP = ("progress: None, True (a tqdm bar; needs tqdm) or a callable f(done, total) called every "
                  "~0.1 s and at the end (records, or runs of a sweep); an exception it raises stops the call")


def _progress_bar(command):
    """progress=True: a tqdm bar (optional import) fed by the call's progress callback."""
    try:
        from tqdm.auto import tqdm  # a widget in a notebook, text in a terminal
    except ImportError as err:
        raise ImportError("progress=True needs tqdm (Debian: python3-tqdm); or pass a callable") from err
    state = {}

    def update(done, total):
        if "bar" not in state:
            state["bar"] = tqdm(total=total, desc=command, unit="record" if command != "sweep" else "run")
        state["bar"].n = done
        state["bar"].refresh()

    return update, state


def _command(command, core, returns, summary, prepare=None, progress=False):
    signature, table = _signature(command)
    if progress:  # a Python keyword, after the flags' (README "Python")
        signature = signature.replace(parameters=[*signature.parameters.values(), _inspect.Parameter(
            "progress", _inspect.Parameter.KEYWORD_ONLY, default=None, annotation="bool | Callable | None")])

    def call(*args, **kwargs):
        arguments = signature.bind(*args, **kwargs).arguments
        if prepare is not None:
            arguments = prepare(arguments)
        bar = None
        if arguments.get("progress") is True:
            arguments["progress"], bar = _progress_bar(command)
        elif arguments.get("progress") is False:
            del arguments["progress"]
        try:
            result = returns(core(**arguments))
            if bar and "bar" in bar:  # runs that stopped early (a stop rule): the bar ends at what was done
                bar["bar"].total = bar["bar"].n
                bar["bar"].refresh()
            return result
        except BaseException as stop:  # Ctrl-C, a signal handler's or the callback's exception: the records so far
            if isinstance(getattr(stop, "partial", None), dict):
                stop.partial = returns(stop.partial)
            raise
        finally:
            if bar and "bar" in bar:
                bar["bar"].close()

    lines = [f"    {p['keyword']}: {p['help']}" for p in table] + ([f"    {_PROGRESS_HELP}"] if progress else [])
    call.__name__ = call.__qualname__ = command
    call.__signature__ = signature
    call.__doc__ = summary + "\n\nKeywords (the flags of `headspec " + command + "`):\n" + "\n".join(lines)
    return call


def _sweep_types():
    return {p["keyword"]: p["type"] for p in _core.parameters("sweep")}


def _with_grid_text(arguments):
    if "grid" in arguments:
        arguments["grid"] = grid_text(arguments["grid"])
    return arguments


simulate = _command("simulate", _core.simulate, lambda r: Trajectories(r, "simulation"),
                    "Finite-D online SGD (docs/model.md §1–5), as `headspec simulate`: a headspec.Trajectories "
                    "(loss with its test-sample standard error loss_se, M, R, Q, c, ortho, cos over runs × records).",
                    progress=True)
theory = _command("theory", _core.theory, lambda r: Trajectories(r, "theory"),
                  "The D → ∞ ODE of the order parameters (docs/model.md §6), or with sde=True its stochastic "
                  "version (§12), as `headspec theory`: a headspec.Trajectories as simulate's (loss_se and every "
                  "column's standard error with mc_error=True, NaN otherwise).", progress=True)
bayes = _command("bayes", _core.bayes, dict,
                 "The Bayes-optimal error ε_Bayes (docs/model.md §8), as `headspec bayes`: {'mmse', 'stderr'}.")
mnist = _command("mnist", _core.mnist, lambda r: Trajectories(r, "simulation"),
                 "The MNIST detection task (docs/model.md §11), as `headspec mnist`: a headspec.Trajectories "
                 "(loss = test error, M over the 10 class directions) with keys (runs × H × 28 × 28, final) and "
                 "tau (runs × 10, NaN: not specialised).", progress=True)
linearise = _command("linearise", _core.linearise, dict,
                     "The ODE linearised at the unspecialised fixed point, as `headspec linearise`: the first seed's "
                     "fixed point, Jacobian, eigenvalues, lambda_plus as arrays; growth, along, prediction, the "
                     "other seeds and (mc_seeds > 1) lambda_plus_over_seeds, along_over_seeds as its JSON.")
sweep = _command("sweep", _core.sweep, lambda r: Sweep(r, _sweep_types()),
                 "A grid over model flags × runs on any engine, as `headspec sweep`: a headspec.Sweep (rows: the "
                 "tidy CSV's columns, summary: the summary CSV's, as arrays; grid values typed; NaN: a cell the "
                 "point lacks or not specialised). grid is the --grid text or a dict {key: values}.",
                 _with_grid_text, progress=True)
parameters = _core.parameters

__all__ = ["Sweep", "Trajectories", "UsageError", "__version__", "bayes", "git_revision", "grid_text", "linearise",
           "mnist", "parameters", "simulate", "sweep", "theory"]
