from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from causal_gym.errors import TaskIdError
from causal_gym.task_id import FAMILIES, NAMESPACES, Family, Namespace, TaskId


@given(st.sampled_from(NAMESPACES), st.sampled_from(FAMILIES), st.integers(0, 10**18 - 1))
def test_parse_round_trips(namespace: str, family: str, index: int) -> None:
    text = f"{namespace}:{family}:{index}"
    parsed = TaskId.parse(text)
    assert str(parsed) == text
    assert parsed == TaskId(Namespace(namespace), Family(family), index)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("train:ate", "expected <namespace>:<family>:<index>"),
        ("train:ate:1:2", "expected <namespace>:<family>:<index>"),
        ("test:ate:1", "accepted namespaces are train, eval-v1"),
        ("train:cates:1", "accepted families are ate, adjustment, null_detect, cate, mediation"),
        ("train:ate:-1", "non-negative decimal integer"),
        ("train:ate:01", "without sign or leading zeros"),
        ("train:ate:+3", "non-negative decimal integer"),
        ("train:ate: 3", "non-negative decimal integer"),
        ("train:ate:1e3", "non-negative decimal integer"),
        ("Train:ate:1", "accepted namespaces"),
    ],
)
def test_bad_ids_name_what_is_accepted(text: str, fragment: str) -> None:
    with pytest.raises(TaskIdError) as info:
        TaskId.parse(text)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)
