"""The analyst toolset: a second way to render an episode, where the model makes an
analyst's decisions and the family's kit computes the numbers.

The model reads the task's README as the analyst rendering (its question, every
column of the dictionary with its timing and type, the line that says relationships
may be nonlinear where there is one, and the family's own rules) and has two tools:

- `fit(adjust_for, estimator)` runs causal_gym/reference/decisions.py in the task's
  sandbox on the staged files and shows the estimate, its SE, the 90% interval, the
  p-value and the rows used;
- `report(width, effect_probability)` builds the family's answer from the last fit
  and those choices (decisions.build_answer) and submits it through the same
  validation and scorer as submit_answer; the first valid report ends the episode.

A choice the task cannot take (an unknown column, an unknown estimator, a report
before any fit) is a tool error the model reads, and the episode goes on. Nothing a
tool returns comes from anything but the staged files and the model's arguments: no
key, truth or anchor is reachable from here.

The kit is deterministic in the staged bytes and the arguments, so a fit that another
rollout of the same task already ran (GRPO's group) is answered from a memo of this
process instead of running again.

The options are the ones worth something (docs/demo/analyst/decision_values.md, 210
fresh-key tasks): the columns (comparing means costs 0.59-0.86 a task, adding the
post-treatment columns 1.1-1.5), the estimator (the wrong one costs 0.53-0.88 where
the README says relationships may be nonlinear and 0.15-0.23 elsewhere), the width
(halving costs 0.11-0.23, doubling 0.05-0.12) and the effect probability. Dropping
apparent instruments and shrinking toward the disclosed prior were measured too and
are worth under 0.03: they are not offered.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from typing import Any

from causal_gym.wire import TaskWire
from orchestrator.agents.tools import run_submit
from orchestrator.errors import IntegrationError
from orchestrator.sandbox.base import Sandbox

#: The families the toolset answers (decisions.FAMILIES; one ATE from data.csv).
ANALYST_FAMILIES = ("ate", "adjustment", "null_detect")
ANALYST_TOOL_NAMES = ("fit", "report")
#: The kit files the fit tool runs from, staged beside the task's files.
KIT_FILES = ("analyst.py", "flexible.py", "posterior.py", "decisions.py")
ESTIMATORS = ("ols", "aipw")
WIDTHS = ("narrow", "standard", "wide")
ANALYST_SYSTEM_PROMPT = (
    "You are a careful applied statistician. Call fit to estimate the effect with the "
    "columns and estimator you choose, then call report once to submit an answer built "
    "from that fit."
)
#: Fits kept in the memo (each a few hundred bytes).
MEMO_SIZE = 4096


def kit_files() -> dict[str, bytes]:
    """The kit's sources, read as files (the package's __init__ loads pandas)."""
    folder = resources.files("causal_gym") / "reference"
    return {name: (folder / name).read_bytes() for name in KIT_FILES}


def analyst_readme(task: TaskWire) -> str:
    """The README as the analyst rendering shows it (render_readme), for a family the
    toolset answers."""
    if task.family.value not in ANALYST_FAMILIES:
        raise IntegrationError(
            f"the analyst toolset answers {', '.join(ANALYST_FAMILIES)}; "
            f"{task.family.value} needs the full toolset"
        )
    return render_readme(task.files["README.md"].decode("utf-8"))


def render_readme(readme: str) -> str:
    """A seed README in a few hundred tokens: the question, the dictionary's columns by
    timing, the functional-form line where there is one (the expert tier's), and the
    Submission section's rules for the family."""
    from causal_gym.reference import analyst

    d = analyst.parse_readme(readme)
    lines = [
        f"Task ({d.family}): the ATE of `{d.treatment}` on `{d.outcome}`, with a 90% interval."
    ]
    for timing, names in (("Pre-treatment", d.pre_treatment), ("Post-treatment", d.post_treatment)):
        if names:
            lines.append(f"{timing} columns: " + ", ".join(f"`{n}`" for n in names) + ".")
    lines += [line[2:] for line in readme.splitlines() if line.startswith("- Functional form:")]
    rules = readme.split("\n## Submission\n", 1)[-1].split("\nSubmit exactly one", 1)[0]
    lines += [r for r in rules.strip().splitlines() if r.startswith(("Effect size:", "Also "))]
    return "\n".join(lines)


def analyst_tool_specs() -> list[dict[str, Any]]:
    """Fit and report as OpenAI function specs (the same for every family)."""
    return [
        {
            "type": "function",
            "function": {
                "name": "fit",
                "description": "Estimate the effect on the staged data.",
                "parameters": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["adjust_for"],
                    "properties": {
                        "adjust_for": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Columns to adjust for; pre_treatment and "
                            "post_treatment name every column of that timing; [] compares means.",
                        },
                        "estimator": {
                            "type": "string",
                            "enum": list(ESTIMATORS),
                            "description": "ols: regression; aipw: flexible, doubly robust.",
                        },
                    },
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "report",
                "description": "Submit the answer built from the last fit (once).",
                "parameters": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "width": {
                            "type": "string",
                            "enum": list(WIDTHS),
                            "description": "The interval: the fit's 90% one x 0.5, 1 or 2.",
                        },
                        "effect_probability": {
                            "type": "number",
                            "description": "P(effect is not zero), null_detect only.",
                        },
                    },
                },
            },
        },
    ]


@dataclass(frozen=True)
class FitResult:
    """One fit as the kit printed it: the columns, the estimator and the numbers."""

    columns: tuple[str, ...]
    estimator: str
    estimate: float | None
    se: float | None
    p_value: float | None
    ci90: tuple[float, float] | None
    rows_used: int

    def shown(self) -> str:
        """What the model reads."""
        if self.estimate is None or self.se is None or self.ci90 is None:
            return f"not estimable with these columns ({self.rows_used} rows used)"
        low, high = self.ci90
        return (
            f"estimate {self.estimate:.4g}, SE {self.se:.3g}, 90% interval [{low:.4g}, "
            f"{high:.4g}], p {self.p_value:.2g}, {len(self.columns)} columns, "
            f"{self.rows_used} rows"
        )


class FitMemo:
    """Fits by (staged bytes, arguments), shared by the sessions of a process."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self._kept: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()
        self.size, self.hits, self.misses = size, 0, 0

    def get(self, key: tuple[str, str]) -> str | None:
        """The printed fit for (staged digest, arguments), or None."""
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                self.misses += 1
                return None
            self._kept.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: tuple[str, str], printed: str) -> None:
        """Keep a printed fit; the least recently used goes past `size`."""
        with self._lock:
            self._kept[key] = printed
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)


MEMO = FitMemo()


def _arguments(raw: str | dict[str, Any]) -> dict[str, Any] | str:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        return f"error: tool arguments are not valid JSON ({exc.msg})"
    return value if isinstance(value, dict) else "error: tool arguments must be a JSON object"


class AnalystTools:
    """The two tools on one task in one sandbox (which holds the kit beside the files)."""

    def __init__(self, task: TaskWire, sandbox: Sandbox, timeout_s: float) -> None:
        self.task, self.sandbox, self.timeout_s = task, sandbox, timeout_s
        self.last_fit: FitResult | None = None
        self.fits = 0
        #: The arguments of the last fit that ran and of the report that was accepted
        #: (a trainer's log of the policy's decisions).
        self.fit_args: dict[str, Any] | None = None
        self.report_args: dict[str, Any] | None = None
        digest = hashlib.sha256()
        for name in sorted(task.files):
            digest.update(name.encode() + b"\0" + task.files[name] + b"\0")
        self._digest = digest.hexdigest()

    def fit(self, raw: str | dict[str, Any]) -> str:
        """Run the kit's fit in the sandbox; the model reads the numbers or the error."""
        args = _arguments(raw)
        if isinstance(args, str):
            return args
        try:
            choice = json.dumps(args, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            return "error: fit takes adjust_for (a list of column names) and estimator"
        if len(choice) > 8192:
            return "error: fit's arguments are too long"
        printed = MEMO.get((self._digest, choice))
        if printed is None:
            result = self.sandbox.exec(["python", "decisions.py", ".", choice], self.timeout_s)
            if not result.ok:
                reason = "timed out" if result.timed_out else f"exit code {result.exit_code}"
                return f"error: the fit did not finish ({reason})"
            printed = result.stdout.strip()
            MEMO.put((self._digest, choice), printed)
        self.fits += 1
        try:
            out = json.loads(printed)
        except json.JSONDecodeError:
            return "error: the fit printed no result"
        if "error" in out:
            return f"error: {out['error']}"
        ci = out.get("ci90")
        self.last_fit = FitResult(
            columns=tuple(out["columns"]),
            estimator=str(out["estimator"]),
            estimate=out.get("estimate"),
            se=out.get("se"),
            p_value=out.get("p_value"),
            ci90=(float(ci[0]), float(ci[1])) if ci else None,
            rows_used=int(out["rows_used"]),
        )
        self.fit_args = {
            "adjust_for": args.get("adjust_for"),
            "estimator": out["estimator"],
            "p_value": out.get("p_value"),
        }
        return self.last_fit.shown()

    def answer(self, raw: str | dict[str, Any]) -> dict[str, object] | str:
        """The family's answer from the last fit and the report's choices, or the
        error the model reads."""
        from causal_gym.reference import decisions

        args = _arguments(raw)
        if isinstance(args, str):
            return args
        unknown = sorted(set(args) - {"width", "effect_probability"})
        if unknown:
            return f"error: report takes width and effect_probability, not {', '.join(unknown)}"
        fit = self.last_fit
        if fit is None:
            return "error: no fit yet: call fit first, then report"
        width, p = args.get("width", "standard"), args.get("effect_probability")
        if width not in WIDTHS:
            return f"error: width is one of {', '.join(WIDTHS)}"
        family = self.task.family.value
        if family == "null_detect":
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
                return "error: null_detect needs effect_probability, a number in [0, 1]"
        elif p is not None:
            return f"error: effect_probability is for null_detect tasks, not {family}"
        if fit.estimate is None or fit.se is None or not math.isfinite(fit.se):
            return "error: the last fit has no estimate: fit other columns first"
        try:
            return decisions.build_answer(
                family,
                float(fit.estimate),
                float(fit.se),
                fit.columns,
                str(width),
                None if p is None else float(p),
                None,
            )
        except decisions.ChoiceError as exc:
            return f"error: {exc}"

    def report(self, raw: str | dict[str, Any]) -> tuple[str, Any]:
        """The report's reply and, when the answer validates, run_submit's Accepted."""
        answer = self.answer(raw)
        if isinstance(answer, str):
            return answer, None
        outcome = run_submit(json.dumps(answer), self.task)
        if outcome.validation is not None and outcome.validation.ok:
            self.report_args = _arguments(raw)  # type: ignore[assignment]
        return outcome.content, outcome.validation
