"""The one audit protocol: every suite is found by name, covers one frozen split, and
its committed report round-trips through its model, passes its checks when they are
recomputed from the numbers (not read from the stored flags), stays inside the 1%
budget, and has its plots and tables."""

from __future__ import annotations

import json

import pytest

from causal_gym.audit.checks import FALSE_ALARM_BUDGET
from causal_gym.audit.plots import PLOT_NAMES
from causal_gym.audit.runner import run_audit
from causal_gym.audit.suite import suite, suite_for_split, suite_names
from causal_gym.errors import AuditSuiteError
from causal_gym.rng_keys.keys import DEFAULT_EVAL_KEY, DerivationKey, parse_key_hex
from causal_gym.task_id import SPLITS
from causal_gym.versions import generator_version, reward_version

SUITES = suite_names()


def test_every_frozen_split_has_exactly_one_suite_and_names_are_checked() -> None:
    assert SUITES == ("seed", "estimand", "expert", "design", "real")
    assert sorted(suite(name).split for name in SUITES) == sorted(SPLITS)
    for split in SPLITS:
        assert suite_for_split(split).split == split
    accepted = "accepted audit suites are seed, estimand, expert, design, real"
    with pytest.raises(AuditSuiteError, match=accepted):
        suite("seeds")
    with pytest.raises(AuditSuiteError, match="accepted are eval-v1"):
        suite_for_split("train")


@pytest.mark.parametrize("name", SUITES)
def test_the_committed_report_round_trips_through_its_model(name: str) -> None:
    """Nothing in the file is dropped or invented by the model the suite reads it with."""
    chosen = suite(name)
    report = chosen.load_committed()
    on_disk = json.loads(chosen.committed_path.read_text("utf-8"))
    assert report.model_dump(mode="json") == on_disk


def reproduces(made_by: int, families: tuple[str, ...]) -> bool:
    """Whether today's generator stages these families' train tasks as generator
    `made_by` did: no version since changed any of them (versions.py: version 4 the
    real tier's covariate families, version 5 the design families with a real table,
    version 6 mediation)."""
    from causal_gym.realdata.design_tables import design_families
    from causal_gym.task_id import REAL_FAMILIES

    changed_by = {4: REAL_FAMILIES, 5: design_families(), 6: ("mediation",), 7: ("iv",)}
    today = generator_version("train")
    changed = {f for v in range(made_by + 1, today + 1) for f in changed_by[v]}
    return made_by >= 3 and not set(families) & changed


def scores_alike(made_by: int, namespace: str, families: tuple[str, ...]) -> bool:
    """Whether today's reward scores these families' tasks in `namespace` as version
    `made_by` did: no version since changed any of them (versions.py: version 3 the
    families with a task anchor, FamilyHooks.task_anchors; a frozen split keeps its
    own version)."""
    from causal_gym.contracts.families import family_names
    from causal_gym.hooks import FamilyHooks, hooks_of

    anchored = {
        f for f in family_names() if type(hooks_of(f)).task_anchors is not FamilyHooks.task_anchors
    }
    changed_by = {3: anchored}
    today = reward_version(namespace)
    changed = {f for v in range(made_by + 1, today + 1) for f in changed_by[v]}
    return made_by >= 2 and not set(families) & changed


@pytest.mark.parametrize("name", SUITES)
def test_the_committed_report_passes_its_checks_when_recomputed(name: str) -> None:
    chosen = suite(name)
    report = chosen.load_committed()
    recomputed = chosen.recheck(report)
    assert [c.model_dump() for c in recomputed] == [c.model_dump() for c in report.checks]
    failing = [c.name for c in recomputed if not c.passed]
    assert not failing, failing
    assert report.passed
    assert report.total_false_alarm == pytest.approx(sum(c.false_alarm for c in recomputed))
    assert report.total_false_alarm < FALSE_ALARM_BUDGET
    # drawn under several keys at today's reward and generator, nothing failed
    assert report.keys[0].label == "default" and len(report.keys) >= 3
    assert len({k.fingerprint for k in report.keys}) == len(report.keys)
    assert all(not k.failed_ids and k.materialized == k.requested for k in report.keys)
    assert scores_alike(report.reward_version, report.namespace, chosen.families)
    made_by = report.generator_version
    today = generator_version(report.namespace)
    assert made_by == today or (
        report.namespace == "train" and reproduces(made_by, chosen.families)
    )
    assert set(report.bayes_prior) >= set(chosen.families)


@pytest.mark.parametrize("name", SUITES)
def test_the_committed_report_has_its_plots_and_tables(name: str) -> None:
    chosen = suite(name)
    report = chosen.load_committed()
    stem = chosen.committed_path.with_suffix("")
    for plot in PLOT_NAMES:
        assert stem.with_name(f"{stem.name}_{plot}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for table_name, draw in chosen.tables.items():
        drawn = draw(report)
        lines = drawn.markdown()
        assert len(lines) == len(drawn.rows) + 2 and drawn.rows, table_name
        assert all(line.count(" | ") >= len(drawn.header) - 1 for line in lines)


def test_a_suite_run_gives_the_same_rows_whatever_the_worker_count() -> None:
    """Rows come back in the jobs' order, not the workers' finishing order; a key
    stays in the parent and is never pickled."""
    seed = suite("seed")
    keys = [
        ("default", parse_key_hex(DEFAULT_EVAL_KEY, "default")),
        ("random-1", DerivationKey(b"\x07" * 32, "t")),
    ]
    one = run_audit(seed, keys, per_family=2, workers=1)
    two = run_audit(seed, keys, per_family=2, workers=2)
    assert one == two and len(one.rows) == 12
    assert [r.task_id for r in one.rows[:2]] == ["train:ate:0", "train:ate:1"]
    assert one.fingerprints["random-1"] == keys[1][1].fingerprint
    assert all(isinstance(value, float) for value in one.rows[0].probes.values())
