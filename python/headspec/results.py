"""What the calls return: the rows of the command's CSV, labelled.

`Trajectories` (simulate, theory, mnist) holds the rows of the CSV the command line would
write (`result["M_1_2"]` is that column, row by row) and the same numbers as arrays over
(run, record, ...) with NaN where a run has no record (it stopped early or diverged):

    loss, loss_se   (runs, records)
    M               (runs, records, H, F)
    R, c, ortho     (runs, records, H)
    Q, cos          (runs, records, H, H)

`t` (records,) is the time of each record, `run` (runs,) the run index. The sidecar's
parameters are `parameters` ({"model": ..., "simulation" or "theory": ...}) and attributes
(`result.model`, `result.simulation` / `result.theory`). `to_xarray()` (needs xarray) and
`to_dataframe()` (needs pandas) are optional conveniences. Columns: docs/cli.md "Output
columns"; the quantities: docs/model.md §5.
"""
import re

import numpy as np

_PAIR = re.compile(r"^(M|Q|cos)_(\d+)_(\d+)$")
_ONE = re.compile(r"^(R|c|ortho)_(\d+)$")


def _optional(module, purpose):
    try:
        return __import__(module)
    except ImportError as err:  # an optional dependency (README "Python")
        raise ImportError(f"{purpose} needs {module} (Debian: python3-{module})") from err


class Trajectories:
    """The recorded order parameters of every run of one call (module docstring)."""

    def __init__(self, result, section):
        metadata = dict(result)
        table = {key: metadata.pop(key) for key in ("columns", "values", "runs", "diverged")}
        self.columns = list(table["columns"])
        self._values = np.asarray(table["values"], dtype=float).reshape(-1, len(self.columns))
        self.parameters = {"model": metadata.pop("model"), section: metadata.pop(section)}
        self.model = self.parameters["model"]
        setattr(self, section, self.parameters[section])
        self.diverged = list(table["diverged"])
        self._extras = metadata
        for key, value in metadata.items():
            setattr(self, key, value)
        rows_run = self._values[:, 0].astype(int)
        self.run = np.arange(int(table["runs"]))
        self.t = np.unique(self._values[:, 1])
        self._cell = (rows_run, np.searchsorted(self.t, self._values[:, 1]))
        self.H = int(self.model["H"])
        self.F = max([int(m.group(3)) for m in map(_PAIR.match, self.columns) if m and m.group(1) == "M"], default=0)
        self._label()

    # ---- the labelled arrays ----

    def _grid(self, column, shape=()):
        out = np.full((len(self.run), len(self.t)) + shape, np.nan)
        if column is not None:
            out[self._cell] = self._values[:, self.columns.index(column)]
        return out

    def _arrays(self, suffix):
        """{loss, M, R, Q, c, ortho, cos} from the columns named <column><suffix>; NaN where
        a column is absent (cos_h_h = 1 where the run has a record)."""
        H, F, shape = self.H, self.F, (len(self.run), len(self.t))
        out = {"loss": self._grid("loss" + suffix if "loss" + suffix in self.columns else None),
               "M": np.full(shape + (H, F), np.nan), "Q": np.full(shape + (H, H), np.nan),
               "cos": np.full(shape + (H, H), np.nan)}
        out.update({name: np.full(shape + (H,), np.nan) for name in ("R", "c", "ortho")})
        if suffix == "":
            out["cos"][:, :, range(H), range(H)] = np.where(np.isnan(out["loss"]), np.nan, 1.0)[..., None]
        for column in self.columns:
            if not column.endswith(suffix) or (suffix == "" and column.endswith("_se")):
                continue
            name = column[:len(column) - len(suffix)]
            pair, single = _PAIR.match(name), _ONE.match(name)
            if pair:
                i, j = int(pair.group(2)) - 1, int(pair.group(3)) - 1
                out[pair.group(1)][:, :, i, j] = self._grid(column)
                if pair.group(1) != "M":
                    out[pair.group(1)][:, :, j, i] = out[pair.group(1)][:, :, i, j]
            elif single:
                out[single.group(1)][:, :, int(single.group(2)) - 1] = self._grid(column)
        if not any(c.startswith("c_") for c in self.columns):
            out["c"] = None  # a fixed readout
        return out

    def _label(self):
        values = self._arrays("")
        for name in ("loss", "M", "R", "Q", "c", "ortho", "cos"):
            setattr(self, name, values[name])
        #: Standard errors in the same shapes: loss_se from the test samples (simulate, mnist),
        #: every quantity's Monte Carlo error with theory(mc_error=True); NaN where not estimated.
        self.standard_errors = self._arrays("_se")
        self.loss_se = self.standard_errors["loss"]

    # ---- the CSV's view ----

    def __getitem__(self, name):
        """A CSV column, row by row (run, t, loss, M_1_1, ...), or a metadata entry."""
        if name in self.columns:
            return self._values[:, self.columns.index(name)].copy() if name != "run" else \
                self._values[:, 0].astype(int)
        if name in self.parameters:
            return self.parameters[name]
        if name in ("diverged",) or name in self._extras:
            return getattr(self, name)
        hint = f" (result.{name} is the array over runs and records)" if hasattr(self, name) else ""
        raise KeyError(f"{name!r} is not a column{hint}; the columns are {', '.join(self.columns)}")

    def __contains__(self, name):
        return name in self.columns or name in self.parameters or name in self._extras

    def __repr__(self):
        return (f"<headspec.Trajectories: {len(self.run)} runs × {len(self.t)} records, H={self.H}, F={self.F}, "
                f"t in [{self.t.min() if len(self.t) else 0:g}, {self.t.max() if len(self.t) else 0:g}]>")

    def rows(self):
        """The CSV's table: {column: array over rows}, in the command line's row order."""
        return {name: self[name] for name in self.columns}

    # ---- optional conveniences ----

    def to_xarray(self):
        """An xarray.Dataset over (run, t, head, head2, direction) with the parameters as
        attributes ("model.lr", ...)."""
        xr = _optional("xarray", "to_xarray()")
        head, head2, direction = np.arange(1, self.H + 1), np.arange(1, self.H + 1), np.arange(1, self.F + 1)
        data = {"loss": (("run", "t"), self.loss), "loss_se": (("run", "t"), self.loss_se),
                "M": (("run", "t", "head", "direction"), self.M), "R": (("run", "t", "head"), self.R),
                "Q": (("run", "t", "head", "head2"), self.Q), "ortho": (("run", "t", "head"), self.ortho),
                "cos": (("run", "t", "head", "head2"), self.cos)}
        if self.c is not None:
            data["c"] = (("run", "t", "head"), self.c)
        attrs = {f"{section}.{key}": value for section, values in self.parameters.items()
                 for key, value in values.items()}
        return xr.Dataset(data, coords={"run": self.run, "t": self.t, "head": head, "head2": head2,
                                        "direction": direction}, attrs=attrs)

    def to_dataframe(self, layout="long"):
        """A pandas.DataFrame: layout="wide" is the CSV's table; "long" has one row per
        (row, column): run, t, column, quantity (loss, M, Q, ...), i, j (the indices of the
        column's name, from 1; missing for loss) and value."""
        pd = _optional("pandas", "to_dataframe()")
        wide = pd.DataFrame(self.rows(), columns=self.columns)
        if layout == "wide":
            return wide
        if layout != "long":
            raise ValueError(f"layout must be 'long' or 'wide', not {layout!r}")
        long = wide.melt(id_vars=["run", "t"], var_name="column", value_name="value")
        parts = long["column"].str.extract(r"^(?P<quantity>[A-Za-z]+)(?:_(?P<i>\d+))?(?:_(?P<j>\d+))?(?P<se>_se)?$")
        long.insert(3, "quantity", parts["quantity"] + parts["se"].fillna(""))
        long.insert(4, "i", pd.array(pd.to_numeric(parts["i"]), dtype="Int64"))
        long.insert(5, "j", pd.array(pd.to_numeric(parts["j"]), dtype="Int64"))
        return long


def _typed(labels, kind):
    """Grid labels (text) as the values they name: ints, floats, or text as given."""
    labels = np.asarray(labels)
    if kind == "int":
        return labels.astype(np.int64)
    if kind == "float":
        return labels.astype(float)
    return labels


class Sweep:
    """A sweep's tidy rows and summary (docs/cli.md `sweep`) as {column: array}, the grid
    columns typed as their flags (ints, floats; text for activations, priors and vectors
    such as nu "2,2"); `to_dataframe("rows")` / `to_dataframe("summary")` with pandas."""

    def __init__(self, result, types):
        self._types = {key: types.get(key, "text") for key in (axis["key"] for axis in result["grid"])}
        self.grid = {axis["key"]: list(_typed(axis["values"], self._types[axis["key"]])) for axis in result["grid"]}
        self.rows = self._typed_table(result["rows"])
        self.summary = self._typed_table(result["summary"])
        self.base_model = result["base_model"]
        self.diverged = list(result["diverged"])

    def _typed_table(self, table):
        return {name: _typed(values, self._types[name]) if name in self._types else values
                for name, values in table.items()}

    def __getitem__(self, name):
        if name in ("rows", "summary", "grid", "base_model", "diverged"):
            return getattr(self, name)
        raise KeyError(f"{name!r}: a sweep result has rows, summary, grid, base_model and diverged")

    def __repr__(self):
        axes = ", ".join(f"{key}: {len(values)}" for key, values in self.grid.items())
        return f"<headspec.Sweep: grid {axes}; {len(self.rows['run'])} rows, {len(self.summary['run'])} runs>"

    def to_dataframe(self, table="rows"):
        """The tidy rows (table="rows") or the summary (table="summary") as a pandas.DataFrame."""
        pd = _optional("pandas", "to_dataframe()")
        if table not in ("rows", "summary"):
            raise ValueError(f"table must be 'rows' or 'summary', not {table!r}")
        return pd.DataFrame(getattr(self, table))


def _grid_value(key, value):
    """One grid value as the command line writes it (docs/cli.md "Numbers")."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"grid[{key!r}]: {value!r} is not a value of --{key}")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() and abs(value) < 2**63 else repr(float(value))
    if isinstance(value, str):
        if any(sep in value for sep in ";=|") or not value:
            raise ValueError(f"grid[{key!r}]: {value!r} may not be empty or hold ';', '=' or '|'")
        return value
    try:
        return ",".join(_grid_value(key, v) for v in value)
    except TypeError:
        raise ValueError(f"grid[{key!r}]: {value!r} is not a value of --{key}") from None


def grid_text(grid):
    """{"H": [1, 2], "nu": [[1, 1], [5, 5]]} as the --grid text "H=1|2;nu=1,1|5,5"; text as given.

    One rule for every key: each element of a key's list is one grid point's value. For a
    vector flag (nu) an element is a vector — a list, an array, or text "1,1" — or a number,
    the vector of one entry (F = 1): {"nu": [1, 4]} is two points, ν = 1 and ν = 4, and
    {"nu": [[1, 4]]} one point, ν = (1, 4). A single value need not be a list ({"H": 2})."""
    if isinstance(grid, str) or not hasattr(grid, "items"):
        return grid
    axes = []
    for key, values in grid.items():
        values = list(values) if isinstance(values, (list, tuple, np.ndarray, range)) else [values]
        if not values:
            raise ValueError(f"grid[{key!r}]: no values")
        axes.append(f"{key}=" + "|".join(_grid_value(key, v) for v in values))  # '|' separates values of any key
    return ";".join(axes)
