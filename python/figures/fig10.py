"""Fig. 10: as Fig. 9 with L = 5, H = 4, gauss ν = (8, 2), η = 1, D = 10^4."""
import fig09


def make(f):
    model = ["--prior", "gauss", "--nu", "8,2", "--L", "5", "--H", "4", "--lr", "1"]
    fig09.rows(f, model, 80, 150, "Fig. 10: theory (lines) vs SGD (dots); gauss ν=(8,2), L=5, H=4, η=1")
