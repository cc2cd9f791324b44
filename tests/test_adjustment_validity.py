"""Adjustment-set validity on hand-built graphs with known answers."""

from __future__ import annotations

import networkx as nx
import pytest

from causal_gym.estimand import Estimand
from causal_gym.families.adjustment.hooks import adjustment_validity
from causal_gym.plan.task_plan import EffectClass
from causal_gym.plan.tiers import Tier
from causal_gym.scm.identification import satisfies_backdoor
from causal_gym.task import HiddenTruth
from causal_gym.task_id import Family


def truth(
    edges: list[tuple[str, str]], pre: tuple[str, ...], latent: tuple[str, ...] = ()
) -> HiddenTruth:
    nodes = {n for edge in edges for n in edge}
    return HiddenTruth(
        task_id="train:adjustment:0",
        family=Family("adjustment"),
        tier=Tier.EASY,
        effect_class=EffectClass.STANDARD,
        estimands={"ate": Estimand(1.0, 1.0, 0.1, 0.33, 1.0)},
        treatment="t",
        outcome="y",
        pre_treatment=pre,
        post_treatment=tuple(sorted(nodes - set(pre) - set(latent) - {"t", "y"})),
        latent=latent,
        roles={n: "x" for n in nodes},
        edges=tuple(edges),
        generation_attempts=1,
    )


CASES = {
    # X confounds: {} invalid, {x} valid
    "confounder": (truth([("x", "t"), ("x", "y"), ("t", "y")], ("x",)), {(): 0.0, ("x",): 1.0}),
    # M-bias: u1 -> t, u1 -> m <- u2 -> y. {} valid, {m} opens the collider.
    "m_bias": (
        truth(
            [("u1", "t"), ("u1", "m"), ("u2", "m"), ("u2", "y"), ("t", "y")], ("m",), ("u1", "u2")
        ),
        {(): 1.0, ("m",): 0.0},
    ),
    # M-bias with an observed treatment-side parent: {m} invalid, {a, m} and {a} valid.
    "decoy": (
        truth([("a", "t"), ("a", "m"), ("u", "m"), ("u", "y"), ("t", "y")], ("a", "m"), ("u",)),
        {(): 1.0, ("m",): 0.0, ("a",): 1.0, ("a", "m"): 1.0},
    ),
    # Mediator t -> med -> y: adjusting for it is not allowed (post-treatment).
    "mediator": (
        truth([("x", "t"), ("x", "y"), ("t", "med"), ("med", "y")], ("x",)),
        {("x",): 1.0, ("x", "med"): 0.0, ("med",): 0.0},
    ),
    # Latent confounder blocked by its observed child on the treatment side.
    "latent_blocked": (
        truth([("l", "b"), ("b", "t"), ("l", "y"), ("t", "y")], ("b",), ("l",)),
        {(): 0.0, ("b",): 1.0},
    ),
    # Collider of t and y (a descendant of both): never allowed.
    "outcome_collider": (
        truth([("x", "t"), ("x", "y"), ("t", "y"), ("t", "c"), ("y", "c")], ("x",)),
        {("x",): 1.0, ("x", "c"): 0.0},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_known_valid_and_invalid_sets(name: str) -> None:
    hidden, expectations = CASES[name]
    for names, expected in expectations.items():
        assert adjustment_validity(hidden, list(names)) == expected, (name, names)


def test_names_outside_the_declared_pre_treatment_set_are_invalid() -> None:
    hidden, _ = CASES["latent_blocked"]
    assert adjustment_validity(hidden, ["b", "l"]) == 0.0  # a latent is not a column
    assert adjustment_validity(hidden, ["b", "y"]) == 0.0


def test_backdoor_rejects_descendants_even_if_d_separating() -> None:
    g = nx.DiGraph([("x", "t"), ("x", "y"), ("t", "y"), ("t", "d")])
    assert satisfies_backdoor(g, "t", "y", {"x"})
    assert not satisfies_backdoor(g, "t", "y", {"x", "d"})


def test_backdoor_refuses_the_treatment_the_outcome_and_unknown_nodes() -> None:
    """Each guard on its own: the certificate calls satisfies_backdoor directly, so
    these cannot lean on the reward's declared-column check."""
    g = nx.DiGraph([("x", "t"), ("x", "y"), ("t", "y")])
    assert satisfies_backdoor(g, "t", "y", {"x"})
    assert not satisfies_backdoor(g, "t", "y", {"x", "t"})
    assert not satisfies_backdoor(g, "t", "y", {"x", "y"})
    assert not satisfies_backdoor(g, "t", "y", {"x", "ghost"})
