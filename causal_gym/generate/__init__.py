"""The generation pipeline: pipeline.py turns a task id and a key into a Task; the
other modules are its parts (the anchors, solvability, the trial file, versions)."""
