"""Executing a run on Ray: from a config to a finished run folder. What the run
leaves on disk, and how it is read back, is `orchestrator.records`; this package
writes through it, and nothing below it imports this one.

    session.py       one run from start to report: check everything, start Ray,
                     dispatch, publish
    config.py        what a run is: a validated config (TOML, then flags on top)
    config_files.py  reading any config file, and what is wrong with it in one line
    cluster.py       joining Ray: an embedded local instance, or a cluster (--address)
    leftovers.py     what a runner killed with SIGKILL leaves, and the one reaper
    head_key.py      the key on the head: read once, a 0600 file, never an env var
    head_actors.py   the only processes that hold the key or a truth: task
                     generators and the recorder (scores, seals, appends)
    episode_actor.py sandbox actors: agent episodes on any node (the worker side)
    dispatcher.py    tasks in, scored and durable attempts out, within budgets; the
                     one place that catches Ray's failures
    slots.py         sandbox actors as slots, and the retry policy (shared with a
                     stream's episode mode)
    nodes.py         which node each sandbox actor is on, and whether it is gone
    display.py       the live view: done, running, retried, failed, reward, ETA
    baselines.py     several agents over one sample, one baseline table

Worker-side code lives in episode_actor.py only: it imports agents, sandboxes and the
public wire, never a generator, SCM or key module; everything else runs on the head.
No imports here, so importing episode_actor loads nothing else of the package.
"""
