"""The ``dpsynth`` command line: fit and save, release, show the ledger, report on a release.

::

    dpsynth fit DATA --target COL [--covariates A B ...] [--model NAME] [--mechanism auto|KEY] [--eps E]
                [--lower L --upper U]
                [--neighbours remove|replace] [--unit U] [--offset O] [--draws N --tune N --chains N]
                [--sep SEP] [--seed S] [--force] --out SYNTH.json
    dpsynth release SYNTH.json --out OUT.csv|OUT.parquet [--covariates-from DATA] [--budget B]
                [--seed S --allow-research] [--force] [--allow-unusable]
    dpsynth ledger SYNTH.json
    dpsynth report SYNTH.json --data DATA --released OUT.csv --out DIR [--force] [--sep SEP]
    dpsynth home [import OLD_HOME]

DATA is read as CSV (any separator with ``--sep``; a byte-order mark is handled) or Parquet by its
extension. ``fit`` saves the synthesizer (JSON with a SHA-256, owner-readable only: it holds
posterior draws, see its statement) and prints its public privacy statement on stdout; the
figures computed from the data (Delta, the censored count, n) go to stderr, marked confidential,
with the progress. By default (``--mechanism auto``) the mechanism is the book's decision table's
(:func:`dpsynth.choice.column_choice`), from the column's kind, the covariates, ``--eps`` and the
public bounds ``--lower``/``--upper`` if given; the reason is printed (``auto: ...``) before the fit.
``release`` writes one synthetic data set and books it in the ledger of the
confidential data set the synthesizer was fitted on (copies of a synthesizer share it); with
``--budget`` a release that would bring the strict-DP spend above it is refused. ``report`` writes
a CONFIDENTIAL page (``DIR/report.html`` and its figures) that sets a release against the
confidential data, for the data holder (:mod:`dpsynth.report`). ``home`` shows this home (its
key ids, and whether it was moved); ``home import OLD_HOME`` merges another home's keys and ledgers
here, never lowering a total, and seals it (:func:`dpsynth.release.ledger.import_home`). No command
overwrites a file without ``--force`` or creates a folder. Every failure prints one line
``dpsynth: error: ...``, exits with code 2 and writes nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .choice import AUTO, is_auto
from .release.statement import CONFIDENTIAL
from .validation import DataError, check_magnitude, check_numeric_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["main", "run", "read_table"]

PROG = "dpsynth"
_TABLE_SUFFIXES = (".csv", ".parquet")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}([,'\u00a0 ]\d{3})+(\.\d+)?$")


class CLIError(Exception):
    """A user error: printed as one line ``dpsynth: error: ...``, exit code 2."""


def _progress(msg: str) -> None:
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------- input


def read_table(path: str | Path, arg: str, *, thousands: str | None = None, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV or Parquet file; :class:`CLIError` naming ``arg`` if it is missing or unreadable.

    A CSV is read as UTF-8 with its byte-order mark, if any, removed, with the separator ``sep``
    (default ``,``). A file read as one column whose name holds ``;``, a tab or ``|`` is refused
    with the separator to pass.
    """
    import pandas as pd

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _TABLE_SUFFIXES:
        raise CLIError(f"{arg} {str(path)!r} must be a .csv or .parquet file.")
    if not path.is_file():
        raise CLIError(f"{arg} file {str(path)!r} does not exist; check the path.")
    try:
        if suffix == ".csv":
            df = pd.read_csv(path, thousands=thousands, sep=sep or ",", encoding="utf-8-sig")
        else:
            df = pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - any reader failure is reported as one line
        raise CLIError(f"cannot read {arg} {str(path)!r} as {suffix[1:].upper()}: {e}".rstrip(".") + ".") from None
    if suffix == ".csv" and df.shape[1] == 1:
        name = str(df.columns[0])
        for cand, shown in ((";", "';'"), ("\t", "$'\\t'"), ("|", "'|'")):
            if cand in name:
                raise CLIError(
                    f"{arg} {str(path)!r} was read as one column {name[:60]!r}: its separator looks like "
                    f"{shown}, not {sep or ','!r}; pass --sep {shown}."
                )
    return df


def _other_columns(df: pd.DataFrame, cols: Sequence[str], drop: bool, source: str) -> None:
    """Refuse columns of DATA that are neither targets nor covariates, as the API does (unless --drop-other-columns)."""
    other = [str(c) for c in df.columns if c not in cols]
    if other and not drop:
        raise CLIError(
            f"{source} has column(s) {other} that are neither targets nor covariates: they would not be "
            f"released. List them (--covariates) or pass --drop-other-columns to leave them out."
        )


def _check_columns(df: pd.DataFrame, cols: Sequence[str], arg_of: dict[str, str], source: str) -> None:
    dup = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
    if dup:
        raise CLIError(f"{source} has two or more columns named {dup}; rename them so each name says which column it "
                       f"is.")
    for c in cols:
        if c not in df.columns:
            raise CLIError(
                f"column {c!r} ({arg_of.get(c, 'column')}) is not in {source}; its columns are "
                f"{list(df.columns)}. Fix the column name."
            )


def _target_column(s: pd.Series, source: str, levels: Sequence[str] | None, flag: str = "--target-levels") -> pd.Series:
    """The target as read for the synthesizer: text levels for a categorical one, else numbers.

    ``flag`` names how levels are declared: ``--target-levels`` (one target) or ``--levels`` (``--targets``)."""
    if levels is None:
        return _numeric_target(s, source, flag)
    if s.isna().any():
        i = s.index[s.isna().to_numpy()][0]
        raise CLIError(
            f"column {s.name!r} (--target) in {source} has {int(s.isna().sum())} missing value(s) (first "
            f"at row {i}); fill or drop those rows."
        )
    text = s.astype(str).str.strip()
    unseen = sorted(set(text) - set(levels))
    if unseen:
        raise CLIError(
            f"column {s.name!r} (--target) in {source} has value(s) {unseen[:5]} that are not among "
            f"--target-levels {list(levels)}; list every public level."
        )
    return text.astype(object)


def _numeric_target(s: pd.Series, source: str, flag: str = "--target-levels") -> pd.Series:
    """The target as numbers, or a :class:`CLIError` for thousands separators or non-numeric values."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(s):
        raise CLIError(f"column {s.name!r} (--target) in {source} holds true/false values; the target must be numeric.")
    if s.isna().any():
        i = s.index[s.isna().to_numpy()][0]
        raise CLIError(
            f"column {s.name!r} (--target) in {source} has {int(s.isna().sum())} missing value(s) (first "
            f"at row {i}: an empty or NA cell); the target must be a number in every row: fill or drop "
            f"those rows."
        )
    if pd.api.types.is_numeric_dtype(s):
        check_magnitude(s, str(s.name), "target column")  # the rule the API applies (dpsynth.validation)
        return s
    text = s.astype("string")
    num = pd.to_numeric(text.str.strip(), errors="coerce")
    bad = num.isna() & text.notna()
    if not bad.any():
        check_magnitude(num, str(s.name), "target column")
        return num.astype(float)
    vals = text[bad]
    thou = vals.str.strip().str.match(_THOUSANDS)
    if thou.any():
        i = vals.index[thou.to_numpy()][0]
        raise CLIError(
            f"column {s.name!r} (--target) in {source} has thousands separators (e.g. {vals[i]!r} at row "
            f"{i}); remove them from the file, or pass --thousands ',' (the separator used) to read them "
            f"as numbers."
        )
    i = vals.index[0]
    if bad.mean() > 0.5:  # mostly text: a categorical variable
        import shlex

        found = sorted(set(vals.str.strip()))[:6]
        shown = (  # quoted for the shell: a level may hold spaces, '=', '<' or '>'
            f"--target-levels {' '.join(shlex.quote(v) for v in found)}"
            if flag == "--target-levels"
            else f"--levels {shlex.quote(f'{s.name}=' + ','.join(found))}"
        )
        raise CLIError(
            f"column {s.name!r} ({'--target' if flag == '--target-levels' else '--targets'}) in {source} "
            f"holds text (e.g. {vals[i]!r} at row {i}): if it is "
            f"categorical, declare its public levels, e.g. {shown} (the values found in the "
            f"file; list every level that exists publicly, whether it occurs here or not)."
        )
    check_numeric_text(s, str(s.name))  # mostly numbers, some text: the API's message (dpsynth.validation)
    raise CLIError(  # pragma: no cover - the check above refuses what is left
        f"column {s.name!r} (--target) in {source} has non-numeric value {vals[i]!r} at row {i}; the target must be "
        f"a number in every row: fix or drop those rows."
    )


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
        from .models.user_function import import_function

        try:
            return import_function(name)
        except (ImportError, AttributeError) as e:
            raise CLIError(
                f"--model {name!r}: cannot import the model function ({e}); give module:function with "
                f"the module on PYTHONPATH."
            ) from None
    return name


# ------------------------------------------------------------------------------------------- fit


def _as_flags(message: str, target: str) -> str:
    """An API error message in the command line's words: `name` -> --name, the target -> its column."""
    from .mechanisms import catalog

    for name in [*catalog.cli_params(), "eps", "unit", "offset"]:
        message = message.replace(f"`{name}`", "--" + name.replace("_", "-"))
    return message.replace("the target", f"column {target!r} (--target)")


def _mechanism_params(a: argparse.Namespace, spec, read_frame, *, consumed: Sequence[str] = (),
                      chosen: str = "") -> dict:
    """The mechanism parameters given on the command line, checked against the chosen mechanism.

    ``consumed``: flags read otherwise (--lower/--upper as the public bounds of ``auto``), left out; ``chosen``: how
    the mechanism was chosen, for the message."""
    from .mechanisms import catalog

    out: dict = {}
    for name, (param, users) in catalog.cli_params().items():
        value = getattr(a, f"mp_{name}", None)
        if value is None or name in consumed:
            continue
        flag = "--" + name.replace("_", "-")
        if name not in spec.params:
            raise CLIError(
                f"{flag} does not apply to the {spec.key} mechanism{chosen}; it is a parameter of "
                f"{', '.join(users)}. Remove it, or choose one of those mechanisms (--mechanism)."
            )
        out[name] = read_frame(value, flag) if param.table else value
    return out


def _given_mechanism_flags(a: argparse.Namespace) -> list[str]:
    from .mechanisms import catalog

    return ["--" + n.replace("_", "-") for n in catalog.cli_params() if getattr(a, f"mp_{n}", None) is not None]


def _auto_choice(a: argparse.Namespace, data: pd.DataFrame, covs: Sequence[str], levels, model=None):
    """``--mechanism auto``: the decision table's choice from public facts (as ``Synthesizer(mechanism="auto")``);
    with a model function (``--model module:function``), Censor_ref at the model's prior point."""
    from .synthesizer_config import check_bounds
    from .synthesizer_plan import auto_choice
    from .target import TargetEncoding

    if a.eps is None:
        raise CLIError("--mechanism auto (the default) needs the total --eps: auto needs the total eps to read the "
                       "book's decision table at it. Pass --eps E, or name a mechanism with --mechanism KEY.")
    lower, upper = getattr(a, "mp_lower", None), getattr(a, "mp_upper", None)
    if (lower is None) != (upper is None):
        raise CLIError("--lower and --upper go together with --mechanism auto: the target's public bounds (both, "
                       "in DATA's unit, chosen without looking at the data).")
    try:
        kind = TargetEncoding.from_series(data[a.target], levels=levels).kind
        if kind == "categorical" and lower is not None:
            raise CLIError(f"--lower/--upper are public bounds of a numeric target; column {a.target!r} (--target) is "
                           f"categorical (its levels are its range). Remove them.")
        bounds = check_bounds(None if lower is None else (lower, upper), kind)
        relation = a.neighbours or ("replace" if covs else "remove")
        choice = auto_choice(kind, a.eps, n=len(data), has_covariates=bool(covs), relation=relation, bounds=bounds,
                             model_function=a.model if callable(model) else None)
    except DataError as e:
        raise CLIError(_as_flags(str(e), a.target).replace("`bounds`", "--lower/--upper")) from None
    return choice, bounds


def _parse_levels(items: Sequence[str] | None, targets: Sequence[str]) -> dict:
    out: dict = {}
    for it in items or []:
        col, sep, vals = it.partition("=")
        levels = [v.strip() for v in vals.split(",") if v.strip()]
        if not sep or not col or len(levels) < 2:
            raise CLIError(f"--levels {it!r} must be COLUMN=LEVEL,LEVEL,... (at least two public levels).")
        if col not in targets:
            raise CLIError(f"--levels {it!r}: column {col!r} is not one of --targets {list(targets)}.")
        out[col] = levels
    return out


def _cmd_fit_table(a: argparse.Namespace) -> int:
    """`dpsynth fit DATA --targets A B C ...`: the whole-table release."""
    from .synthesizer_files import check_output_path
    from .table_synthesizer import TableSynthesizer

    try:
        out = check_output_path(a.out, force=a.force, suffixes=(".json",))
    except DataError as e:
        raise CLIError(f"--out: {e}") from None
    from .mechanisms import catalog

    targets, covs = list(a.targets), list(a.covariates or [])
    levels = _parse_levels(a.levels, targets)

    def no_data_set(path, flag):
        raise CLIError(f"{flag} takes a data set, which --targets (a whole table) does not support: give it per column "
                       f"through the Python API (TableSynthesizer(..., mechanism_params={{column: {{...}}}})).")

    # the mechanism's flags apply to every column's conditional (never silently dropped)
    if is_auto(a.mechanism):
        given = _given_mechanism_flags(a)
        if given:
            raise CLIError(
                f"{', '.join(given)}: with --targets and --mechanism auto (the default) each column's mechanism is "
                f"chosen by the whole-table rule, so a mechanism's flags apply to none in particular. Name one "
                f"--mechanism for every column, or give per-column settings (bounds, mechanism_params) through the "
                f"Python API (TableSynthesizer)."
            )
        mp = {}
    else:
        mp = _mechanism_params(a, catalog.get(a.mechanism), no_data_set)
    frame = read_table(a.data, "DATA", thousands=a.thousands, sep=a.sep)
    arg_of = {**{t: "--targets" for t in targets}, **{c: "--covariates" for c in covs}}
    _check_columns(frame, [*targets, *covs], arg_of, "DATA")
    _other_columns(frame, [*targets, *covs], a.drop_other_columns, f"DATA {str(a.data)!r}")
    frame = frame[[*targets, *covs]].copy()
    for t in targets:
        frame[t] = _target_column(frame[t], f"DATA {str(a.data)!r}", levels.get(t), "--levels").rename(t)
    sampler = {
        k: v
        for k, v in (
            ("draws", a.draws),
            ("tune", a.tune),
            ("chains", a.chains),
            ("cores", a.cores),
            ("ess_min", a.ess_min),
        )
        if v is not None
    }
    try:
        s = TableSynthesizer(
            frame,
            targets,
            covariates=covs,
            eps=a.eps,
            mechanisms=a.mechanism,
            mechanism_params={t: dict(mp) for t in targets} if mp else None,
            target_levels=levels,
            sampler=sampler,
            neighbours=a.neighbours,
            n_release=a.n_release,
            size_eps=a.size_eps,
            keep_draws=max(a.keep_draws, a.releases),
            releases=a.releases,
            progress=not a.quiet,
            censor_warn_share=a.censor_warn_share,
        )
    except DataError as e:
        raise CLIError(_as_flags(str(e), ", ".join(targets)).replace("`targets`", "--targets")) from None
    _progress(s.budget.plan_line("privacy budget"))
    used = ", ".join(f"{t}: {s.mechanisms[t]}" for t in targets)
    _progress(
        f"fitting {len(targets)} conditional model(s) in the order {' -> '.join(targets)} ({len(frame)} records, "
        f"mechanism {a.mechanism}{f' ({used})' if is_auto(a.mechanism) else ''}) ..."
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s.fit(seed=a.seed)
    _progress(f"done. {CONFIDENTIAL}: the fit took {time.perf_counter() - t0:.1f} s (its time depends on the data)")
    for line in s.fit_log:
        _progress(line)
    for msg in dict.fromkeys(
        str(w.message) for w in caught if not issubclass(w.category, (DeprecationWarning, FutureWarning))
    ):
        _progress(f"warning: {msg}")
    p = s.privacy
    s.save(out, force=a.force)
    _progress(f"saved {out}, owner-readable only: {p.worth(s.keep_draws)}")
    for line in p.diagnostics().splitlines():
        _progress(line)
    print(p.statement())
    return 0


def _cmd_fit(a: argparse.Namespace) -> int:
    if a.targets:
        if a.target is not None or a.target_levels is not None or a.model is not None:
            raise CLIError(
                "--targets (several columns, the whole-table release) goes without --target, "
                "--target-levels and --model: give categorical levels with --levels COL=A,B,C; the "
                "models come from each column's type."
            )
        return _cmd_fit_table(a)
    if a.target is None:
        raise CLIError(
            "give the confidential column: --target COL (one column), or --targets A B C (several, "
            "released together as one table)."
        )
    if a.levels:
        raise CLIError("--levels is for --targets; with one --target use --target-levels.")
    from .mechanisms import catalog
    from .models import FAMILIES
    from .synthesizer import Synthesizer
    from .synthesizer_files import check_output_path

    try:
        out = check_output_path(a.out, force=a.force, suffixes=(".json",))
    except DataError as e:
        raise CLIError(f"--out: {e}") from None
    auto = is_auto(a.mechanism)
    spec = None if auto else catalog.get(a.mechanism)
    covs = list(a.covariates or [])
    arg_of = {a.target: "--target", **{c: "--covariates" for c in covs}}

    def read_frame(path, arg, whole=False):
        frame = read_table(path, arg, thousands=a.thousands, sep=a.sep)
        source = f"{arg} {str(path)!r}"
        _check_columns(frame, [a.target, *covs], arg_of, source)
        if whole:  # the confidential data: every column is a target or a covariate, as the API asks
            _other_columns(frame, [a.target, *covs], a.drop_other_columns, source)
        frame = frame[[a.target, *covs]].copy()
        frame[a.target] = _target_column(frame[a.target], source, levels)
        return frame

    levels = None if a.target_levels is None else [str(v) for v in a.target_levels]
    data = read_frame(a.data, "DATA", whole=True)
    model = None if a.model is None else _resolve_model(a.model)
    choice = None
    if auto:  # resolved here, so that the mechanism's flags are checked against the mechanism chosen
        choice, bounds = _auto_choice(a, data, covs, levels, model)
        spec = catalog.get(choice.mechanism)
        consumed = ("lower", "upper") if bounds is not None and "lower" not in spec.params else ()
        mp = _mechanism_params(a, spec, read_frame, consumed=consumed, chosen=" (chosen by --mechanism auto)")
        mp = {**choice.params, **mp}
    else:
        mp = _mechanism_params(a, spec, read_frame)
    sampler = {
        k: v
        for k, v in (
            ("draws", a.draws),
            ("tune", a.tune),
            ("chains", a.chains),
            ("cores", a.cores),
            ("ess_min", a.ess_min),
        )
        if v is not None
    }
    try:
        s = Synthesizer(
            data,
            a.target,
            covariates=covs,
            model=model,
            mechanism=spec.key,
            eps=a.eps,
            target_levels=levels,
            model_params=_parse_model_params(a.model_param),
            mechanism_params=mp,
            unit=a.unit,
            offset=a.offset,
            sampler=sampler,
            censor_warn_share=a.censor_warn_share,
            neighbours=a.neighbours,
            n_release=a.n_release,
            size_eps=a.size_eps,
            keep_draws=max(a.keep_draws, a.releases),
            releases=a.releases,
            progress=not a.quiet,
            calibrate=None if choice is None else choice.calibrate,
        )
    except DataError as e:
        raise CLIError(_as_flags(str(e), a.target)) from None
    if choice is not None:  # the mechanism was passed resolved; the saved synthesizer records the choice
        s.plan = dataclasses.replace(s.plan, choice=choice, mechanism_requested=AUTO)
    if spec.uses_model and isinstance(model, str):  # a check that would otherwise fail only after compiling
        x = s._x  # noqa: SLF001 - the target in the model's unit
        try:
            s.family().check_data(x, s._model_covariates(s._X))  # noqa: SLF001
        except DataError as e:
            raise CLIError(
                f"column {a.target!r} (--target) does not fit the {model} model: {e} Choose a model "
                f"whose support holds the data, or fix the records."
            ) from None
    eps = "" if a.eps is None else f", total eps = {a.eps:g}"
    family = s.model if isinstance(s.model, str) and s.model in FAMILIES else a.model
    if a.model is None and spec.uses_model:
        why = {
            "continuous": "decimal numbers: a continuous variable",
            "count": "whole numbers: a count",
            "categorical": f"levels {list(s.encoding.levels or ())}: a categorical variable",
        }[s.encoding.kind]
        _progress(
            f"model: {family}, chosen from column {a.target!r}'s type ({why}); pass --model to choose "
            f"another (`dpsynth fit --help` lists them)"
        )
    how = (
        f"MCMC fits: {spec.fits_per_release}, each {s.sampler.chains} chain(s) x ({s.sampler.tune} tune + "
        f"{s.sampler.draws} draws)"
        if spec.uses_model
        else "no model fit"
    )
    if choice is not None:
        _progress(choice.reason)
    _progress(s.budget.plan_line("privacy budget"))
    _progress(f"fitting {family} / {s.mechanism} ({len(data)} records, mechanism {s.mechanism}{eps}; {how}) ...")
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s.fit(seed=a.seed)
    _progress(f"done. {CONFIDENTIAL}: the fit took {time.perf_counter() - t0:.1f} s (its time depends on the data)")
    for line in s.fit_log:
        _progress(line)
    seen = set()
    for w in caught:
        msg = str(w.message)
        if issubclass(w.category, (DeprecationWarning, FutureWarning)) or msg in seen:
            continue
        seen.add(msg)
        _progress(f"warning: {msg}")
    p = s.privacy
    s.save(out, force=a.force)
    _progress(f"saved {out}, owner-readable only: {p.worth()}")
    _progress(p.diagnostics())
    print(p.statement())
    return 0


# ------------------------------------------------------------------------------------------- release


def _load(path: str | Path, arg: str = "SYNTH"):
    from .synthesizer import Synthesizer
    from .synthesizer_files import read_saved
    from .table_synthesizer import TableSynthesizer

    path = Path(path)
    if not path.is_file():
        raise CLIError(f"{arg} file {str(path)!r} does not exist; give the .json written by `dpsynth fit`.")
    kind = read_saved(path).get("kind")
    return TableSynthesizer.load(path) if kind == "table" else Synthesizer.load(path)


def _cmd_release(a: argparse.Namespace) -> int:
    from .release.ledger import Ledger
    from .synthesizer_files import check_output_path

    try:
        check_output_path(a.out, force=a.force)  # before anything is read
    except DataError as e:
        raise CLIError(f"--out: {e}") from None
    if a.budget is not None and not (a.budget >= 0 and math.isfinite(a.budget)):
        raise CLIError(f"--budget must be a finite number >= 0; got {a.budget!r}.")
    s = _load(a.synth)
    s.progress = not a.quiet
    public = None
    if a.covariates_from is not None:
        src = read_table(a.covariates_from, "--covariates-from", sep=a.sep)
        source = f"--covariates-from {str(a.covariates_from)!r}"
        _check_columns(src, s.covariates, {c: "a covariate of the synthesizer" for c in s.covariates}, source)
        public = src
    try:
        df = s.release(a.out, budget=a.budget, seed=a.seed, data=public, force=a.force, allow_unusable=a.allow_unusable,
                       allow_research=a.allow_research)
    except DataError as e:
        raise CLIError(" ".join(str(e).split())) from None
    book = Ledger(s.dataset, linked=s.linked)
    _progress(f"released {len(df)} records to {a.out}; booked in the ledger of data set {s.dataset} ({book.path})")
    print(df.attrs["privacy_statement"])
    left = "" if a.budget is None else f" of budget {a.budget:g}"
    print(f"strict-DP spend of this data set: eps = {book.total():.4g}{left}")
    return 0


# ------------------------------------------------------------------------------------------- ledger


def _cmd_ledger(a: argparse.Namespace) -> int:
    from .release.ledger import Ledger

    s = _load(a.synth)
    book = Ledger(s.dataset, linked=s.linked)
    for r in book.releases():
        paid = ", ".join(f"{w} {e:.4g}" for _, w, e, _ in r["charges"]) or "nothing new"
        print(
            f"{r['time']}  {r['name']:<12} {r['guarantee']:<4} spend={r['spend']:.4g} ({paid}) draw={r['draw']} "
            f"rows={r['rows']}  {r['output']}"
        )
    print(book.summary())
    return 0


# ------------------------------------------------------------------------------------------- report


def _cmd_report_table(a: argparse.Namespace, s) -> int:
    """`dpsynth report` of a whole-table synthesizer."""
    data = read_table(a.data, "--data", sep=a.sep)
    source = f"--data {str(a.data)!r}"
    _check_columns(data, s.columns, {t: "a target of the synthesizer" for t in s.targets}, source)
    data = data[s.columns].copy()
    for t in s.targets:
        enc = s.encodings[t]
        data[t] = _target_column(data[t], source, None if enc.levels is None else [str(v) for v in enc.levels])
    released = read_table(a.released[0], "--released", sep=a.sep)
    if sorted(map(str, released.columns)) != sorted(s.columns):
        raise CLIError(
            f"--released {str(a.released[0])!r} has columns {list(released.columns)}, but the synthesizer "
            f"releases {s.columns}; give a file `dpsynth release` wrote from {str(a.synth)!r}."
        )
    try:
        path = s.report(released[s.columns], a.out, original=data, force=a.force)
    except DataError as e:
        raise CLIError(" ".join(str(e).split()).replace("`out_dir`", "--out")) from None
    _progress(
        f"wrote {path} and its figures, owner-readable only: CONFIDENTIAL (figures computed from the "
        f"confidential data), for the data holder only, never for publication"
    )
    return 0


def _cmd_report(a: argparse.Namespace) -> int:
    from .report import check_out_dir

    try:
        check_out_dir(a.out, force=a.force)  # before anything is read
    except DataError as e:
        raise CLIError(str(e).replace("`out_dir`", "--out")) from None
    s = _load(a.synth)
    if not hasattr(s, "target"):
        return _cmd_report_table(a, s)
    cols = s.columns
    data = read_table(a.data, "--data", sep=a.sep)
    source = f"--data {str(a.data)!r}"
    _check_columns(
        data,
        cols,
        {s.target: "the target of the synthesizer", **{c: "a covariate of the synthesizer" for c in s.covariates}},
        source,
    )
    data = data[cols].copy()
    levels = None if s.encoding.levels is None else [str(v) for v in s.encoding.levels]
    data[s.target] = _target_column(data[s.target], source, levels)
    sets = []
    for f in a.released:
        released = read_table(f, "--released", sep=a.sep)
        if sorted(map(str, released.columns)) != sorted(cols):
            raise CLIError(
                f"--released {str(f)!r} has columns {list(released.columns)}, but the synthesizer "
                f"releases {cols}; give a file `dpsynth release` wrote from {str(a.synth)!r}."
            )
        sets.append(released[cols])
    try:
        path = s.report(sets, a.out, original=data, force=a.force)
    except DataError as e:
        msg = " ".join(str(e).split())
        for name, flag in (("`out_dir`", "--out"), ("`original`", "--data"), ("`released`", "--released")):
            msg = msg.replace(name, flag)
        raise CLIError(msg) from None
    _progress(
        f"wrote {path} and its figures, owner-readable only: CONFIDENTIAL (figures computed from the "
        f"confidential data), for the data holder only, never for publication"
    )
    print(path)
    return 0


# ------------------------------------------------------------------------------------------- home


def _cmd_home(a: argparse.Namespace) -> int:
    from .paths import dpsynth_home
    from .release.home import has_key, key_id, keyring, seal_of
    from .release.ledger import import_home

    home = dpsynth_home()
    if a.action == "import":
        if a.source is None:
            raise CLIError("dpsynth home import OLD_HOME: give the folder of the home to move here.")
        lines = import_home(a.source)
        print(f"merged {a.source} into {home} (key id {key_id()}); no total went down")
        for line in lines:
            print(f"  {line}")
        print(f"sealed: {a.source} (nothing is fitted, released, saved or booked there any more)")
        return 0
    print(f"dpsynth home: {home}" + (f", key id {key_id()}" if has_key() else ", no key yet"))
    if has_key():
        others = list(keyring())[1:]
        if others:
            print(f"keys of homes moved here: {', '.join(others)}")
    seal = seal_of()
    if seal is not None:
        print(f"sealed: moved to {seal['moved_to']} on {seal['time']}" + ("" if seal["verified"] else
                                                                           " (the seal does not verify)"))
    return 0


# ------------------------------------------------------------------------------------------- parser


_CLI_TYPES = {
    "float": {"type": float, "metavar": "X"},
    "int": {"type": int, "metavar": "N"},
    "str": {"metavar": "WORD"},
    "floats": {"type": float, "nargs": "+", "metavar": "X"},
    "strs": {"nargs": "+", "metavar": "WORD"},
    "flag": {"action": "store_true", "default": None},
    "table": {"metavar": "FILE"},
}


def _add_mechanism_flags(f: argparse.ArgumentParser) -> None:
    """One flag per mechanism parameter, generated from the mechanisms' specs."""
    from .mechanisms import catalog

    group = f.add_argument_group(
        "mechanism parameters",
        "each applies to the mechanisms named in brackets; a value on the data's scale is given in DATA's unit",
    )
    for name, (param, users) in catalog.cli_params().items():
        kw = dict(_CLI_TYPES[param.cli])
        kw.setdefault("default", None)
        default = (
            "" if param.required or param.default is None or param.cli == "flag" else f"; default {param.default!r}"
        )
        help_text = f"{param.help}{default} [{', '.join(users)}]".replace("%", "%%")
        group.add_argument("--" + name.replace("_", "-"), dest=f"mp_{name}", help=help_text, **kw)


def _parser() -> argparse.ArgumentParser:
    from .mechanisms import catalog
    from .models import FAMILIES

    keys = catalog.runnable_keys()
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Differentially private Bayesian synthesis of confidential data (one column, or a whole "
        "table with --targets): fit and save, release, show the release ledger, report on a release, move a "
        "dpsynth home.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,release,ledger,report,home}")

    f = sub.add_parser(
        "fit",
        help="fit a synthesizer on DATA and save it (without the confidential data)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="mechanisms (registry key: guarantee, what it is):\n"
        + "\n".join(f"  {s.key:<18} {s.guarantee:<4} {s.description}" for s in catalog.specs() if s.runnable),
    )
    f.add_argument("data", metavar="DATA", help="confidential data, .csv or .parquet")
    f.add_argument("--target", metavar="COL", help="the confidential column")
    f.add_argument(
        "--targets",
        nargs="+",
        metavar="COL",
        help="several confidential columns, synthesized in this order, each on the covariates and the "
        "columns before it, and released together as one table (eps split equally)",
    )
    f.add_argument(
        "--levels",
        action="append",
        metavar="COL=A,B,...",
        help="public levels of a categorical column of --targets (repeat for each)",
    )
    f.add_argument("--covariates", nargs="*", default=[], metavar="COL", help="public covariate columns")
    f.add_argument(
        "--target-levels",
        nargs="+",
        metavar="LEVEL",
        help="the public levels of a categorical target (every level; not read from the data)",
    )
    f.add_argument(
        "--model",
        metavar="NAME",
        help=f"a shipped family ({', '.join(FAMILIES)}) or module:function of a PyMC model function "
        f"(default: from the target's type: decimals lognormal, whole numbers negbin, levels "
        f"multinomial; the regression form with covariates)",
    )
    f.add_argument(
        "--mechanism",
        default=AUTO,
        choices=[AUTO, *keys],
        metavar="KEY",
        help=f"auto (default): the book's decision table, from the column's kind, the covariates, eps and "
        f"--lower/--upper public bounds if given (with --targets: the whole-table rule per column); or a registry "
        f"key: {', '.join(keys)}",
    )
    f.add_argument("--eps", type=float, help="the total epsilon the statement publishes for the first release, under "
                   "the relation (--neighbours); the released size, a DP reference and the draw are shares of it "
                   "(printed before the fit)")
    f.add_argument("--unit", type=float, help="public unit of the target: the model sees DATA / U")
    f.add_argument("--offset", type=float, help="public constant subtracted from each record's log-likelihood")
    f.add_argument("--model-param", action="append", metavar="KEY=VALUE", help="a prior of the shipped family")
    f.add_argument("--draws", type=int, help="posterior draws per chain")
    f.add_argument("--tune", type=int, help="tuning steps per chain")
    f.add_argument("--chains", type=int, help="chains")
    f.add_argument("--cores", type=int, help="chains run in parallel")
    f.add_argument("--ess-min", type=float, help="smallest acceptable bulk ESS (default 100 x chains)")
    f.add_argument(
        "--censor-warn-share",
        type=float,
        default=0.5,
        metavar="SHARE",
        help="warn when a censored fit censors more than this share of records (default 0.5)",
    )
    f.add_argument(
        "--neighbours",
        choices=("remove", "replace"),
        help="neighbour relation of the statement and the "
        "ledger (default: remove without covariates; replace with covariates, whose rows are public)",
    )
    f.add_argument(
        "--n-release",
        type=int,
        metavar="N",
        help="a released size declared public (one record removed; default: a DP count)",
    )
    f.add_argument(
        "--size-eps",
        type=float,
        default=None,
        metavar="E",
        help="share of --eps for the DP count of the released size (one record removed, no public size), charged "
        "once (default 5%% of --eps)",
    )
    f.add_argument(
        "--keep-draws",
        type=int,
        default=10,
        metavar="K",
        help="posterior draws kept in the saved synthesizer, one per release (default 10)",
    )
    f.add_argument(
        "--releases",
        type=int,
        default=1,
        metavar="M",
        help="synthetic data sets EPS pays for (e.g. 5, for intervals combined over them): each posterior draw gets "
        "(EPS - size - reference) / M; a model-free mechanism's one release serves any number (default 1)",
    )
    f.add_argument("--drop-other-columns", action="store_true",
                   help="leave out columns of DATA that are neither targets nor covariates (by default they are "
                   "refused: they would not be released)")
    f.add_argument("--thousands", metavar="SEP", help="thousands separator used in a CSV (e.g. ',')")
    f.add_argument("--sep", metavar="SEP", help="column separator of a CSV (default ','; e.g. ';')")
    f.add_argument("--seed", type=int, help="seed of the fit: makes it RESEARCH MODE (reproducible, not a private "
                   "release; releasing it needs `dpsynth release --allow-research`); leave it out for a private "
                   "release")
    f.add_argument("--out", required=True, metavar="SYNTH.json", help="where to save the synthesizer")
    f.add_argument("--force", action="store_true", help="replace an existing --out file")
    f.add_argument("--quiet", action="store_true", help="no progress bars (they are shown only on a terminal)")
    _add_mechanism_flags(f)
    f.set_defaults(func=_cmd_fit)

    r = sub.add_parser("release", help="write one synthetic data set and book it in the data set's ledger")
    r.add_argument("synth", metavar="SYNTH.json", help="a synthesizer saved by `dpsynth fit`")
    r.add_argument("--out", required=True, metavar="OUT", help="output file, .csv or .parquet")
    r.add_argument(
        "--covariates-from",
        metavar="DATA",
        help="a public frame of covariates for the synthetic records "
        "(its rows set the released size; default: the fitted records')",
    )
    r.add_argument("--sep", metavar="SEP", help="column separator of --covariates-from (default ',')")
    r.add_argument("--budget", type=float, help="refuse a release that brings the strict-DP spend above this eps")
    r.add_argument("--seed", type=int, help="seed of a release from a research-mode fit (with --allow-research); "
                   "ignored for a release-mode fit, whose randomness comes from the system")
    r.add_argument("--allow-research", action="store_true",
                   help="release from a research-mode (seeded) fit, which is refused otherwise; recorded in the "
                   "statement and the ledger")
    r.add_argument("--force", action="store_true", help="replace an existing --out file")
    r.add_argument(
        "--allow-unusable",
        action="store_true",
        help="release values that fail the usability checks (recorded in the statement and the ledger)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal)")
    r.set_defaults(func=_cmd_release)

    g = sub.add_parser("ledger", help="list the releases of a synthesizer's data set and its strict-DP spend")
    g.add_argument("synth", metavar="SYNTH.json", help="a saved synthesizer (its data set's ledger is shown)")
    g.set_defaults(func=_cmd_ledger)

    q = sub.add_parser(
        "report",
        help="write a CONFIDENTIAL page (HTML and PNG figures) that sets a release against "
        "the confidential data, for the data holder only",
    )
    q.add_argument("synth", metavar="SYNTH.json", help="the synthesizer saved by `dpsynth fit`")
    q.add_argument(
        "--data", required=True, metavar="DATA", help="the confidential data it was fitted on, .csv or .parquet"
    )
    q.add_argument("--released", required=True, nargs="+", metavar="OUT",
                   help="a data set `dpsynth release` wrote from it; several (each from its own draw) add the "
                   "regression's intervals combined over them")
    q.add_argument("--out", required=True, metavar="DIR", help="folder of the report (created if its parent exists)")
    q.add_argument("--force", action="store_true", help="replace a report already in --out")
    q.add_argument("--sep", metavar="SEP", help="column separator of the CSV files (default ',')")
    q.set_defaults(func=_cmd_report)

    h = sub.add_parser("home", help="show this dpsynth home (its key ids), or move another home here")
    h.add_argument("action", nargs="?", choices=("show", "import"), default="show",
                   help="show (default), or import OLD_HOME: merge its keys and ledgers here (no total goes down) "
                   "and seal it")
    h.add_argument("source", nargs="?", metavar="OLD_HOME", help="the home to import (a folder holding secret.key)")
    h.set_defaults(func=_cmd_home)
    return p


def run(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0, or 2 on an error)."""
    parser = _parser()
    try:
        a = parser.parse_args(argv)
    except SystemExit as e:  # argparse's own usage errors (code 2) and --help (code 0)
        return int(e.code or 0)
    def show(message, category, filename, lineno, file=None, line=None):  # a warning as one line, not a source line
        print(f"{PROG}: warning: {' '.join(str(message).split())}", file=sys.stderr, flush=True)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show
            return a.func(a)
    except (CLIError, DataError) as e:
        msg = " ".join(str(e).split())
        print(f"{PROG}: error: {msg}", file=sys.stderr, flush=True)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpsynth`` script and ``python -m dpsynth``: returns the exit code."""
    return run(argv)
