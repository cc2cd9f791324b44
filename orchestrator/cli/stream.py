"""`causal-gym-run stream start|status|export-key|stop NAME`: trainer streams."""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

import typer

from orchestrator.cli.common import app, fail

stream_app = typer.Typer(
    help="Fresh-key infinite task streams for RL trainers.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(stream_app, name="stream")
NameArgument = Annotated[str, typer.Argument(help="The stream's name in the cluster.")]
AddressOption = Annotated[
    str, typer.Option("--address", help="Ray cluster (started with the head resource).")
]


def _connect(address: str) -> None:
    from orchestrator.run.cluster import ClusterError, connect

    os.environ.setdefault("RAY_AUTH_MODE", "token")
    try:
        connect(address)
    except ClusterError as exc:
        fail(str(exc))


def _actor(name: str) -> object:
    import ray

    from orchestrator.stream.client import NAMESPACE

    try:
        return ray.get_actor(name, namespace=NAMESPACE)
    except ValueError:
        fail(f"no stream named {name!r} in this cluster")


@stream_app.command("start")
def start(
    name: NameArgument,
    address: AddressOption = "auto",
    families: Annotated[
        str, typer.Option("--families", help="Comma-separated.")
    ] = "ate,adjustment,null_detect",
    sandbox: Annotated[
        str, typer.Option("--sandbox", help="local or docker (episode mode).")
    ] = "local",
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Episodes in flight.")
    ] = 8,
    episodes_per_actor: Annotated[int, typer.Option("--episodes-per-actor", min=1)] = 8,
    handle_ttl: Annotated[
        float, typer.Option("--handle-ttl", min=1.0, help="Seconds a handle lives.")
    ] = 3600.0,
) -> None:
    """Start a named, detached stream on the head; it makes its own key and keeps it."""
    import ray

    from causal_gym.task_id import FAMILIES
    from orchestrator.run.config import HEAD_RESOURCE
    from orchestrator.stream.client import NAMESPACE
    from orchestrator.stream.service import StreamService

    chosen = tuple(f.strip() for f in families.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown or not chosen:
        fail(f"unknown families {unknown}: accepted families are {', '.join(FAMILIES)}")
    if sandbox not in ("local", "docker"):
        fail(f"unknown sandbox {sandbox!r}: accepted sandboxes are local, docker")
    _connect(address)
    try:
        ray.get_actor(name, namespace=NAMESPACE)
        fail(f"a stream named {name!r} already runs in this cluster")
    except ValueError:
        pass
    service: Any = (
        ray.remote(StreamService)
        .options(
            name=name,
            namespace=NAMESPACE,
            lifetime="detached",
            num_cpus=0,
            resources={HEAD_RESOURCE: 0.001},
            max_concurrency=32,
        )
        .remote(name, chosen, handle_ttl, 10_000, sandbox, None, concurrency, episodes_per_actor)
    )
    ray.get(service.ready.remote())
    stats = ray.get(service.stats.remote())
    typer.echo(json.dumps({"stream": name, "key_fingerprint": stats.key_fingerprint}))


@stream_app.command("status")
def status(name: NameArgument, address: AddressOption = "auto") -> None:
    """Print a stream's counters as JSON."""
    import ray

    _connect(address)
    typer.echo(ray.get(_actor(name).stats.remote()).model_dump_json(indent=2))  # type: ignore[attr-defined]


@stream_app.command("export-key")
def export_key(
    name: NameArgument,
    to: Annotated[str, typer.Option("--to", help="A new file on the head (written 0600).")],
    address: AddressOption = "auto",
) -> None:
    """Write the stream's key to a new 0600 file on the head (for audits; keep it there)."""
    import ray

    _connect(address)
    try:
        fingerprint = ray.get(_actor(name).export_key.remote(os.path.abspath(to)))  # type: ignore[attr-defined]
    except ray.exceptions.RayTaskError as exc:
        fail(str(getattr(exc, "cause", exc)))
    typer.echo(
        json.dumps({"stream": name, "key_fingerprint": fingerprint, "file": os.path.abspath(to)})
    )


@stream_app.command("stop")
def stop(name: NameArgument, address: AddressOption = "auto") -> None:
    """Stop a stream: its key and outstanding truths are gone for good."""
    import ray

    _connect(address)
    actor = _actor(name)
    ray.get(actor.stop.remote())  # type: ignore[attr-defined]
    ray.kill(actor)  # type: ignore[arg-type]
    typer.echo(json.dumps({"stopped": name}))
