"""causal-gym for TRL's GRPOTrainer, in the shape TRL's environment integrations take:
a spec exposing `train_dataset`, `environment_factory` and `reward_funcs`.

    from orchestrator.integrations.trl import CausalGymTRL, chatml_tool_template
    from orchestrator.integrations.sources import StreamSource
    spec = CausalGymTRL(StreamSource.from_token_file(URL, "trainer.token"),
                        num_generations=4, prompts_per_step=2)
    tokenizer.chat_template = chatml_tool_template()   # a ChatML model such as SmolLM2
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=config,
                          train_dataset=spec.train_dataset,
                          environment_factory=spec.environment_factory,
                          reward_funcs=spec.reward_funcs)

One environment instance per rollout (TRL pools and resets them). GRPO compares the
answers of one group to one prompt, so the rollouts of a dataset row must see the
same task: each row carries a `task_slot`, and the G resets of a slot share one task
pulled as a group (a stream hands it out under G single-use handles, one per
rollout). The tools are the project's own, in a sandbox per rollout: `bash`,
`python` and `submit_answer`, whose typed arguments cover the seed families' answers
(ate, adjustment, null_detect). With `SessionSettings(rendering="brief")` the user
turn is the task's brief instead (integrations/brief.py: a few hundred tokens for a
small model) and submit_answer is the one tool. `get_reward` is the scorer's clipped reward (what a
policy gradient should see; -1 without a valid submission); the raw reward and its
components go to `spec.log`, one dict per rollout.

Install with `pip install "causal-gym[trl]"`; this module imports TRL's own modules
only where it uses them (datasets for the dataset, trl for the chat template).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

from causal_gym.contracts.families import contracts
from orchestrator.agents.episode import SYSTEM_PROMPT
from orchestrator.errors import IntegrationError
from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES, ANALYST_SYSTEM_PROMPT
from orchestrator.integrations.brief import BRIEF_FAMILIES, BRIEF_SYSTEM_PROMPT
from orchestrator.integrations.groups import GroupBoard
from orchestrator.integrations.session import SessionSettings, TaskSession
from orchestrator.integrations.sources import TaskSource

#: submit_answer's typed arguments (TRL builds the tool's schema from its signature).
TOOL_FIELDS = frozenset(
    ("estimand", "estimate", "ci_lower", "ci_upper", "adjustment_set", "effect_probability")
)


def trl_families() -> tuple[str, ...]:
    """The registered families whose answers submit_answer's typed arguments can express
    (every field of the submission model is one of TOOL_FIELDS), in registry order: the
    seed's ate, adjustment and null_detect, and the design families."""
    return tuple(c.name for c in contracts() if set(c.submission_model.model_fields) <= TOOL_FIELDS)


TRL_FAMILIES = trl_families()


class Rollout:
    """What every rollout's environment has besides its tools (TRL takes a subclass's
    public methods, but reset and get_reward, for the model's tools)."""

    def __init__(
        self, board: GroupBoard, settings: SessionSettings, log: list[dict[str, Any]]
    ) -> None:
        self._board, self._log = board, log
        self._session = TaskSession(board.source, settings)
        self._scored = False

    def reset(self, **row: Any) -> str:
        """Claim the task of the row's `task_slot` (one per group of rollouts) and stage
        it in a fresh sandbox; returns the task's prompt, which fills the row's empty
        user turn."""
        task, handle = self._board.claim(int(row.get("task_slot", 0)))
        self._session.start(task, handle)
        self._scored = False
        return self._session.messages[1]["content"]

    @property
    def task_digest(self) -> str | None:
        """The SHA-256 of the task's staged data.csv: names the task without its id
        (secret on a secret-key stream), so a held-out sample can be checked against
        the training tasks."""
        task = self._session.task
        return hashlib.sha256(task.files["data.csv"]).hexdigest() if task else None

    @property
    def done(self) -> bool:
        """Whether a valid answer ended the episode."""
        return self._session.done

    def _score(self) -> float:
        """The scorer's clipped reward for this rollout (-1 without a valid answer),
        logged once to the spec's log; the rollout's sandbox goes."""
        session = self._session
        if not self._scored:
            score = session.score
            self._log.append(
                {
                    "family": session.task.family.value if session.task else None,
                    "task_digest": self.task_digest,
                    "valid": score is not None and score.valid,
                    "reward": session.raw_reward,
                    "clipped_reward": session.reward,
                    "invalid_attempts": session.invalid_attempts,
                    "tool_calls": session.tool_calls,
                    **self._decisions(),
                    **(score.model_dump(exclude={"errors"}) if score is not None else {}),
                }
            )
            self._scored = True
            session.close()  # the rollout is over: its sandbox goes
        return session.reward

    def _decisions(self) -> dict[str, Any]:
        """The analyst toolset's last fit and accepted report (empty in other renderings)."""
        tools = self._session.analyst
        if tools is None:
            return {}
        return {"fit": tools.fit_args, "report": tools.report_args}

    def _close(self) -> None:
        self._session.close()

    def _submit(self, **fields: Any) -> str:
        """submit_answer's call with the arguments the model gave (None: left out)."""
        answer = {k: v for k, v in fields.items() if v is not None}
        return self._session.call("submit_answer", answer)


class RolloutEnvironment(Rollout):
    """A rollout whose reward TRL reads from the environment itself."""

    def get_reward(self) -> float:
        """The scorer's clipped reward for this rollout (-1 without a valid answer)."""
        return self._score()


class CausalGymBriefEnvironment(RolloutEnvironment):
    """One rollout's environment in the brief rendering (integrations/brief.py): the
    user turn is the task's brief; the one tool is submit_answer, its arguments those of
    the brief's families, its description short (it is part of every prompt)."""

    def submit_answer(
        self,
        estimate: float,
        ci_lower: float,
        ci_upper: float,
        adjustment_set: list[str] | None = None,
        effect_probability: float | None = None,
    ) -> str:
        """Submit the answer (once).

        Args:
            estimate: The ATE estimate.
            ci_lower: Its 90% interval's lower end.
            ci_upper: Its 90% interval's upper end.
            adjustment_set: Columns adjusted for (adjustment only).
            effect_probability: Probability the ATE is not zero (null_detect only).

        Returns:
            Whether it was accepted.
        """
        return self._submit(
            estimate=estimate, ci_lower=ci_lower, ci_upper=ci_upper,
            adjustment_set=adjustment_set, effect_probability=effect_probability,
        )  # fmt: skip


class CausalGymAnalystEnvironment(Rollout):
    """One rollout's environment in the analyst toolset (integrations/analyst_tools.py):
    the user turn is the README's question and dictionary; the tools are fit and
    report, whose numbers the family's kit computes in the rollout's sandbox.

    Its reward is the spec's `analyst_reward` (not a get_reward of its own): TRL runs
    a turn's tool calls only for `max_tool_calling_iterations` turns and then stops,
    so a report written in the last turn would never be submitted. analyst_reward
    runs the last turn's calls that TRL left unrun, then reads the score; with
    max_tool_calling_iterations=1 an episode is two generations (fit, then report)
    instead of three (a closing turn after the report)."""

    def fit(self, adjust_for: list[str], estimator: Literal["ols", "aipw"] = "ols") -> str:
        """Estimate the effect on the staged data.

        Args:
            adjust_for: Columns to adjust for; pre_treatment and post_treatment name every
                column of that timing; [] compares means.
            estimator: ols: regression; aipw: flexible, doubly robust.

        Returns:
            The estimate, its SE, 90% interval and p-value, or what to fix.
        """
        return self._session.call("fit", {"adjust_for": adjust_for, "estimator": estimator})

    def report(
        self,
        width: Literal["narrow", "standard", "wide"] = "standard",
        effect_probability: float | None = None,
    ) -> str:
        """Submit the answer built from the last fit (once).

        Args:
            width: The interval: the fit's 90% one x 0.5, 1 or 2.
            effect_probability: P(effect is not zero), null_detect only.

        Returns:
            Whether it was accepted, or what to fix.
        """
        arguments: dict[str, Any] = {"width": width}
        if effect_probability is not None:
            arguments["effect_probability"] = effect_probability
        return self._session.call("report", arguments)

    def _run_unrun(self, message: dict[str, Any]) -> None:
        """Run the tool calls of the rollout's last turn (an assistant message TRL
        parsed but did not run), as TRL would have: by name, the parsed arguments as
        keywords; a call that does not fit is not run."""
        tools: dict[str, Callable[..., str]] = {"fit": self.fit, "report": self.report}
        for call in message.get("tool_calls") or []:
            function = call.get("function", call) if isinstance(call, dict) else {}
            tool = tools.get(str(function.get("name")))
            arguments = function.get("arguments")
            if self.done or tool is None or not isinstance(arguments, dict):
                continue
            try:
                tool(**arguments)
            except TypeError:
                continue


def analyst_reward(
    completions: list[list[dict[str, Any]]], environments: list[Any], **_: Any
) -> list[float | None]:
    """The analyst rollouts' rewards: each rollout's last-turn calls that TRL left
    unrun are run (the report of the last allowed turn is submitted), then the
    scorer's clipped reward is read; None for other environments."""
    rewards: list[float | None] = []
    for completion, environment in zip(completions, environments, strict=True):
        if not isinstance(environment, CausalGymAnalystEnvironment):
            rewards.append(None)
            continue
        last = completion[-1] if completion else {}
        if isinstance(last, dict) and last.get("role") == "assistant":
            environment._run_unrun(last)
        rewards.append(environment._score())
    return rewards


class CausalGymEnvironment(RolloutEnvironment):
    """One rollout's environment in the full rendering: the user turn is the task's
    prompt and README; the tools are bash, python and submit_answer."""

    def bash(self, command: str) -> str:
        """Run a shell command in /workspace, which holds data.csv and README.md.

        Args:
            command: The shell command to run.

        Returns:
            The exit code, then standard output and standard error.
        """
        return self._session.call("bash", {"command": command})

    def python(self, code: str) -> str:
        """Run Python code in /workspace (pandas, numpy, scipy and statsmodels are there).

        Args:
            code: The Python source to run.

        Returns:
            The exit code, then standard output and standard error.
        """
        return self._session.call("python", {"code": code})

    def submit_answer(
        self,
        estimate: float,
        ci_lower: float,
        ci_upper: float,
        adjustment_set: list[str] | None = None,
        effect_probability: float | None = None,
        estimand: str | None = None,
    ) -> str:
        """Submit the final answer, once: the first valid submission ends the episode.

        Args:
            estimate: The estimated average treatment effect.
            ci_lower: The lower end of the 90% interval for it.
            ci_upper: The upper end of the 90% interval for it.
            adjustment_set: The columns adjusted for (adjustment tasks only).
            effect_probability: The probability that the effect is real (null_detect only).
            estimand: The estimand README.md's Design section names (iv, did, rdd only).

        Returns:
            Whether the submission was accepted, or what to fix.
        """
        return self._submit(
            estimate=estimate, ci_lower=ci_lower, ci_upper=ci_upper,
            adjustment_set=adjustment_set, effect_probability=effect_probability,
            estimand=estimand,
        )  # fmt: skip


class CausalGymTRL:
    """The spec: hand its three attributes to GRPOTrainer."""

    def __init__(
        self,
        source: TaskSource,
        num_generations: int,
        prompts_per_step: int = 1,
        settings: SessionSettings | None = None,
        rows: int | None = None,
    ) -> None:
        if num_generations < 1 or prompts_per_step < 1:
            raise IntegrationError("num_generations and prompts_per_step are at least 1")
        self.source = source
        self.settings = settings or SessionSettings()
        rendering = self.settings.rendering
        families, environment, system = {
            "readme": (TRL_FAMILIES, CausalGymEnvironment, SYSTEM_PROMPT),
            "brief": (BRIEF_FAMILIES, CausalGymBriefEnvironment, BRIEF_SYSTEM_PROMPT),
            "analyst": (ANALYST_FAMILIES, CausalGymAnalystEnvironment, ANALYST_SYSTEM_PROMPT),
        }[rendering]
        self.board = GroupBoard(source, num_generations, families)
        self._environment: type[Rollout] = environment
        self.system_prompt = system
        self.log: list[dict[str, Any]] = []
        self.rows = rows or prompts_per_step
        if self.rows % prompts_per_step:
            raise IntegrationError(
                f"rows ({self.rows}) must be a multiple of prompts_per_step ({prompts_per_step}): "
                "a slot must not come up twice in one generation batch"
            )
        self.environments: list[Rollout] = []

    @property
    def train_dataset(self) -> Any:
        """Placeholder rows (the system prompt and an empty user turn, which `reset`
        fills with the task), one `task_slot` each."""
        from datasets import Dataset

        prompt = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": ""},
        ]
        return Dataset.from_dict(
            {"prompt": [prompt] * self.rows, "task_slot": list(range(self.rows))}
        )

    @property
    def environment_factory(self) -> Callable[[], Rollout]:
        """What makes one environment per rollout (CausalGymEnvironment, or the brief
        one), each claiming from this spec's board and logging to `log`."""

        def make() -> Rollout:
            environment = self._environment(self.board, self.settings, self.log)
            self.environments.append(environment)
            return environment

        return make

    @property
    def reward_funcs(self) -> list[Any]:
        """The analyst toolset's `analyst_reward`; otherwise none besides the
        environments' own `get_reward` (TRL adds it, weight 1)."""
        return [analyst_reward] if self._environment is CausalGymAnalystEnvironment else []

    def close(self) -> None:
        """Close every environment's sandbox, then the source."""
        for environment in self.environments:
            environment._close()
        self.source.close()


def chatml_tool_template() -> str:
    """A ChatML chat template with tools that TRL knows how to parse tool calls from
    (its Qwen2.5 one): SmolLM2's own template renders no tools."""
    from trl.chat_template_utils import qwen2_5_chat_template

    return str(qwen2_5_chat_template)


def compact_tool_template() -> str:
    """chatml_tool_template with the tools listed one line each instead of as JSON
    schemas: for a small model whose prompt is most of every step (the analyst
    toolset's two tools take about 90 tokens this way, 400 as JSON). Tool calls are
    written and parsed as in Qwen2.5's template; give the tokenizer that template's
    response parser first (`trl.chat_template_utils.add_response_schema`)."""
    template = chatml_tool_template()
    start = template.index('{{- "\\n\\n# Tools')
    end = template.index("\n{%- else %}") + 1  # the else of `if tools`, at the margin
    compact = (
        '{{- "\\n\\nTools:" }}\n'
        "{%- for tool in tools %}{%- set f = tool.function if tool.function is defined else tool %}"
        '{{- "\\n- " + f.name + ": " + f.description }}'
        "{%- for name, p in f.parameters.properties.items() %}"
        '{{- " " + name + ": " + p.description }}'
        '{%- if p.enum is defined %}{{- " (" + p.enum | join(", ") + ")" }}{%- endif %}'
        "{%- endfor %}{%- endfor %}\n"
        '{{- "\\nCall a tool as <tool_call>\\n{\\"name\\": ..., \\"arguments\\": {...}}\\n'
        '</tool_call><|im_end|>\\n" }}\n'
    )
    return template[:start] + compact + template[end:]
