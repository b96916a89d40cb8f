"""The Python keywords of every subcommand are its command-line flags, with the same
defaults (docs/cli.md "Parameters"): read from `headspec SUB --help`, so that a flag added
to one side only fails here."""
import inspect
import re
import subprocess

import numpy as np
import pytest

import headspec
from conftest import BINARY

SUBCOMMANDS = ["simulate", "theory", "bayes", "mnist", "linearise", "sweep"]
# Where output goes, how a run resumes or shows its progress: the command line's only.
CLI_ONLY = {"out", "checkpoint", "checkpoint-every", "resume", "summary", "work-dir", "keys", "tau", "progress",
            "shard"}
# Python's own: progress= takes a callback or True (a tqdm bar) where the CLI's --progress
# takes a display mode (docs/cli.md "Progress").
PYTHON_ONLY = {"simulate": {"progress"}, "theory": {"progress"}, "mnist": {"progress"}, "sweep": {"progress"}}
OPTION = re.compile(r"^ +--([\w-]+)(?: (INT|FLOAT|TEXT)(?:=(\S+))?)?( REQUIRED)?")


def cli_flags(sub):
    """{flag: (type or None for a flag without value, default text or None, required)} from --help."""
    text = subprocess.run([BINARY, sub, "--help"], capture_output=True, text=True, check=True).stdout
    flags = {}
    for line in text.splitlines():
        m = OPTION.match(line)
        if m:
            flags[m.group(1)] = (m.group(2), m.group(3), m.group(4) is not None)
    assert flags, text
    return flags


def cli_default(kind, text):
    if kind == "INT":
        return int(text)
    if kind == "FLOAT" and text.startswith("["):
        return [float(x) for x in text.strip("[]").split(",")]
    if kind == "FLOAT":
        return float(text)
    return text


def keywords(sub):
    return inspect.signature(getattr(headspec, sub)).parameters


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_keywords_are_the_flags(sub):
    flags = cli_flags(sub)
    assert set(keywords(sub)) == {f.replace("-", "_") for f in flags if f not in CLI_ONLY} | PYTHON_ONLY.get(sub, set())
    table = headspec.parameters(sub)
    assert [p["name"] for p in table] == list(flags)
    assert {p["name"] for p in table if p["cli_only"]} == CLI_ONLY & set(flags)


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_defaults_and_types_are_the_cli_ones(sub):
    params = keywords(sub)
    for flag, (kind, default, required) in cli_flags(sub).items():
        if flag in CLI_ONLY:
            continue
        p = params[flag.replace("-", "_")]
        if required:
            assert p.default is inspect.Parameter.empty, flag
        elif default is None:
            assert p.default in (None, 0, False), flag  # --help prints none: unset
        else:
            assert p.default == cli_default(kind, default), flag
        expected = {None: (bool,), "INT": (int,), "FLOAT": (float, "list[float]"),
                    "TEXT": (str, "str | float | list[float]")}[kind]
        assert p.annotation in expected, flag


def test_unknown_and_cli_only_keywords_are_type_errors():
    with pytest.raises(TypeError):
        headspec.simulate(D=200, T=0.1, no_such_flag=1)
    with pytest.raises(TypeError):
        headspec.simulate(D=200, T=0.1, out="x.csv")
    with pytest.raises(TypeError):
        headspec.sweep()  # --grid is required


def test_errors_name_the_keyword():
    with pytest.raises(ValueError, match=r"^keyword init_D=: ") as raised:
        headspec.theory(init_D=3, T=0.1)
    assert raised.value.parameter == "init_D" and raised.value.flag == "--init-D"
    with pytest.raises(ValueError, match=r"^keyword H=: needs at least one head"):
        headspec.simulate(H=0)
    with pytest.raises(ValueError, match=r"^keyword lr=: expected float, got 'x'"):
        headspec.simulate(lr="x")


def test_bayes_takes_only_the_keywords_its_error_depends_on():
    """ε_Bayes depends on the prior, ν, L and Δ (docs/model.md §8): those are taken as the CLI takes
    them; a model keyword that cannot change it (H, lr, activation, …) is refused, naming it."""
    res = headspec.bayes(prior="gauss", nu=[2, 1], L=4, noise=0.1, samples=2000, method="mc")
    out = subprocess.run([BINARY, "bayes", "--prior", "gauss", "--nu", "2,1", "--L", "4", "--noise", "0.1",
                          "--samples", "2000"], capture_output=True, text=True, check=True).stdout
    assert f'"mmse":{res["mmse"]}' in out.replace(" ", "")
    for keyword, value in (("H", 3), ("lr", 0.5), ("activation", "softmax1"), ("readout", "sum"), ("batch", 4)):
        with pytest.raises(TypeError, match=keyword):
            headspec.bayes(**{keyword: value})
        flag = "--" + keyword
        cli = subprocess.run([BINARY, "bayes", flag, str(value)], capture_output=True, text=True)
        assert cli.returncode == 2 and cli.stdout == ""
        assert cli.stderr == f"headspec: error: {flag}: not a flag of 'bayes' (headspec bayes --help lists them)\n"


def test_simulate_stop_when_specialised_equals_cli(cli):
    kw = dict(engine="gram", D=300, T=6, record_every=0.5, test_samples=100, seed=2, delta=0.3,
              stop_when_specialised=True)
    res = headspec.simulate(**kw)
    table = cli("simulate", "--engine", "gram", "--D", 300, "--T", 6, "--record-every", 0.5, "--test-samples", 100,
                "--seed", 2, "--delta", 0.3, "--stop-when-specialised")
    np.testing.assert_array_equal(res["t"], table["t"])
    np.testing.assert_array_equal(res["loss"], table["loss"])
    assert res["simulation"]["delta"] == 0.3 and res["simulation"]["stop_when_specialised"] is True


def test_theory_error_settled_equals_cli(cli):
    kw = dict(mc=300, dt=0.1, T=8, record_every=0.5, init_D=300, until_error_settled=0.5, error_window=2)
    res = headspec.theory(**kw)
    table = cli("theory", "--mc", 300, "--dt", 0.1, "--T", 8, "--record-every", 0.5, "--init-D", 300,
                "--until-error-settled", 0.5, "--error-window", 2)
    np.testing.assert_array_equal(res["t"], table["t"])
    np.testing.assert_array_equal(res["loss"], table["loss"])
    assert res["theory"]["until_error_settled"] == 0.5 and res["theory"]["error_window"] == 2


def test_linearise_growth_equals_cli():
    """(sobol: the keywords' path to the command line's numbers; auto would take laplace here, 300× the cost.)"""
    import json
    res = headspec.linearise(L=4, mc=1000, T_max=20, growth=True, growth_T=8, mc_seeds=2, mc_method="sobol")
    out = subprocess.run([BINARY, "linearise", "--L", "4", "--mc", "1000", "--T-max", "20", "--growth", "--growth-T",
                          "8", "--mc-seeds", "2", "--mc-method", "sobol"], capture_output=True, text=True,
                         check=True).stdout
    ref = json.loads(out)
    assert res["growth"] == ref["growth"]
    assert res["lambda_plus_over_seeds"] == ref["lambda_plus_over_seeds"]
    assert res["other_seeds"] == ref["other_seeds"]
    assert res["settings"] == ref["settings"]


@pytest.mark.parametrize("call,keyword", [
    (lambda: headspec.simulate(engine="gram", D=2 ** 52, T=1), "max_steps"),
    (lambda: headspec.bayes(samples=10 ** 14), "max_memory"),
    (lambda: headspec.theory(mc=4294967295, T=1, dt=0.5, mc_method="sobol"), "max_memory"),
    (lambda: headspec.sweep(grid={"H": [1, 2]}, engine="gram", D=2 ** 52, T=1), "max_steps"),
    (lambda: headspec.linearise(mc=10 ** 6, T_max=10 ** 6, dt=0.01), "max_steps"),
], ids=["simulate", "bayes", "theory", "sweep", "linearise"])
def test_python_calls_have_the_cli_budget(call, keyword):
    """A call that could not finish is refused before it starts (docs/cli.md "Limits"),
    naming the keyword that raises the limit."""
    with pytest.raises(ValueError, match=f"^keyword {keyword}="):
        call()


def test_a_raised_limit_lets_the_call_run():
    with pytest.raises(ValueError, match="max_steps"):
        headspec.simulate(engine="gram", D=10 ** 6, T=2, max_steps=10 ** 5)
    assert headspec.simulate(engine="gram", D=1000, T=1, record_every=0.5, max_steps=10 ** 5).loss.size == 3


@pytest.mark.parametrize("call,keyword", [
    (lambda: headspec.theory(T=0.1, prior="nope"), "prior"),
    (lambda: headspec.simulate(T=0.1, prior="mixture:/absent/atoms.txt"), "prior"),
    (lambda: headspec.simulate(engine="gram", T=0.1, activation="relu"), "activation"),
    (lambda: headspec.theory(T=0.1, readout="x"), "readout"),
    (lambda: headspec.theory(T=0.1, integrator="foo"), "integrator"),
    (lambda: headspec.theory(T=0.1, mc_method="x"), "mc_method"),
    (lambda: headspec.theory(T=1, dt=0.3, record_every=1.0), "record_every"),
    (lambda: headspec.theory(T=1, mc_resample=True, integrator="rk4"), "integrator"),
    (lambda: headspec.bayes(method="quadrature", prior="flip", nu=[2, 2]), "method"),
    (lambda: headspec.linearise(H=1), "H"),
    (lambda: headspec.simulate(engine="gram", T=0.1, lr_schedule="table:/absent/t.txt"), "lr_schedule"),
], ids=["prior", "mixture-file", "activation", "readout", "integrator", "mc-method", "record-every",
        "resample-rk4", "quadrature-F", "linearise-H", "schedule-table"])
def test_library_checks_name_the_keyword(call, keyword):
    """The checks made inside the library (names, files, cross-field rules) name the Python
    keyword, not the CLI's flag, as the checks of the flags themselves do."""
    with pytest.raises(ValueError, match=f"^keyword {keyword}=: ") as err:
        call()
    assert err.value.parameter == keyword


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_text_keywords_refuse_what_their_flags_refuse(sub):
    """Every text keyword of the table (but sweep's grid, whose '' is the grid of one point)
    refuses '' as its flag does (`--nu ''`: "an empty value"), and a NUL, which no argument can
    hold, with ValueError naming the keyword — before anything runs."""
    call = getattr(headspec, sub)
    texts = [name for name, (kind, _, _) in cli_flags(sub).items()
             if kind == "TEXT" and name not in CLI_ONLY and name != "grid"]
    assert texts
    for name in texts:
        keyword = name.replace("-", "_")
        required = {"grid": "H=1:2"} if sub == "sweep" else {}
        for value, said in (("", "an empty value"), ("a\x00b", "NUL")):
            with pytest.raises(ValueError, match=f"^keyword {keyword}=.*{said}"):
                call(**required, **{keyword: value})
        res = subprocess.run([BINARY, sub, f"--{name}", ""], capture_output=True, text=True)
        assert res.returncode == 2 and "an empty value" in res.stderr, (name, res.stderr)
