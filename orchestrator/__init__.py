"""Distributed runner for causal-gym on Ray: head-pinned generator and scorer actors,
sandbox actors that run agent episodes, durable run folders, streams for RL trainers
and the trainer adapters. `causal-gym-run` is its command line."""
