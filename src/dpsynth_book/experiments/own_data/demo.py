"""The "Your own data" chapter's demonstrations: the Python API and the command line on CPS records.

Both fit the wage model with the default settings on the first :data:`DEMO_RECORDS` records of the
chapter's frame (fewer at smoke scale) and show what a user sees. They are demonstrations, not
studies: at paper scale the page reads what they printed when the shipped results were computed
(:mod:`dpsynth_book.shipped_demo`), so the book build runs no MCMC; at quick and smoke scale they run live.

The page shows the code of the Python demonstration as :func:`api_code` writes it, and that text is
what runs; the commands of the command-line one are :func:`cli_steps`. Long lines are broken for the
page (:func:`wrap_output`, :func:`wrap_command`): a command with shell continuations, as a user
would type it.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import tempfile
import textwrap
import warnings
from pathlib import Path

from ...shipped_demo import Demo, run_or_load
from .params import OwnDataParams
from .replicate import chapter_frame

__all__ = ["DEMO_RECORDS", "COVARIATES", "API_EPS", "CLI_EPS", "CLI_BUDGET", "WIDTH", "api_code", "api_demo",
           "api_text", "api_markdown", "api_head", "cli_demo", "cli_steps", "cli_markdown", "wrap_output",
           "wrap_command", "demo_numbers"]

#: Records of the demonstrations (the chapter frame's first ones).
DEMO_RECORDS = 2000
#: The covariates of the demonstrations' wage model.
COVARIATES = ("educ", "exper", "exper2", "ethnicity", "smsa", "region", "parttime")
#: The total eps of the Python demonstration's release.
API_EPS = 5.0
#: The total eps of the command-line fit, and the budget its releases are held to (room for one release).
CLI_EPS = 2.0
CLI_BUDGET = 3.0
#: Characters per line of what the page prints: what the book's text column holds in its code font at 1280 px.
WIDTH = 72


@contextlib.contextmanager
def _fresh_home():
    """A new, empty dpsynth folder (ledgers) for the demonstration, as a new user has: no release made
    elsewhere with the same records is in its ledger. Its key is made here, so that the demonstration does
    not print the new-home notice a user sees once. Processes started meanwhile inherit it."""
    from dpsynth.paths import HOME_ENV
    from dpsynth.release.home import NewHomeWarning, secret_key

    before = os.environ.get(HOME_ENV)
    os.environ[HOME_ENV] = tempfile.mkdtemp(prefix="dpsynth-demo-home-")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NewHomeWarning)
            secret_key()
        yield
    finally:
        if before is None:
            os.environ.pop(HOME_ENV, None)
        else:
            os.environ[HOME_ENV] = before


def _frame(p: OwnDataParams):
    return chapter_frame(p, "dollars").head(DEMO_RECORDS)


def _params(p: OwnDataParams, **extra) -> dict:
    return {"scale": p.scale, "n": p.n, "records": DEMO_RECORDS, "covariates": list(COVARIATES),
            "sampler": "default", **extra}


def api_code(eps: float = API_EPS) -> str:
    """The Python demonstration as the page shows it and as it runs (``wages``: the records, in dollars); no line
    is longer than :data:`WIDTH`."""
    covs = textwrap.fill(", ".join(f'"{c}"' for c in COVARIATES), WIDTH - 1, initial_indent=" " * 14,
                         subsequent_indent=" " * 14).lstrip()
    return (f"from dpsynth import Synthesizer\n\n"
            f"covariates = [{covs}]\n"
            f'synth = Synthesizer(wages, "wage", covariates=covariates,\n'
            f'                    model="lognormal_regression",\n'
            f'                    mechanism="censor_ref", eps={eps:g})\n'
            f"synth.fit()  # release mode: no seed\n"
            f"synthetic = synth.sample()  # one release, booked in the ledger\n"
            f'print(synthetic.attrs["privacy_statement"])  # the public statement\n'
            f"print(synth.privacy.diagnostics())  # for the data holder only\n")


def wrap_output(text: str, width: int = WIDTH) -> str:
    """``text`` with each line longer than ``width`` broken at spaces, its continuations indented by two."""
    keep = "\x1f"  # "M = 1.25" and "eps = 2" stay on one line
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        out += [w.replace(keep, " ") for w in textwrap.wrap(line.replace(" = ", f"{keep}={keep}"), width,
                                                            subsequent_indent="  ", break_long_words=False,
                                                            break_on_hyphens=False)]
    return "\n".join(out)


def wrap_command(command: str, width: int = WIDTH) -> str:
    """A shell command broken before its options into lines of at most ``width`` characters (``\\`` continuations),
    as a user would type a long one."""
    tokens = shlex.split(command)
    groups: list[list[str]] = [[]]
    for t in tokens:
        if t.startswith("--") and groups[-1]:
            groups.append([])
        groups[-1].append(t)
    lines = [" ".join(map(shlex.quote, groups[0]))]
    for g in groups[1:]:
        part = " ".join(map(shlex.quote, g))
        if len(lines[-1]) + 1 + len(part) + 2 <= width:
            lines[-1] += " " + part
        else:
            lines.append("    " + part)
    return " \\\n".join(lines)


def api_demo(p: OwnDataParams, *, eps: float = API_EPS, mode: str | None = None) -> Demo:
    """Run :func:`api_code` on the demonstration's records (``wages``), with a new ledger.

    Output: ``records``, ``code`` (what ran), ``printed`` (what it printed), ``statement`` (the
    release's public statement), ``diagnostics`` (for the data holder), ``budget`` (the total and its
    shares: ``relation``, ``total``, ``size``, ``reference``, ``draw``), ``alpha`` and ``bound`` (the
    censored window: the public weight and ``M``) and ``head`` (the first synthetic rows, as
    ``{"columns", "rows"}``).
    """
    code = api_code(eps)

    def run() -> dict:
        scope = {"wages": _frame(p)}
        out = io.StringIO()
        with _fresh_home(), contextlib.redirect_stdout(out):
            exec(compile(code, "<own_data api demonstration>", "exec"), scope)  # noqa: S102 - the page's own code
        synth, synthetic = scope["synth"], scope["synthetic"]
        pr = synth.privacy
        head = synthetic.head()
        b = pr.budget
        return {"records": len(scope["wages"]), "code": code, "printed": out.getvalue(),
                "statement": synthetic.attrs["privacy_statement"], "diagnostics": pr.diagnostics(),
                "budget": {"relation": b.relation, "total": float(b.total), "size": float(b.size),
                           "reference": float(b.reference), "draw": float(b.draw)},
                "alpha": float(pr.extra.get("alpha", float("nan"))), "bound": float(pr.bound),
                "head": {"columns": [str(c) for c in head.columns],
                         "rows": head.astype(object).where(head.notna(), None).values.tolist()}}

    return run_or_load("own_data-api", _params(p, eps=eps, code=code), run, mode=mode)


def api_text(d: Demo) -> str:
    """What the Python demonstration printed, lines broken for the page."""
    return wrap_output(d.output["printed"].rstrip("\n"))


def api_markdown(d: Demo) -> str:
    """The Python demonstration's code as a block, with when and on how many records it ran."""
    return (f"```python\n{d.output['code']}```\n\nIt ran on the first {d.output['records']:,} records (`wages`, "
            f"the wage in dollars), {d.when()}, and printed the public statement, then the diagnostics, which are "
            f"for the data holder only:")


def api_head(d: Demo):
    """The first rows of the released synthetic data set, as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(d.output["head"]["rows"], columns=d.output["head"]["columns"]).infer_objects()


def cli_steps(covariates=COVARIATES, *, eps: float = CLI_EPS, budget: float = CLI_BUDGET) -> list[list[str]]:
    """The commands of the command-line demonstration: fit, two releases under a budget, the ledger."""
    return [
        ["fit", "wages.csv", "--target", "wage", "--covariates", *covariates, "--model", "lognormal_regression",
         "--mechanism", "censor_ref", "--eps", f"{eps:g}", "--out", "wages-synth.json"],
        ["release", "wages-synth.json", "--out", "release-1.csv", "--budget", f"{budget:g}"],
        ["release", "wages-synth.json", "--out", "release-2.csv", "--budget", f"{budget:g}"],
        ["ledger", "wages-synth.json"],
    ]


def cli_demo(p: OwnDataParams, *, mode: str | None = None) -> Demo:
    """Run :func:`cli_steps` with ``dpsynth`` in a scratch folder with a new ledger (each a new process, as at a
    terminal).

    Output: ``records``, ``eps``, ``budget`` and ``steps``, a list of ``{"command", "returncode",
    "shown"}`` with the scratch folder shown as ``.`` and the user's dpsynth folder as ``$DPSYNTH_HOME``.
    """
    steps = cli_steps()

    def run() -> dict:
        from ...shell import shell

        work = Path(tempfile.mkdtemp(prefix="dpsynth-cps-"))
        _frame(p).to_csv(work / "wages.csv", index=False)
        out = []
        with _fresh_home():
            for s in steps:
                r = shell(s, cwd=work)
                out.append({"command": r.command, "returncode": r.returncode, "shown": r.shown()})
        return {"records": len(_frame(p)), "eps": CLI_EPS, "budget": CLI_BUDGET, "steps": out}

    return run_or_load("own_data-cli", _params(p, steps=steps), run, mode=mode)


def cli_markdown(d: Demo) -> str:
    """The demonstration's commands and what they printed, as console blocks, lines broken for the page."""
    from ...shell import console_markdown

    return "\n\n".join(console_markdown(wrap_command(s["command"]), wrap_output(s["shown"]), s["returncode"])
                       for s in d.output["steps"])


def demo_numbers(api: Demo, cli: Demo) -> dict:
    """The numbers the chapter's prose quotes about the demonstrations.

    Returns
    -------
    dict
        ``api``: ``records``, ``eps`` (the total), ``draw`` (its share for the posterior draw),
        ``size`` and ``reference`` (the other shares), ``alpha``, ``bound`` (M) and ``relation``;
        ``cli``: ``records``, ``eps``, ``budget``, ``spent`` (after the first release) and
        ``refused`` (what the second would have brought the spend to), and ``refused_step`` (whether
        the second release was refused).
    """
    a = api.output
    b = a["budget"]
    c = cli.output
    codes = [s["returncode"] for s in c["steps"]]
    return {"api": {"records": int(a["records"]), "eps": b["total"], "draw": b["draw"], "size": b["size"],
                    "reference": b["reference"], "alpha": a["alpha"], "bound": a["bound"],
                    "relation": "one record replaced" if b["relation"] == "replace" else "one record removed"},
            "cli": {"records": int(c["records"]), "eps": float(c["eps"]), "budget": float(c["budget"]),
                    "spent": float(c["eps"]), "refused": 2 * float(c["eps"]), "refused_step": bool(codes[2] != 0)}}
