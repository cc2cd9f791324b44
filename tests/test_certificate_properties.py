"""Property tests over many ids: the promises of the README hold on the hidden graph."""

from __future__ import annotations

import itertools
import math

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causal_gym.contracts.families import contract_of
from causal_gym.generate.draw import plan_task
from causal_gym.hooks import hooks_of
from causal_gym.plan.tiers import TIER_ORDER, TIER_SPECS, TRAIN_JITTER
from causal_gym.scm.identification import satisfies_backdoor
from causal_gym.task_id import TaskId
from tests.conftest import FAMILIES, SHARED_SAMPLE, cached_task

ids = st.sampled_from(SHARED_SAMPLE)
PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BLOCKING_ROLES = {"confounder", "latent_blocker", "decoy_parent", "effect_modifier"}


def hidden_graph(task_id: str) -> tuple[nx.DiGraph, object]:
    hidden = cached_task(task_id).hidden
    graph = nx.DiGraph()
    graph.add_nodes_from(hidden.roles)
    graph.add_edges_from(hidden.edges)
    return graph, hidden


@PROPS
@given(ids)
def test_declared_set_satisfies_backdoor(task_id: str) -> None:
    """Except in obs_vs_rct's confounded class, where it must fail, through an
    unobserved confounder of the treatment."""
    graph, h = hidden_graph(task_id)
    confounded = h.effect_class.value == "confounded"
    assert satisfies_backdoor(graph, h.treatment, h.outcome, h.pre_treatment) != confounded
    hidden = [n for n, role in h.roles.items() if role == "unobserved_confounder"]
    assert bool(hidden) == confounded
    assert all(graph.has_edge(u, h.treatment) and graph.has_edge(u, h.outcome) for u in hidden)
    assert not set(h.pre_treatment) & nx.descendants(graph, h.treatment)
    assert set(h.latent).isdisjoint(h.pre_treatment)


@PROPS
@given(ids)
def test_removing_a_true_confounder_breaks_d_separation(task_id: str) -> None:
    graph, h = hidden_graph(task_id)
    blockers = [c for c in h.pre_treatment if h.roles[c] in BLOCKING_ROLES]
    assert blockers, "every task has at least one confounder"
    for column in blockers:
        reduced = [c for c in h.pre_treatment if c != column]
        assert not satisfies_backdoor(graph, h.treatment, h.outcome, reduced), column


@PROPS
@given(ids)
def test_collider_decoy_alone_opens_a_path(task_id: str) -> None:
    graph, h = hidden_graph(task_id)
    if h.effect_class.value == "confounded":
        graph.remove_nodes_from([n for n, r in h.roles.items() if r == "unobserved_confounder"])
    confounding = {"confounder", "latent_blocker", "effect_modifier"}
    if h.tier.value == "real":  # the table's columns may share causes: Y's parents too
        confounding.add("outcome_predictor")
    confounders = [c for c in h.pre_treatment if h.roles[c] in confounding]
    for decoy in (c for c in h.pre_treatment if h.roles[c] == "collider_decoy"):
        assert satisfies_backdoor(graph, h.treatment, h.outcome, confounders) or not confounders
        assert not satisfies_backdoor(graph, h.treatment, h.outcome, [*confounders, decoy])


ROLE_WORDS = (
    "latent",
    "instrument",
    "collider",
    "decoy",
    "mediat",
    "irrelevant",
    "noise",
    "proxy",
    "blocker",
    "effect_class",
    "structural_null",
    "predictor",
)


@PROPS
@given(ids)
def test_truth_never_reaches_staged_files(task_id: str) -> None:
    task = cached_task(task_id)
    readme = task.public.files["README.md"].decode()
    data = "\n".join(v.decode() for k, v in task.public.files.items() if k.endswith(".csv"))
    h = task.hidden
    for e in h.estimands.values():
        stored = (e.reference_se, e.scale, e.reference_estimate)  # None: an expert task's
        secrets = [repr(x) if x is not None else repr(e.reference_width) for x in stored]
        if e.value != 0.0:
            secrets += [repr(e.value), f"{e.value:.4f}", f"{e.value:.3f}"]
        for text in secrets:
            assert text not in readme, text
        for text in secrets[:4]:
            assert text not in data, text
    lowered = readme.lower()
    for word in ROLE_WORDS:
        if word == "mediat" and h.family.value == "mediation":
            continue  # mediation declares its one mediator by design
        assert word not in lowered, word
    # the column table (names and descriptions) must not even talk about confounding
    table = [line for line in lowered.splitlines() if line.startswith("| `")]
    assert table and not any("confound" in line or "cause" in line for line in table)
    for latent in h.latent:
        assert latent not in readme and latent not in data


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FAMILIES), st.integers(0, 10**12))
def test_train_jitter_within_half_and_tiers_overlap(default_key, family: str, index: int) -> None:
    plan = plan_task(default_key, TaskId.parse(f"train:{family}:{index}"))
    assert abs(plan.staged_rows / plan.base_rows - 1.0) <= 0.5 + 1e-12
    low, high = TIER_SPECS[plan.tier].staged_rows
    factor = hooks_of(family).rows_factor  # the multi-estimand families stage more
    assert round(low * factor) <= plan.base_rows <= round(high * factor)
    split = next(iter(contract_of(family).splits))
    evaluation = plan_task(default_key, TaskId.parse(f"{split}:{family}:{index}"))
    assert evaluation.staged_rows == evaluation.base_rows  # no jitter outside train


def test_adjacent_tier_ranges_overlap() -> None:
    for easier, harder in itertools.pairwise(TIER_ORDER):
        easy_low, _ = TIER_SPECS[easier].staged_rows
        _, hard_high = TIER_SPECS[harder].staged_rows
        assert easy_low < hard_high
        # with train jitter the overlap only widens
        assert math.ceil(easy_low * TRAIN_JITTER[0]) < math.floor(hard_high * TRAIN_JITTER[1])
