"""The generation pipeline: pipeline.py's `build_task` turns a task id, a key and a
row count into a Task; the other modules are its parts (the plan's draw, the SCM's
build, the anchors, solvability). `causal_gym.make.generate_task` is its one caller
that knows the frozen splits."""
