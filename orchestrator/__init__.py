"""Distributed runner for causal-gym on Ray: head-pinned generator and scorer actors,
sandbox actors that run agent episodes, durable run folders, streams for RL trainers
and the trainer adapters. `causal-gym-run` is its command line.

    cli/           the `causal-gym-run` commands
    integrations/  trainer adapters (TRL, verl, SkyRL) over one task session
    stream/        fresh-key task streams for RL trainers, served over HTTP
    run/           executing a run on Ray: config, cluster, head and sandbox actors,
                   the dispatcher
    export/        a run folder in another tool's format (inspect_ai logs)
    records/       the run folder: its records, their MACs and chain, read-back,
                   summary and report
    agents/        the episode loop and the policies that drive it
    sandbox/       sandboxes for agent commands (bubblewrap, Docker)
    local_model.py a local llama.cpp model server (`python -m orchestrator.local_model`)
    host/          what a runner keeps on a shared head: the per-user state folder,
                   private files, process owners
    errors.py      the one error root, OrchestratorError, and its leaves

Imports run down this list (cli at the top, errors at the bottom): nothing imports a
package above it.
"""
