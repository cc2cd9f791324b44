"""The namespaces of task ids, and with them the frozen splits: the one place a split
is spelled.

A task id is `<namespace>:<family>:<index>`. `train` is unbounded and keyed by
whoever generates; every other namespace is a frozen split, whose ids, row counts
and staged bytes a manifest pins (causal_gym/splits/). Families say which splits
hold them, and how many tasks each, by these values (FamilyContract.splits).
"""

from __future__ import annotations

from enum import StrEnum


class Namespace(StrEnum):
    """A task id's first part: train, or one frozen split."""

    TRAIN = "train"
    EVAL_V1 = "eval-v1"
    EVAL_V2 = "eval-v2"
    EVAL_EXPERT_V1 = "eval-expert-v1"
    EVAL_V3 = "eval-v3"
    EVAL_REAL_V1 = "eval-real-v1"


NAMESPACES: tuple[str, ...] = tuple(n.value for n in Namespace)
#: The frozen splits: every namespace but train.
SPLITS: tuple[str, ...] = tuple(n for n in NAMESPACES if n != Namespace.TRAIN)
#: The expert tier's frozen split: a family with a count there has an expert tier.
EXPERT_SPLIT = Namespace.EVAL_EXPERT_V1
#: The real tier's frozen split: a family with a count there has a real tier.
REAL_SPLIT = Namespace.EVAL_REAL_V1
