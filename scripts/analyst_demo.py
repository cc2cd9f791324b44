"""What the analyst-toolset demo's scripts share (analyst_sft.py, analyst_grpo.py,
analyst_eval.py): one episode played token by token exactly as TRL's GRPOTrainer plays
it, whoever writes the assistant's turns.

TRL renders the prompt with the chat template and the environment's tools, generates
a turn, parses its tool calls (trl.chat_template_utils.parse_response), calls the
environment's methods with the parsed arguments (an exception becomes the tool's
result, `{'error': ...}`), appends the template's tool-response tokens and generates
again, `max_tool_calling_iterations` (1) times; the reward function (trl.py's
analyst_reward) then runs the last turn's calls. `play` does the same with any
`Writer`: the
llama.cpp model (evaluation and the warm start's gate), or a script that writes the
decisions it is given (the warm start's targets), so the tokens the warm start teaches
are the tokens GRPO samples and the evaluation reads.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smollm2_demo import load_tokenizer as load_plain_tokenizer
from smollm2_demo import prompt_ids, tools_of

from orchestrator.integrations.session import SessionSettings
from orchestrator.integrations.sources import TaskSource
from orchestrator.integrations.trl import (
    CausalGymAnalystEnvironment,
    CausalGymTRL,
    analyst_reward,
    compact_tool_template,
)

#: fit, then report (run by analyst_reward): TRL's max_tool_calling_iterations.
TOOL_ITERATIONS = 1
#: The completion budget (every turn and tool response after the prompt), as TRL's
#: max_completion_length; a turn is cut where it would pass it.
MAX_COMPLETION_TOKENS = 224

#: The options the warm start draws from uniformly (decision_values.md chose them).
COLUMN_OPTIONS: dict[str, list[str]] = {
    "none": [],
    "pre": ["pre_treatment"],
    "all": ["pre_treatment", "post_treatment"],
}
ESTIMATOR_OPTIONS = ("ols", "aipw")
WIDTH_OPTIONS = ("narrow", "standard", "wide")
PROBABILITY_OPTIONS = (0.1, 0.3, 0.5, 0.7, 0.9)

Writer = Callable[[list[int], int], list[int]]


def load_tokenizer() -> Any:
    """The demo's tokenizer (every checkpoint is an adapter on the base model, so there
    is one): smollm2_demo's, with Qwen2.5's tool-call parser (set before the template
    changes: TRL picks the parser by template) and the compact tool template."""
    from trl.chat_template_utils import add_response_schema

    tok = load_plain_tokenizer()
    add_response_schema(tok)
    tok.chat_template = compact_tool_template()
    return tok


def parsed_turn(tok: Any, ids: list[int]) -> dict[str, Any]:
    """A generated turn as TRL parses it: an assistant message, tool_calls if any."""
    from trl.chat_template_utils import parse_response

    return dict(parse_response(tok, ids))


def analyst_spec(source: TaskSource, generations: int, prompts_per_step: int = 1) -> CausalGymTRL:
    return CausalGymTRL(
        source, generations, prompts_per_step, settings=SessionSettings(rendering="analyst")
    )


def tool_suffix_ids(tok: Any, tool_messages: list[dict[str, Any]]) -> list[int]:
    """The tokens TRL appends after a turn's tool calls (GRPOTrainer._get_tool_suffix_ids)."""
    calls = [{"type": "function", "function": {"name": tool_messages[0]["name"], "arguments": {}}}]
    dummy = [
        {"role": "user", "content": "dummy"},
        {"role": "assistant", "content": "", "tool_calls": calls},
    ]
    prefix = list(
        tok.apply_chat_template(
            dummy, add_generation_prompt=False, tokenize=True, return_dict=False
        )
    )
    full = list(
        tok.apply_chat_template(
            dummy + tool_messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
    )
    ends = [i for i, t in enumerate(prefix) if t == tok.eos_token_id]
    if ends:
        prefix = prefix[: ends[-1] + 1]
    if full[: len(prefix)] != prefix:
        raise SystemExit("analyst_demo: the chat template does not extend its own prefix")
    return full[len(prefix) :]


def turn_ids(tok: Any, call: dict[str, Any] | None, text: str = "") -> list[int]:
    """The tokens of one assistant turn as a model writes it (the template's rendering
    after the assistant header, through the end-of-turn token)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if call is not None:
        message["tool_calls"] = [{"type": "function", "function": call}]
    head = [{"role": "user", "content": "x"}]
    before = list(
        tok.apply_chat_template(head, add_generation_prompt=True, tokenize=True, return_dict=False)
    )
    after = list(tok.apply_chat_template([*head, message], tokenize=True, return_dict=False))
    if after[: len(before)] != before:
        raise SystemExit("analyst_demo: the chat template does not extend its own prompt")
    ids = after[len(before) :]
    return ids[: ids.index(tok.eos_token_id) + 1]


def run_calls(env: CausalGymAnalystEnvironment, turn: dict[str, Any]) -> list[dict[str, Any]]:
    """The turn's tool calls run as TRL runs them; their tool messages (empty: none)."""
    tools = {t.__name__: t for t in tools_of(env)}
    messages = []
    for call in turn.get("tool_calls") or []:
        function = call["function"]
        name = function["name"]
        try:
            if name not in tools:
                raise ValueError(f"Tool {name} not found.")
            result: Any = tools[name](**function["arguments"])
        except Exception as exc:  # TRL turns any failure into the tool's result
            result = {"error": str(exc)}
        messages.append({"role": "tool", "name": name, "content": str(result)})
    return messages


@dataclass
class Episode:
    """One played episode: the token ids after the prompt, which of them the model
    wrote (1) and which a tool response (0), the turns' texts and the outcome."""

    prompt: list[int]
    completion: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)
    record: dict[str, Any] = field(default_factory=dict)


def play(
    tok: Any, spec: CausalGymTRL, env: CausalGymAnalystEnvironment, slot: int, write: Writer
) -> Episode:
    """Reset `env` to the task of `slot`, play its episode with `write` and score it;
    `write(ids, budget)` returns the next turn's ids (ending with the end-of-turn
    token unless the budget cut it)."""
    user = env.reset(task_slot=slot)
    episode = Episode(prompt_ids(tok, spec, env, user))
    turn: dict[str, Any] = {}
    for iteration in range(TOOL_ITERATIONS + 1):
        budget = MAX_COMPLETION_TOKENS - len(episode.completion)
        ids = write(episode.prompt + episode.completion, budget)[:budget]
        episode.completion += ids
        episode.mask += [1] * len(ids)
        episode.turns.append(tok.decode(ids, skip_special_tokens=True))
        turn = parsed_turn(tok, ids) if ids else {}
        if iteration == TOOL_ITERATIONS or not turn.get("tool_calls"):
            break
        messages = run_calls(env, turn)
        suffix = tool_suffix_ids(tok, messages)
        if len(episode.completion) + len(suffix) > MAX_COMPLETION_TOKENS:
            break  # TRL rolls the tool response back and ends the episode
        episode.completion += suffix
        episode.mask += [0] * len(suffix)
    analyst_reward([[turn] if turn else []], [env])  # runs the last turn's calls, scores
    episode.record = dict(spec.log[-1])
    return episode


def random_decisions(rng: random.Random, family: str) -> dict[str, Any]:
    """The warm start's decisions: every option equally likely."""
    return {
        "columns": rng.choice(sorted(COLUMN_OPTIONS)),
        "estimator": rng.choice(ESTIMATOR_OPTIONS),
        "width": rng.choice(WIDTH_OPTIONS),
        "effect_probability": rng.choice(PROBABILITY_OPTIONS) if family == "null_detect" else None,
    }


def scripted_writer(tok: Any, decide: Callable[[int], dict[str, Any]]) -> Writer:
    """A Writer that makes the given decisions: fit, then report. `decide(turn)` is
    asked before each turn (the report's probability may depend on the fit the
    environment just ran)."""
    turn = {"n": 0}

    def write(ids: list[int], budget: int) -> list[int]:
        n = turn["n"]
        turn["n"] += 1
        choice = decide(n)
        if n == 0:
            fit = {
                "adjust_for": COLUMN_OPTIONS[choice["columns"]],
                "estimator": choice["estimator"],
            }
            return turn_ids(tok, {"name": "fit", "arguments": fit})
        report: dict[str, Any] = {"width": choice["width"]}
        if choice["effect_probability"] is not None:
            report["effect_probability"] = choice["effect_probability"]
        return turn_ids(tok, {"name": "report", "arguments": report})

    return write


def decision_of(record: dict[str, Any]) -> dict[str, Any]:
    """The decisions a logged rollout made, named as the options are (None where the
    call did not happen or did not match an option)."""
    fit, report = record.get("fit") or {}, record.get("report") or {}
    columns = next((k for k, v in COLUMN_OPTIONS.items() if v == fit.get("adjust_for")), None)
    return {
        "columns": columns if fit else None,
        "estimator": fit.get("estimator"),
        "width": report.get("width") if report else None,
        "effect_probability": report.get("effect_probability") if report else None,
    }
