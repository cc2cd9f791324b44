"""Adapters that put causal-gym tasks into trainer libraries' own interfaces.

One module per trainer, each importing its trainer only inside itself (install the
matching extra): `trl` (a GRPOTrainer spec), `skyrl` (a skyrl-gym `BaseTextEnv`) and
`verl` (an `AgentLoopBase`). What they share: `sources` (where
tasks and scores come from: a stream over HTTP, or a generator in this process),
`settings` (what a trainer's config file says), `groups` (GRPO's groups) and
`session` (one task's sandbox, tools and score), so every adapter runs the same tools
as the project's own agents and gets its reward from the same scorer.
"""
