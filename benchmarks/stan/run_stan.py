"""Sample a Stan program with PyStan on data sets given as files, and say how long each fit took.

The Stan side of ``benchmarks/bench_vs_stan.py``. It runs in the environment ``.venv-stan``
(``make stan``: PyStan 3, httpstan and numpy, nothing of dpsynth), as a subprocess of the
benchmark, so the two environments never mix.

It builds (compiles) the program once, with the first data set (PyStan builds a program with data),
and reports that time on its own; then it samples each data set it is given, either named on the
command line (then it exits) or, without ``DATA`` arguments, one request per line of standard
input as they come (so the caller can alternate its own fits with Stan's; it exits at the end of
the input). A request line is a JSON object
``{"data": PATH, "seed": INT}`` or just a path (seed: ``--seed`` plus the request's index).

A data file is a JSON object of the program's data, as CmdStan would read it (``n``, ``x`` and ``M``
for ``censored_beta.stan``; ``n``, ``outcome``, ``alpha`` and ``M`` for the censoring paper's own
script, ``censoring_paper_beta.stan``). The draws of the mean and the concentration (``--params``)
are written beside it, to ``<data stem>.draws.npy`` (shape ``(2, chains, draws)``), for the caller
to compare posteriors.

Output protocol: one JSON object per line on standard output, nothing else (PyStan's own messages
and the compiler's go to standard error)::

    {"event": "build", "seconds": 41.2, "cached": false, "model": "models/...", "pystan": "3.10.0",
     "httpstan": "4.13.0", "stan": "2.35.0", "python": "3.11.7", "program": ".../censored_beta.stan"}
    {"event": "fit", "index": 0, "data": ".../d1.json", "seed": 1, "seconds": 4.83,
     "prepare_seconds": 0.21, "sample_seconds": 4.62, "phi_mean": 0.14, "phi_sd": 0.004,
     "lam_mean": 3.5, "divergences": 0, "draws_file": ".../d1.draws.npy"}
    {"event": "done", "fits": 1}

``seconds`` of a fit is what a refit on a new data set costs through PyStan: ``stan.build`` with the
new data (the compiled model is found in httpstan's cache; PyStan sends it the data) plus
``sample``. A fit that fails prints ``{"event": "error", ...}`` and the driver exits with status 1.

Usage::

    .venv-stan/bin/python benchmarks/stan/run_stan.py [--program censored_beta.stan] [--params phi,lam] [--chains 2]
        [--tune 1000] [--draws 1000] [--seed 1] [--rebuild] [DATA.json ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The two parameters whose draws are kept (the mean, then the concentration), as the program names them.
PARAMS = ("phi", "lam")


def _protocol_stream():
    """A stream on the real standard output; file descriptor 1 is pointed at standard error.

    PyStan writes its progress to ``sys.stdout`` and the C++ compiler to the inherited descriptor,
    so from here on everything but the protocol lines goes to standard error.
    """
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)
    return out


def emit(stream, event: str, **fields) -> None:
    stream.write(json.dumps({"event": event, **fields}) + "\n")
    stream.flush()


def stan_version() -> str | None:
    """The Stan version httpstan carries (from its ``stan/version.hpp``), or None."""
    import httpstan

    header = Path(httpstan.__file__).parent / "include" / "stan" / "version.hpp"
    try:
        text = header.read_text(encoding="utf-8")
    except OSError:
        return None
    parts = {}
    for key in ("MAJOR", "MINOR", "PATCH"):
        for line in text.splitlines():
            if line.startswith(f"#define STAN_{key} "):
                parts[key] = line.split()[-1]
    return ".".join(parts[k] for k in ("MAJOR", "MINOR", "PATCH")) if len(parts) == 3 else None


def forget_cached_fits(model_name: str) -> int:
    """Delete the fits httpstan cached for this model, so that a repeated run samples again.

    httpstan keeps every fit made with a random seed (``<cache>/models/<id>/fits/<fit>.jsonlines.gz``)
    and returns it, without sampling, for the same data, seed and settings: a second run of the
    benchmark on the same data sets would time reading a file.
    """
    import httpstan.cache

    folder = httpstan.cache.model_directory(model_name)
    removed = 0
    for path in folder.glob("fits/*.jsonlines.gz"):
        path.unlink(missing_ok=True)
        removed += 1
    return removed


def build(program_code: str, data: dict, rebuild: bool):
    """Compile the program (or find it in httpstan's cache); the time and whether it was cached.

    PyStan builds a program together with data (it asks the model for its parameters' shapes), so
    the first request's data go with it. With ``rebuild``, the compiled model is first removed from
    httpstan's cache, so that the time is that of a compilation.
    """
    import httpstan.cache
    import httpstan.models
    import stan

    model_name = httpstan.models.calculate_model_name(program_code)
    if rebuild:
        httpstan.cache.delete_model_directory(model_name)
    cached = model_name in httpstan.cache.list_model_names()
    t0 = time.perf_counter()
    stan.build(program_code, data=data)
    return model_name, cached, time.perf_counter() - t0


def fit_one(program_code: str, model_name: str, data_path: Path, seed: int, args) -> dict:
    """Sample one data set; the protocol line's fields."""
    import numpy as np
    import stan

    data = json.loads(data_path.read_text(encoding="utf-8"))
    forget_cached_fits(model_name)
    t0 = time.perf_counter()
    posterior = stan.build(program_code, data=data, random_seed=seed)
    t1 = time.perf_counter()
    fit = posterior.sample(num_chains=args.chains, num_warmup=args.tune, num_samples=args.draws)
    t2 = time.perf_counter()
    # fit[name] is (1, draws * chains) with the chains interleaved (draw-major): back to (chains, draws)
    draws = np.stack([np.asarray(fit[p]).reshape(args.draws, args.chains).T for p in args.params])
    out = data_path.with_name(data_path.stem + ".draws.npy")
    np.save(out, draws)
    divergences = int(np.asarray(fit["divergent__"]).sum())
    return {
        "data": str(data_path), "seed": seed, "seconds": round(t2 - t0, 4), "prepare_seconds": round(t1 - t0, 4),
        "sample_seconds": round(t2 - t1, 4), "phi_mean": float(draws[0].mean()), "phi_sd": float(draws[0].std()),
        "lam_mean": float(draws[1].mean()), "divergences": divergences, "draws_file": str(out),
    }


def requests(args, cwd: Path):
    """(data path, seed) pairs: the command line's, or one per line of standard input.

    Relative paths are read from ``cwd``, the folder the driver was started in.
    """
    if args.data:
        for i, path in enumerate(args.data):
            yield cwd / path, args.seed + i
        return
    for i, line in enumerate(sys.stdin):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            req = json.loads(line)
            yield cwd / req["data"], int(req.get("seed", args.seed + i))
        else:
            yield cwd / line, args.seed + i


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="*", help="data files (JSON); without them, requests are read from stdin")
    ap.add_argument("--program", type=Path, default=HERE / "censored_beta.stan")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--tune", type=int, default=1000, help="warm-up iterations per chain (Stan's num_warmup)")
    ap.add_argument("--draws", type=int, default=1000, help="retained draws per chain (Stan's num_samples)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first request that names none")
    ap.add_argument("--params", type=lambda v: tuple(v.split(",")), default=PARAMS,
                    help="the program's names of the mean and the concentration, comma-separated (default phi,lam; "
                         "the censoring paper's script calls the concentration lambda)")
    ap.add_argument("--rebuild", action="store_true",
                    help="remove the compiled model from httpstan's cache first, so the build is a compilation")
    args = ap.parse_args(argv)
    proto = _protocol_stream()

    import httpstan
    import stan

    program_code = args.program.resolve().read_text(encoding="utf-8")
    # httpstan compiles through setuptools, which leaves its object files in ./build: work in a
    # scratch folder, not in the caller's (the repository's) folder
    cwd = Path.cwd()
    scratch = tempfile.TemporaryDirectory(prefix="run_stan-")
    os.chdir(scratch.name)
    model_name = None
    count = 0
    for index, (path, seed) in enumerate(requests(args, cwd)):
        try:
            if model_name is None:
                data = json.loads(path.read_text(encoding="utf-8"))
                model_name, cached, seconds = build(program_code, data, args.rebuild)
                emit(proto, "build", seconds=round(seconds, 3), cached=cached, model=model_name,
                     pystan=stan.__version__, httpstan=httpstan.__version__, stan=stan_version(),
                     python=platform.python_version(), program=str(args.program.resolve()))
            fields = fit_one(program_code, model_name, path, seed, args)
        except Exception as exc:  # reported on the protocol, then the driver stops
            emit(proto, "error", index=index, data=str(path), message=f"{type(exc).__name__}: {exc}")
            return 1
        emit(proto, "fit", index=index, **fields)
        count += 1
    emit(proto, "done", fits=count)
    os.chdir(cwd)
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
