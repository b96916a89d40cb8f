"""headspec: training dynamics of multi-head softmax attention in the high-dimensional
single-location model.

    import headspec
    run = headspec.simulate(D=2000, T=10, runs=4)      # arrays: run, t, loss, M, R, Q, c
    ode = headspec.theory(init_D=2000, mc=4000, dt=0.2, T=10)   # the same arrays, from the D → ∞ ODE
    headspec.bayes(prior="gauss", nu=[8, 2], L=4)      # {'mmse': ..., 'stderr': ...}
    digits = headspec.mnist(H=4, T=3, test_samples=200)   # MNIST: arrays as simulate, keys, tau
    lin = headspec.linearise(L=5, mc=20000)            # fixed point, Jacobian, eigenvalues, lambda_plus
    grid = headspec.sweep(grid="lr=0.5,1", D=500, T=5, runs=2)   # {'rows': ..., 'summary': ...} arrays

Each function takes exactly the keywords of its subcommand's flags (dashes become
underscores: --init-D is init_D), with the command line's defaults, except the flags that
only say where output goes or how a run resumes (--out, --checkpoint, --resume, ...); the
list of numbers of --nu may be given as text "2,2", a number or a list. Bad input raises
ValueError (headspec.UsageError) naming the keyword; its attributes `parameter`, `flag`
and `reason` say which and why.
"""
import inspect as _inspect

from . import _core
from ._core import UsageError, __version__, git_revision

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


def _command(command, core):
    signature, table = _signature(command)

    def call(*args, **kwargs):
        return core(**signature.bind(*args, **kwargs).arguments)

    lines = [f"    {p['keyword']}: {p['help']}" for p in table]
    call.__name__ = call.__qualname__ = command
    call.__signature__ = signature
    call.__doc__ = core.__doc__.split("\n")[-1] + "\n\nKeywords (the flags of `headspec " + command + "`):\n" + \
        "\n".join(lines)
    return call


simulate = _command("simulate", _core.simulate)
theory = _command("theory", _core.theory)
bayes = _command("bayes", _core.bayes)
mnist = _command("mnist", _core.mnist)
linearise = _command("linearise", _core.linearise)
sweep = _command("sweep", _core.sweep)
parameters = _core.parameters

__all__ = ["UsageError", "__version__", "bayes", "git_revision", "linearise", "mnist", "parameters", "simulate",
           "sweep", "theory"]
