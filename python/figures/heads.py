"""Shared drawing of head evolution (Fig. 2, 3, 12, 13, 14): M_hf against t, and the path of
each head in the (M_h1, M_h2) plane. One colour per head, the same in every panel."""
from common import HEAD_COLOURS, heads

STYLES = ["-", "--", ":"]


def colour(h):
    return HEAD_COLOURS[(h - 1) % len(HEAD_COLOURS)]


def theory_args(prior, nu, L, H, activation, mc, dt, T, rec, seed=1):
    """The `headspec theory` flags of one head-evolution run (learned readout, η = 1)."""
    return ["theory", "--prior", prior, "--nu", ",".join(str(v) for v in nu), "--L", L, "--H", H,
            "--activation", activation, "--lr", 1, "--mc", mc, "--dt", dt, "--T", T, "--record-every", rec,
            "--seed", seed]


def m_against_t(ax, table, directions, title=""):
    """M_hf against t: one colour per head, one line style per direction f."""
    for h in heads(table):
        for i, f in enumerate(directions):
            ax.plot(table["t"], table[f"M_{h}_{f}"], STYLES[i % len(STYLES)], color=colour(h), lw=1.3,
                    label=f"head {h}" if i == 0 else None)
    ax.axhline(0, color="0.7", lw=0.6, zorder=0)
    ax.set_xlabel("$t = n/D$")
    names = ["solid", "dashed", "dotted"]
    styles = ", ".join(f"{names[i]} $M_{{h{f}}}$" for i, f in enumerate(directions))
    ax.set_ylabel(r"$M_{hf}$" + (f"  ({styles})" if len(directions) > 1 else ""))
    if len(directions) == 1:
        ax.set_ylabel(f"$M_{{h{directions[0]}}}$")
    if title:
        ax.set_title(title, fontsize=9)


def plane(ax, table, f1=1, f2=2, title=""):
    """The path of each head in the (M_h f1, M_h f2) plane; circle at t = 0, square at the end."""
    for h in heads(table):
        x, y = table[f"M_{h}_{f1}"], table[f"M_{h}_{f2}"]
        ax.plot(x, y, color=colour(h), lw=1.3, label=f"head {h}")
        ax.plot(x[0], y[0], "o", color=colour(h), ms=4)
        ax.plot(x[-1], y[-1], "s", color=colour(h), ms=5)
    ax.axhline(0, color="0.7", lw=0.6, zorder=0)
    ax.axvline(0, color="0.7", lw=0.6, zorder=0)
    ax.set_xlabel(f"$M_{{h{f1}}}$")
    ax.set_ylabel(f"$M_{{h{f2}}}$")
    if title:
        ax.set_title(title, fontsize=9)


def legend(ax, H):
    ax.legend(fontsize=6, ncol=2 if H > 4 else 1)
