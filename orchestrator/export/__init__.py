"""A finished (or interrupted) run folder in another tool's format, for
`causal-gym-run export` and `inspect_log = true`. Exports read the run folder only
through `orchestrator.records` (the verified records, the transcripts, the summary)
and import nothing of execution: exporting needs no Ray, only the head whose secret
verifies the records.

    inspect_log.py       the run as one inspect_ai `.eval` log for `inspect view`:
                         the file, its header, aggregates and stats
    inspect_samples.py   one task's final attempt as an EvalSample: score, metadata,
                         and the redaction of a secret-key run (opaque sample ids)
    inspect_messages.py  a stored transcript as inspect_ai ChatMessages, and the
                         submission it ended with

inspect_ai (the `inspect` extra) is imported only inside these modules' functions.
No imports here.
"""
