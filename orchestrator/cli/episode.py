"""`causal-gym-run episode TASK_ID --agent NAME`: one agent, one task, scored host-side."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orchestrator.agents.budgets import MIN_TOOL_OUTPUT_CHARS, TOOL_OUTPUT_CHARS
from orchestrator.cli.common import AGENT_HELP, app, check_seconds, fail
from orchestrator.errors import OrchestratorError

if TYPE_CHECKING:
    from causal_gym.task import Task
    from orchestrator.agents.types import EpisodeResult


def scored_record(task: Task, result: EpisodeResult) -> dict[str, Any]:
    """The episode's record plus its score (scored here, in the process that holds the
    truth; the agent only ever saw the wire format under an opaque handle)."""
    from causal_gym.scoring.answer import episode_score

    record: dict[str, Any] = result.model_dump(mode="json", exclude={"transcript", "handle"})
    return {
        "task_id": task.public.task_id,
        **record,
        **episode_score(task, result.submission).fields(),
    }


@app.command()
def episode(
    task_id: Annotated[str, typer.Argument(help="Public id <namespace>:<family>:<index>.")],
    agent: Annotated[str, typer.Option("--agent", help=AGENT_HELP)] = "reference",
    sandbox: Annotated[str, typer.Option("--sandbox", help="local or docker.")] = "local",
    image: Annotated[str | None, typer.Option("--image", help="Docker base image.")] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible URL.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model")] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Env var holding the API key.")
    ] = "OPENAI_API_KEY",
    temperature: Annotated[float | None, typer.Option("--temperature")] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens")] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1)] = 30,
    tool_output_chars: Annotated[
        int,
        typer.Option(
            "--tool-output-chars",
            min=MIN_TOOL_OUTPUT_CHARS,
            help="Characters of a tool's output the model sees.",
        ),
    ] = TOOL_OUTPUT_CHARS,
    tool_choice: Annotated[
        str, typer.Option("--tool-choice", help="auto, required or submit_last.")
    ] = "auto",
    timeout: Annotated[float, typer.Option("--timeout", help="Episode budget (s).")] = 600.0,
    transcript: Annotated[
        bool, typer.Option("--transcript", help="Include the transcript.")
    ] = False,
    key_file: Annotated[Path | None, typer.Option("--key-file")] = None,
) -> None:
    """Run one episode in a fresh sandbox, score it on the host, print the record."""
    from causal_gym.errors import CausalGymError
    from causal_gym.make import generate_task
    from causal_gym.rng_keys.keys import read_key_file, resolve_key
    from causal_gym.task_id import TaskId
    from orchestrator.agents import EpisodeConfig, OpenAIPolicyConfig, load_policy, run_episode
    from orchestrator.agents.openai_policy import TOOL_CHOICES
    from orchestrator.sandbox import make_sandbox
    from orchestrator.sandbox.registry import backend

    try:
        backend(sandbox)
    except ValueError as exc:
        fail(str(exc))
    if tool_choice not in TOOL_CHOICES:
        fail(f"unknown tool choice {tool_choice!r}: accepted are {', '.join(TOOL_CHOICES)}")
    check_seconds("--timeout", timeout)
    try:
        key = resolve_key(read_key_file(key_file) if key_file else None)
        task = generate_task(TaskId.parse(task_id), key)
    except CausalGymError as exc:
        fail(str(exc))
    openai_config = None
    if agent == "openai":
        if not base_url or not model:
            fail("the openai agent needs --base-url and --model")
        openai_config = OpenAIPolicyConfig(
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            temperature=temperature,
            max_tokens=max_tokens,
            tool_choice=tool_choice,  # type: ignore[arg-type]  # checked above
        )
    secret = () if key.is_default else (key.raw.hex(),)
    try:
        policy = load_policy(agent, openai_config, hidden_values=secret)
    except OrchestratorError as exc:
        fail(str(exc))
    config = EpisodeConfig(
        max_turns=max_turns, episode_timeout_s=timeout, tool_output_chars=tool_output_chars
    )
    try:
        with policy, make_sandbox(sandbox, image=image) as box:
            box.open(dict(task.public.files))
            result = run_episode(
                task.public.to_wire(secrets.token_urlsafe(12)), box, policy, config
            )
    except OrchestratorError as exc:
        fail(f"sandbox: {exc}", code=1)
    record = scored_record(task, result)
    if transcript:
        record["transcript"] = result.transcript
    typer.echo(json.dumps(record, indent=2))
