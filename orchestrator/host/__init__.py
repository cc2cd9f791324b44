"""What a runner keeps on the machine it runs on, safe on a head other people log in
to (DESIGN 8d): nothing is trusted in a world-writable place.

    private_state.py  the per-user state folder (0700, checked on the way, no links)
                      where one runner leaves what a later one reads: Ray markers,
                      key copies, sandbox roots, the records' secret and anchors
    private_files.py  files only their owner reads: 0700 folders, 0600 files created
                      without following a link, written atomically or appended durably
    owners.py         who made a thing (pid and start time) and whether that process
                      still runs, so a dead runner's leftovers are told from live state

Everything above it (sandboxes, runs, run folders, streams) writes through these; the
package imports nothing of the orchestrator but its errors. No imports here: the
worker side loads `private_state` through the sandbox, and nothing more.
"""
