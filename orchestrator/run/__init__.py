"""Runs on Ray: config, head actors (generator, scorer), sandbox actors, the
dispatcher, durable results and reports. Worker-side code lives in episode_actor.py
only; everything else runs on the head."""
