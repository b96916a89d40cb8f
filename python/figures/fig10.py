"""Fig. 10: as Fig. 9 with L = 5, H = 4, gauss ν = (8, 2), η = 1, D = 10^4."""
import fig09

# The full-size line: Heun at dt = 0.5 (within 0.002 of RK4 at dt = 0.1 with the same samples,
# docs/figures.md) pays for N = 786432 = 128·6144, a net of the Sobol method (|G| = 96). At
# 160000 the Q⊥ of Bayes-softmax's two secondary heads was 0.057 below its value at 1.28·10^6
# (0.852 against 0.909 at t = 150; `--mc-error` said ± 0.035): their rates come from the rare
# samples in which they hold any attention, so they converge slowly with N.
FULL_LINE = {"mc": 786432, "dt": 0.5, "integrator": "heun"}


def make(f):
    model = ["--prior", "gauss", "--nu", "8,2", "--L", "5", "--H", "4", "--lr", "1"]
    fig09.rows(f, model, 80, 150, "Fig. 10: theory (lines) vs SGD (dots); gauss ν=(8,2), L=5, H=4, η=1",
               full_line=FULL_LINE)
