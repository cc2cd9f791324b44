"""The run folder and its records: what a run leaves on disk, how each line is sealed,
and how every reader gets it back. Execution (`orchestrator.run`) writes through
this package, exports (`orchestrator.export`) and scripts read through it, and it
imports neither: the record format does not depend on how a run was executed.

    layout.py     the folder's files, the run's identity (run.json), and the checks
                  before a new or resumed run writes to it
    types.py      the records: one ScoredEpisode line per finished attempt, the
                  transcript lines, the recorder's progress note (schema-versioned)
    mac.py        a MAC on every line and on run.json, under a key derived from the
                  head's secret, never stored in the folder
    chain.py      results.jsonl as a hash chain anchored on the head: a deleted, moved
                  or cut-off line is noticed
    read_back.py  the one way to read results.jsonl back: only lines this run's
                  recorder wrote, each counted once, none missing
    run_folder.py a finished (or interrupted) folder read back whole, for exports
    summary.py    summary.json: the run's labels and redacted aggregates
    report.py     the shareable outputs (summary.json, report.md, plots) and the
                  baseline table, computed from the records alone

No imports here: each reader takes the module it needs.
"""
