from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest

from causal_gym.families.null_detect.contract import NULL_BLOCK_SIZE
from causal_gym.families.null_detect.hooks import null_block_classes
from causal_gym.generate.draw import effect_class_for
from causal_gym.plan.task_plan import EFFECT_MAGNITUDE, EffectClass
from causal_gym.task_id import Namespace, TaskId
from tests.conftest import cached_task


@pytest.mark.parametrize("namespace", list(Namespace))
def test_every_block_is_exactly_7_7_6(default_key, other_key, namespace: Namespace) -> None:
    orders = set()
    for key in (default_key, other_key):
        for block in range(200):
            classes = null_block_classes(key, namespace, block)
            assert len(classes) == NULL_BLOCK_SIZE
            assert Counter(classes) == {
                EffectClass.STRUCTURAL_NULL: 7,
                EffectClass.HARD_NONNULL: 7,
                EffectClass.WIDE_NONNULL: 6,
            }
            orders.add(classes)
    assert len(orders) == 400  # keyed: blocks are not one repeated order


def test_task_classes_follow_their_block(default_key) -> None:
    block = null_block_classes(default_key, Namespace.TRAIN, 3)
    for position in range(NULL_BLOCK_SIZE):
        tid = TaskId.parse(f"train:null_detect:{3 * NULL_BLOCK_SIZE + position}")
        assert effect_class_for(default_key, tid) is block[position]


def test_generated_truths_match_their_class(default_key) -> None:
    for index in range(NULL_BLOCK_SIZE):
        task = cached_task(f"train:null_detect:{index}")
        hidden = task.hidden
        graph = nx.DiGraph(hidden.edges)
        has_path = nx.has_path(graph, hidden.treatment, hidden.outcome)
        low, high = EFFECT_MAGNITUDE[hidden.effect_class]
        if hidden.effect_class is EffectClass.STRUCTURAL_NULL:
            assert hidden.ate == 0.0 and not has_path
        else:
            assert has_path and low <= abs(hidden.ate) <= high
    classes = Counter(cached_task(f"train:null_detect:{i}").hidden.effect_class for i in range(20))
    assert classes == {
        EffectClass.STRUCTURAL_NULL: 7,
        EffectClass.HARD_NONNULL: 7,
        EffectClass.WIDE_NONNULL: 6,
    }
