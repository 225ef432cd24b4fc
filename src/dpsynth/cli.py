"""The ``dpsynth`` command line: fit and save, release, show the ledger.

::

    dpsynth fit DATA --target COL [--covariates A B ...] --model NAME --mechanism KEY [--eps E]
                [--unit U] [--offset O] [--draws N --tune N --chains N] [--seed S] --out SYNTH.json
    dpsynth release SYNTH.json --out OUT.csv|OUT.parquet [--covariates-from DATA] [--budget B]
                [--seed S] [--ledger PATH]
    dpsynth ledger SYNTH.json|LEDGER [--ledger PATH]

DATA is read as CSV or Parquet by its extension. ``fit`` saves the synthesizer (JSON with a
SHA-256, without the confidential data) and prints its privacy statement; progress goes to
stderr. ``release`` writes one synthetic data set and records it in the ledger, by default
``<SYNTH stem>.ledger.jsonl`` beside the synthesizer; with ``--budget`` a release that would bring
the strict-DP spend above it is refused. Every failure prints one line ``dpsynth: error: ...``
and exits with code 2, and writes nothing.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .validation import DataError

__all__ = ["main", "run", "default_ledger_path", "read_table", "shell", "ShellResult"]

PROG = "dpsynth"
_TABLE_SUFFIXES = (".csv", ".parquet")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}([,'\u00a0 ]\d{3})+(\.\d+)?$")


class CLIError(Exception):
    """A user error: printed as one line ``dpsynth: error: ...``, exit code 2."""


@dataclass(frozen=True)
class ShellResult:
    """One ``dpsynth`` command run in a subprocess (:func:`shell`)."""

    command: str
    returncode: int
    stdout: str
    stderr: str

    def markdown(self) -> str:
        """The command and what it printed, as a console block (progress lines from stderr included)."""
        out = "\n".join(t.rstrip() for t in (self.stdout, self.stderr) if t.strip())
        return f"```console\n$ {self.command}\n{out}\n```" + (
            f"\n\n(exit code {self.returncode})" if self.returncode else "")


def shell(args: Sequence[str], *, cwd: str | Path | None = None) -> ShellResult:
    """Run ``dpsynth <args>`` as a separate process, as a user at a terminal would.

    The command is ``python -m dpsynth`` with this interpreter (the ``dpsynth`` script of the same
    installation); ``command`` shows it as ``dpsynth ...``.
    """
    import shlex
    import subprocess

    argv = [str(a) for a in args]
    done = subprocess.run([sys.executable, "-m", "dpsynth", *argv], cwd=cwd, capture_output=True, text=True,
                          check=False)
    return ShellResult(command=" ".join(["dpsynth", *map(shlex.quote, argv)]), returncode=done.returncode,
                       stdout=done.stdout, stderr=done.stderr)


def default_ledger_path(synth: str | Path) -> Path:
    """The ledger beside a saved synthesizer: ``<stem>.ledger.jsonl``."""
    synth = Path(synth)
    return synth.with_name(synth.stem + ".ledger.jsonl")


def _progress(msg: str) -> None:
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------- input


def read_table(path: str | Path, arg: str, *, thousands: str | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet file; :class:`CLIError` naming ``arg`` if it is missing or unreadable."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _TABLE_SUFFIXES:
        raise CLIError(f"{arg} {str(path)!r} must be a .csv or .parquet file.")
    if not path.is_file():
        raise CLIError(f"{arg} file {str(path)!r} does not exist; check the path.")
    try:
        if suffix == ".csv":
            return pd.read_csv(path, thousands=thousands)
        return pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - any reader failure is reported as one line
        raise CLIError(f"cannot read {arg} {str(path)!r} as {suffix[1:].upper()}: {e}".rstrip(".") + ".") from None


def _check_columns(df: pd.DataFrame, cols: Sequence[str], arg_of: dict[str, str], source: str) -> None:
    for c in cols:
        if c not in df.columns:
            raise CLIError(f"column {c!r} ({arg_of.get(c, 'column')}) is not in {source}; its columns are "
                           f"{list(df.columns)}. Fix the column name.")


def _numeric_target(s: pd.Series, source: str) -> pd.Series:
    """The target as numbers, or a :class:`CLIError` for thousands separators or non-numeric values."""
    if pd.api.types.is_bool_dtype(s):
        raise CLIError(f"column {s.name!r} (--target) in {source} holds true/false values; the target must be "
                       f"numeric.")
    if s.isna().any():
        i = s.index[s.isna().to_numpy()][0]
        raise CLIError(f"column {s.name!r} (--target) in {source} has {int(s.isna().sum())} missing value(s) (first "
                       f"at row {i}: an empty or NA cell); the target must be a number in every row: fill or drop "
                       f"those rows.")
    if pd.api.types.is_numeric_dtype(s):
        return s
    text = s.astype("string")
    num = pd.to_numeric(text.str.strip(), errors="coerce")
    bad = num.isna() & text.notna()
    if not bad.any():
        return num.astype(float)
    vals = text[bad]
    thou = vals.str.strip().str.match(_THOUSANDS)
    if thou.any():
        i = vals.index[thou.to_numpy()][0]
        raise CLIError(f"column {s.name!r} (--target) in {source} has thousands separators (e.g. {vals[i]!r} at row "
                       f"{i}); remove them from the file, or pass --thousands ',' (the separator used) to read them "
                       f"as numbers.")
    i = vals.index[0]
    raise CLIError(f"column {s.name!r} (--target) in {source} has non-numeric value {vals[i]!r} at row {i} "
                   f"({int(bad.sum())} such row(s)); the target must be a number in every row: fix or drop those "
                   f"rows.")


def _parse_model_params(items: Sequence[str] | None) -> dict:
    out: dict = {}
    for it in items or []:
        key, sep, val = it.partition("=")
        if not sep or not key:
            raise CLIError(f"--model-param {it!r} must be KEY=VALUE (e.g. --model-param mu_prior_sd=2).")
        try:
            out[key] = float(val)
        except ValueError:
            raise CLIError(f"--model-param {it!r}: the value must be a number.") from None
    return out


def _resolve_model(name: str):
    if ":" in name:
        from .synthesizer import _import_function

        try:
            return _import_function(name)
        except (ImportError, AttributeError) as e:
            raise CLIError(f"--model {name!r}: cannot import the model function ({e}); give module:function with "
                           f"the module on PYTHONPATH.") from None
    return name


# ------------------------------------------------------------------------------------------- fit


def _as_flags(message: str, target: str) -> str:
    """An API error message in the command line's words: `name` -> --name, the target -> its column."""
    from .mechanisms import catalog

    for name in [*catalog.cli_params(), "eps", "unit", "offset"]:
        message = message.replace(f"`{name}`", "--" + name.replace("_", "-"))
    return message.replace("the target", f"column {target!r} (--target)")


def _mechanism_params(a: argparse.Namespace, spec, read_frame) -> dict:
    """The mechanism parameters given on the command line, checked against the chosen mechanism."""
    from .mechanisms import catalog

    out: dict = {}
    for name, (param, users) in catalog.cli_params().items():
        value = getattr(a, f"mp_{name}", None)
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if name not in spec.params:
            raise CLIError(f"{flag} does not apply to the {spec.key} mechanism; it is a parameter of "
                           f"{', '.join(users)}. Remove it, or choose one of those mechanisms.")
        out[name] = read_frame(value, flag) if param.table else value
    return out


def _cmd_fit(a: argparse.Namespace) -> int:
    from .fitting import SamplerConfig
    from .mechanisms import catalog
    from .models import FAMILIES
    from .synthesizer import Synthesizer

    out = Path(a.out)
    if out.suffix.lower() != ".json":
        raise CLIError(f"--out {str(out)!r} must end in .json (the saved synthesizer).")
    if not out.parent.is_dir():
        raise CLIError(f"--out {str(out)!r}: the folder {str(out.parent)!r} does not exist; create it first.")
    spec = catalog.get(a.mechanism)
    covs = list(a.covariates or [])
    arg_of = {a.target: "--target", **{c: "--covariates" for c in covs}}

    def read_frame(path, arg):
        frame = read_table(path, arg, thousands=a.thousands)
        source = f"{arg} {str(path)!r}"
        _check_columns(frame, [a.target, *covs], arg_of, source)
        frame = frame[[a.target, *covs]].copy()
        frame[a.target] = _numeric_target(frame[a.target], source)
        return frame

    data = read_frame(a.data, "DATA")
    model = _resolve_model(a.model)
    mp = _mechanism_params(a, spec, read_frame)
    sampler = {k: v for k, v in (("draws", a.draws), ("tune", a.tune), ("chains", a.chains), ("cores", a.cores),
                                 ("ess_min", a.ess_min)) if v is not None}
    try:
        s = Synthesizer(data, a.target, covariates=covs, model=model, mechanism=a.mechanism, eps=a.eps,
                        model_params=_parse_model_params(a.model_param), mechanism_params=mp, unit=a.unit,
                        offset=a.offset, sampler=SamplerConfig(**sampler), censor_warn_share=a.censor_warn_share,
                        allow_unconverged=a.allow_unconverged)
    except DataError as e:
        raise CLIError(_as_flags(str(e), a.target)) from None
    if spec.uses_model and isinstance(model, str):  # a check that would otherwise fail only after compiling
        x = s._x  # noqa: SLF001 - the target in the model's unit
        try:
            s.family().check_data(x, s._model_covariates(s._X))  # noqa: SLF001
        except DataError as e:
            raise CLIError(f"column {a.target!r} (--target) does not fit the {model} model: {e} Choose a model "
                           f"whose support holds the data, or fix the records.") from None
    eps = "" if a.eps is None else f", eps = {a.eps:g}"
    family = model if isinstance(model, str) and model in FAMILIES else a.model
    how = (f"MCMC fits: {spec.fits_per_release}, each {s.sampler.chains} chain(s) x ({s.sampler.tune} tune + "
           f"{s.sampler.draws} draws)" if spec.uses_model else "no model fit")
    _progress(f"fitting {family} / {a.mechanism} ({len(data)} records, mechanism {a.mechanism}{eps}; {how}) ...")
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s.fit(seed=a.seed)
    _progress(f"done in {time.perf_counter() - t0:.1f} s")
    seen = set()
    for w in caught:
        msg = str(w.message)
        if issubclass(w.category, (DeprecationWarning, FutureWarning)) or msg in seen:
            continue
        seen.add(msg)
        _progress(f"warning: {msg}")
    p = s.privacy  # raises UnconvergedError (reported as an error) unless --allow-unconverged
    s.save(out)
    _progress(f"saved {out} (no confidential data)")
    print(p.statement())
    return 0


# ------------------------------------------------------------------------------------------- release


def _load(path: str | Path, arg: str = "SYNTH"):
    from .synthesizer import Synthesizer

    path = Path(path)
    if not path.is_file():
        raise CLIError(f"{arg} file {str(path)!r} does not exist; give the .json written by `dpsynth fit`.")
    return Synthesizer.load(path)


def _cmd_release(a: argparse.Namespace) -> int:
    out = Path(a.out)
    if out.suffix.lower() not in _TABLE_SUFFIXES:
        raise CLIError(f"--out {str(out)!r} must end in .csv or .parquet.")
    if not out.parent.is_dir():
        raise CLIError(f"--out {str(out)!r}: the folder {str(out.parent)!r} does not exist; create it first.")
    if out.exists():
        raise CLIError(f"--out {str(out)!r} exists already; choose a new file (a release never overwrites one).")
    if a.budget is not None and not (a.budget >= 0 and math.isfinite(a.budget)):
        raise CLIError(f"--budget must be a finite number >= 0; got {a.budget!r}.")
    s = _load(a.synth)
    public = None
    if a.covariates_from is not None:
        src = read_table(a.covariates_from, "--covariates-from")
        source = f"--covariates-from {str(a.covariates_from)!r}"
        _check_columns(src, s.covariates, {c: "a covariate of the synthesizer" for c in s.covariates}, source)
        public = src[s.covariates].reset_index(drop=True)
        try:
            s.design(public)  # an unseen level fails here, before the ledger is touched
        except DataError as e:
            raise CLIError(f"{source}: {e} Release for covariates whose levels were seen at fit time, or refit "
                           f"with them.") from None
    ledger = Path(a.ledger) if a.ledger else default_ledger_path(a.synth)
    df = s.release(out, ledger=ledger, budget=a.budget, seed=a.seed, data=public)
    p = s.privacy
    _progress(f"released {len(df)} records to {out} (posterior draw {df.attrs['draw']}); recorded in {ledger}")
    print(p.statement())
    if p.guarantee == "DP":
        from .ledger import Ledger

        total = Ledger(ledger).total()
        left = "" if a.budget is None else f" of budget {a.budget:g}"
        print(f"strict-DP spend in {ledger}: eps = {total:.4g}{left}")
    return 0


# ------------------------------------------------------------------------------------------- ledger


def _cmd_ledger(a: argparse.Namespace) -> int:
    from .ledger import Ledger

    path = Path(a.path)
    if not path.is_file():
        raise CLIError(f"{str(path)!r} does not exist; give a saved synthesizer (.json) or a ledger file.")
    if a.ledger:
        ledger = Path(a.ledger)
    elif path.suffix.lower() == ".json":
        _load(path)  # a synthesizer: its checksum is verified, its ledger lies beside it
        ledger = default_ledger_path(path)
    else:
        ledger = path
    book = Ledger(ledger)
    recs = book.records()
    for r in recs:
        print(f"{r['time']}  {r['name']:<10} {r['guarantee']:<4} eps={r['eps']:.4g} (replace {r['eps_replace']:.4g}) "
              f"spend={r['new_spend']:.4g} draw={r['draw']}  {r['output']}")
    print(book.summary())
    return 0


# ------------------------------------------------------------------------------------------- parser


_CLI_TYPES = {"float": {"type": float, "metavar": "X"}, "int": {"type": int, "metavar": "N"},
              "str": {"metavar": "WORD"}, "floats": {"type": float, "nargs": "+", "metavar": "X"},
              "strs": {"nargs": "+", "metavar": "WORD"}, "flag": {"action": "store_true", "default": None},
              "table": {"metavar": "FILE"}}


def _add_mechanism_flags(f: argparse.ArgumentParser) -> None:
    """One flag per mechanism parameter, generated from the mechanisms' specs."""
    from .mechanisms import catalog

    group = f.add_argument_group("mechanism parameters", "each applies to the mechanisms named in brackets; a "
                                 "value on the data's scale is given in DATA's unit")
    for name, (param, users) in catalog.cli_params().items():
        kw = dict(_CLI_TYPES[param.cli])
        kw.setdefault("default", None)
        default = "" if param.required or param.default is None or param.cli == "flag" else \
            f"; default {param.default!r}"
        help_text = f"{param.help}{default} [{', '.join(users)}]".replace("%", "%%")
        group.add_argument("--" + name.replace("_", "-"), dest=f"mp_{name}", help=help_text, **kw)


def _parser() -> argparse.ArgumentParser:
    from .mechanisms import catalog
    from .models import FAMILIES

    keys = catalog.runnable_keys()
    p = argparse.ArgumentParser(prog=PROG, description="Differentially private Bayesian synthesis of one "
                                "confidential column: fit and save, release, show the release ledger.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,release,ledger}")

    f = sub.add_parser("fit", help="fit a synthesizer on DATA and save it (without the confidential data)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="mechanisms (registry key: guarantee, what it is):\n" + "\n".join(
                           f"  {s.key:<18} {s.guarantee:<4} {s.description}" for s in catalog.specs() if s.runnable))
    f.add_argument("data", metavar="DATA", help="confidential data, .csv or .parquet")
    f.add_argument("--target", required=True, metavar="COL", help="the confidential column")
    f.add_argument("--covariates", nargs="*", default=[], metavar="COL", help="public covariate columns")
    f.add_argument("--model", required=True, metavar="NAME",
                   help=f"a shipped family ({', '.join(FAMILIES)}) or module:function of a PyMC model function")
    f.add_argument("--mechanism", required=True, choices=keys, metavar="KEY",
                   help=f"registry key: {', '.join(keys)}")
    f.add_argument("--eps", type=float, help="target epsilon (mechanisms run at a target eps)")
    f.add_argument("--unit", type=float, help="public unit of the target: the model sees DATA / U")
    f.add_argument("--offset", type=float, help="public constant subtracted from each record's log-likelihood")
    f.add_argument("--model-param", action="append", metavar="KEY=VALUE", help="a prior of the shipped family")
    f.add_argument("--draws", type=int, help="posterior draws per chain")
    f.add_argument("--tune", type=int, help="tuning steps per chain")
    f.add_argument("--chains", type=int, help="chains")
    f.add_argument("--cores", type=int, help="chains run in parallel")
    f.add_argument("--ess-min", type=float, help="smallest acceptable bulk ESS (default 100 x chains)")
    f.add_argument("--censor-warn-share", type=float, default=0.5, metavar="SHARE",
                   help="warn when a censored fit censors more than this share of records (default 0.5)")
    f.add_argument("--allow-unconverged", action="store_true",
                   help="save a fit that failed its convergence checks (its statement says so)")
    f.add_argument("--thousands", metavar="SEP", help="thousands separator used in a CSV (e.g. ',')")
    f.add_argument("--seed", type=int, help="seed of the fit")
    f.add_argument("--out", required=True, metavar="SYNTH.json", help="where to save the synthesizer")
    _add_mechanism_flags(f)
    f.set_defaults(func=_cmd_fit)

    r = sub.add_parser("release", help="write one synthetic data set and record it in the ledger")
    r.add_argument("synth", metavar="SYNTH.json", help="a synthesizer saved by `dpsynth fit`")
    r.add_argument("--out", required=True, metavar="OUT", help="output file, .csv or .parquet")
    r.add_argument("--covariates-from", metavar="DATA", help="public covariates of the synthetic records "
                   "(default: those of the fitted data)")
    r.add_argument("--budget", type=float, help="refuse a release that brings the strict-DP spend above this eps")
    r.add_argument("--seed", type=int, help="seed of the release")
    r.add_argument("--ledger", metavar="PATH", help="ledger file (default: <SYNTH stem>.ledger.jsonl beside SYNTH)")
    r.set_defaults(func=_cmd_release)

    g = sub.add_parser("ledger", help="list the releases and the strict-DP spend (aDP listed apart)")
    g.add_argument("path", metavar="SYNTH.json|LEDGER", help="a saved synthesizer (its ledger beside it) or a ledger")
    g.add_argument("--ledger", metavar="PATH", help="ledger file (overrides the one beside SYNTH)")
    g.set_defaults(func=_cmd_ledger)
    return p


def run(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0, or 2 on an error)."""
    parser = _parser()
    try:
        a = parser.parse_args(argv)
    except SystemExit as e:  # argparse's own usage errors (code 2) and --help (code 0)
        return int(e.code or 0)
    from .synthesizer import UnconvergedError

    try:
        return a.func(a)
    except (CLIError, DataError, UnconvergedError) as e:
        msg = " ".join(str(e).split())
        print(f"{PROG}: error: {msg}", file=sys.stderr, flush=True)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpsynth`` script and ``python -m dpsynth``: returns the exit code."""
    return run(argv)
