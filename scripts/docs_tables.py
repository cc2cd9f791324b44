"""Every table of numbers in the docs, generated from the committed JSON it reports.

A page marks a generated table with two comments around it:

    <!-- table: audit-seed-honest -->

    | ... |

    <!-- /table -->

and this script rewrites what stands between them from the table's source (the audit
reports in causal_gym/, drawn by each audit suite's tables; docs/baselines/*/baselines.json,
docs/demo/grpo_run.json, docs/audits/*.json, and docs/benchmarks/*.json, which each
scripts/bench_*.py writes with `--json` through scripts/bench_results.py). So a number
in a table is never typed by hand, and tests/test_docs.py fails when a page's table
differs from its source. A benchmark file holds raw numbers; its table function here
chooses the columns, the wording and the precision, and computes the ratios.

    .venv/bin/python scripts/docs_tables.py            # rewrite the pages' tables
    .venv/bin/python scripts/docs_tables.py --check    # exit 1 naming every stale table
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this repository's `scripts` (verl installs another)

from scripts.bench_results import BenchResult, read_result  # noqa: E402
from scripts.head_cpu import HEAD  # noqa: E402

PAGES = ROOT / "docs" / "pages"
MARKER = re.compile(r"(<!-- table: ([a-z0-9-]+) -->\n)(.*?)(<!-- /table -->)", re.DOTALL)


def _json(path: str) -> Any:
    return json.loads((ROOT / path).read_text("utf-8"))


# --- baselines -------------------------------------------------------------------
def baselines(split: str) -> Callable[[], list[str]]:
    def table() -> list[str]:
        from orchestrator.records.summary import RunSummary
        from orchestrator.run.baselines import render_table

        agents = _json(f"docs/baselines/{split}/baselines.json")["agents"]
        summaries = [RunSummary.model_validate(a) for a in agents]
        return render_table(summaries).rstrip("\n").split("\n")

    return table


# --- the audits: every suite's tables of its committed report (causal_gym/audit/) ---
def audit(suite_name: str, table_name: str) -> Callable[[], list[str]]:
    def table() -> list[str]:
        from causal_gym.audit.suite import suite

        chosen = suite(suite_name)
        return chosen.tables[table_name](chosen.load_committed()).markdown()

    return table


def audit_tables() -> dict[str, Callable[[], list[str]]]:
    """audit-<suite>-<table> for every table of every suite."""
    from causal_gym.audit.suite import suite, suite_names

    return {
        f"audit-{name}-{table}": audit(name, table)
        for name in suite_names()
        for table in suite(name).tables
    }


# --- the reference on the frozen eval-v1 split (docs/audits/eval_v1_reference.json) -----
def eval_v1_reference() -> list[str]:
    rows = [
        "| family | tasks | reference coverage | exact 95% interval | mean reward |",
        "| --- | ---: | ---: | --- | ---: |",
    ]
    for family, f in _json("docs/audits/eval_v1_reference.json")["families"].items():
        low, high = f["interval"]
        rows.append(
            f"| {family} | {f['tasks']} | {f['coverage']:.3f} | [{low:.3f}, {high:.3f}] | "
            f"{f['mean_reward']:.4f} |"
        )
    return rows


# --- the SmolLM2 GRPO demo (docs/demo/grpo_run.json) ----------------------------
def demo() -> list[str]:
    rows = [
        "| model | tasks | valid share | mean clipped reward |",
        "| --- | ---: | ---: | ---: |",
    ]
    report = _json("docs/demo/grpo_run.json")
    for e in report["evaluations"]:
        if e["valid_share"] == 0.0:  # no SE from zero successes: the exact bound
            bound = 1.0 - 0.025 ** (1.0 / e["tasks"])  # the two-sided 95% interval
            valid = f"0.000 (0 of {e['tasks']}; 95% upper bound {bound:.2f})"
        else:
            valid = f"{e['valid_share']:.3f} ± {e['valid_share_se']:.3f}"
        reward = f"{e['mean_clipped_reward']:.3f}"
        if e["mean_clipped_reward_se"]:
            reward += f" ± {e['mean_clipped_reward_se']:.3f}"
        rows.append(f"| {e['model']} | {e['tasks']} | {valid} | {reward} |")
    p = report["paired_grpo_minus_sft"]
    rows.append(
        f"| GRPO - SFT, paired | {p['tasks']} | {p['valid_share_change']:+.3f} | "
        f"**{p['mean']:+.3f} ± {p['se']:.3f}** |"
    )
    return rows


def demo_families() -> list[str]:
    rows = ["| family | tasks | GRPO - SFT, paired |", "| --- | ---: | ---: |"]
    for family, f in _json("docs/demo/grpo_run.json")["paired_grpo_minus_sft"]["families"].items():
        rows.append(f"| {family} | {f['tasks']} | {f['mean']:+.3f} ± {f['se']:.3f} |")
    return rows


def analyst_decisions() -> list[str]:
    """decision_values.json: each decision changed alone, by family and context."""
    values = _json("docs/demo/analyst/decision_values.json")["values"]
    families = ("ate", "adjustment", "null_detect")
    rows = [
        "| decision | context | " + " | ".join(families) + " |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    order: list[tuple[str, str]] = []
    cells: dict[tuple[str, str, str], str] = {}
    for v in values:
        spot = (v["decision"], v["context"])
        if spot not in order:
            order.append(spot)
        cells[(*spot, v["family"])] = f"{v['mean']:+.3f} ± {v['se']:.3f}"
    for decision, context in order:
        shown = [cells.get((decision, context, f), "") for f in families]
        rows.append(f"| {decision} | {context} | " + " | ".join(shown) + " |")
    return rows


def analyst_ladder() -> list[str]:
    """decision_values.json's ladder, one column a family."""
    ladder = _json("docs/demo/analyst/decision_values.json")["ladder"]
    families = ("ate", "adjustment", "null_detect")
    rows = ["| policy | " + " | ".join(families) + " |", "| --- | ---: | ---: | ---: |"]
    policies: list[str] = []
    cells: dict[tuple[str, str], str] = {}
    for r in ladder:
        if r["policy"] not in policies:
            policies.append(r["policy"])
        cell = f"{r['mean']:+.3f} ± {r['se']:.3f}"
        if "decision" in r:
            d = r["decision"]
            chosen = [d["columns"], d["estimator"], d["width"]]
            if d["effect_probability"] is not None:
                chosen.append(f"p {d['effect_probability']}")
            cell += f" ({', '.join(chosen)})"
        cells[(r["policy"], r["family"])] = cell
    for policy in policies:
        rows.append(f"| {policy} | " + " | ".join(cells[(policy, f)] for f in families) + " |")
    return rows


def demo_temperature() -> list[str]:
    report = _json("docs/demo/grpo_temperature.json")
    rows = [
        "| temperature | tasks x rollouts | within-group SD of reward | groups with any spread "
        "| valid share | mean clipped reward |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in report["rows"]:
        t = "greedy" if r["temperature"] == 0 else f"{r['temperature']:g}"
        if r["temperature"] == report["chosen_temperature"]:
            t = f"**{t}** (chosen)"
        rows.append(
            f"| {t} | {r['tasks']} x {r['rollouts_per_task']} | {r['mean_within_group_sd']:.3f} "
            f"| {r['groups_with_spread']:.2f} | {r['valid_share']:.2f} "
            f"| {r['mean_clipped_reward']:.3f} |"
        )
    return rows


def demo_profile() -> list[str]:
    """Mean wall seconds a step per phase: the first demo's setup against the recipe's."""
    before = _json("docs/demo/grpo_step_profile_base.json")
    after = _json("docs/demo/grpo_step_profile_recipe.json")

    def phase(report: dict, name: str) -> float:
        return sum(s[name]["wall_s"] for s in report["steps"]) / len(report["steps"])

    def setup(r: dict) -> str:
        return (
            f"{r['generations']} rollouts, {r['max_completion_tokens']} new tokens at most, "
            f"prompt {r['prompt_tokens_mean']:,.0f} tokens"
        )

    rows = [
        f"| phase (wall s a step) | before: {setup(before)} | after: {setup(after)} |",
        "| --- | ---: | ---: |",
    ]
    for name in before["steps"][0]:
        rows.append(f"| {name} | {phase(before, name):.2f} | {phase(after, name):.2f} |")
    total = [sum(phase(r, n) for n in r["steps"][0]) for r in (before, after)]
    rows.append(f"| **step** | **{total[0]:.1f}** | **{total[1]:.1f}** |")
    return rows


# --- the benchmarks (docs/benchmarks/*.json, written by scripts/bench_*.py --json) ----
def _bench(file: str, benchmark: str) -> BenchResult:
    return read_result(ROOT / "docs" / "benchmarks" / f"{file}.json", benchmark)


def _ratio(value: float) -> str:
    """A ratio to three significant figures (0.89x, 7.87x, 31.5x)."""
    return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"


def bench_generate() -> list[str]:
    rows = [
        "| family | full tasks/s | baseline tasks/s | full / baseline | "
        "full / own-writer baseline |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    families = _bench("generate", "generate").results["families"]
    keys = ("tasks", "full_s", "baseline_s", "own_writer_s")
    total = {k: sum(f[k] for f in families.values()) for k in keys}
    for family, f in [*families.items(), ("all", total)]:
        rows.append(
            f"| {family} | {f['tasks'] / f['full_s']:.1f} | {f['tasks'] / f['baseline_s']:.1f} | "
            f"{f['full_s'] / f['baseline_s']:.2f}x | {f['full_s'] / f['own_writer_s']:.2f}x |"
        )
    return rows


def bench_generate_real() -> list[str]:
    rows = [
        "| family | tasks | full tasks/s | tasks per CPU-second | attempts |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    families = _bench("generate_real", "generate").results["families"]
    keys = ("tasks", "full_s", "cpu_s")
    total = {k: sum(f[k] for f in families.values()) for k in keys}
    for family, f in [*families.items(), ("all", total)]:
        attempts = f"{f['mean_attempts']:.2f}" if "mean_attempts" in f else ""
        rows.append(
            f"| {family} | {f['tasks']} | {f['tasks'] / f['full_s']:.1f} | "
            f"{f['tasks'] / f['cpu_s']:.1f} | {attempts} |"
        )
    return rows


def bench_expert() -> list[str]:
    result = _bench("expert", "expert")
    budget = result.parameters["budget_s"]
    rows = [
        f"| family | mean s | p50 s | p95 s | max s | over {budget:g} s | term means s | "
        "anchor Monte Carlo s | linear task s | expert / linear |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for family, f in result.results["families"].items():
        seconds = " | ".join(f"{f[k]:.3f}" for k in ("mean_s", "p50_s", "p95_s", "max_s"))
        rows.append(
            f"| {family} | {seconds} | {f['over_budget']} of {f['tasks']} | "
            f"{f['term_means_s']:.3f} | {f['anchor_mc_s']:.3f} | {f['linear_s']:.3f} | "
            f"{f['mean_s'] / f['linear_s']:.1f}x |"
        )
    return rows


CLI_LABELS = {"python -c 'import causal_gym'": 'python -c "import causal_gym"'}


def bench_cli() -> list[str]:
    rows = [
        "| command | median | vs bare `python -c pass` |",
        "| --- | ---: | ---: |",
    ]
    commands = _bench("cli", "cli").results["commands"]
    bare = commands["python -c pass"]["median_s"]
    for name, c in commands.items():
        rows.append(
            f"| `{CLI_LABELS.get(name, name)}` | {c['median_s'] * 1000:.1f} ms | "
            f"{_ratio(c['median_s'] / bare)} |"
        )
    return rows


def bench_sandbox() -> list[str]:
    result = _bench("sandbox", "sandbox")
    labels = {
        "bare": "bare host python",
        "local": "local (bubblewrap, as root)"
        if result.parameters["root"]
        else "local (bubblewrap)",
    }
    rows = [
        "| backend | median | p90 | vs bare `python -c pass` |",
        "| --- | ---: | ---: | ---: |",
    ]
    backends = result.results["backends"]
    bare = backends["bare"]["median_s"]
    for kind, b in backends.items():
        rows.append(
            f"| {labels.get(kind, kind)} | {b['median_s'] * 1000:.1f} ms | "
            f"{b['p90_s'] * 1000:.1f} ms | {_ratio(b['median_s'] / bare)} |"
        )
    return rows


def bench_run() -> list[str]:
    from causal_gym.contracts.families import split_counts

    one = _bench("run_throughput", "run-throughput")
    two = _bench("run_versus_vf", "run-versus-vf")
    three = _bench("run_scale", "run-scale")
    t, v, s = one.results, two.results, three.results
    n = one.parameters["n"]
    tasks = f"all {n} tasks" if n == sum(split_counts("eval-v1").values()) else f"{n} tasks"
    efficiency = t["episodes"] * t["episode_alone_s"] / (t["elapsed_s"] * t["cpus"])
    throughput = (
        f"{t['episodes']} episodes in {t['elapsed_s']:.0f} s "
        f"({t['episodes'] / t['elapsed_s']:.2f} episodes/s); runner overhead per episode p50 "
        f"{t['overhead_p50_ms']:.1f} ms (mean {t['overhead_mean_ms']:.1f} ms); parallel "
        f"efficiency {efficiency:.3f} ({t['episodes']} x {t['episode_alone_s']:.2f} s for one "
        f"episode alone, over {t['elapsed_s']:.0f} s x {t['cpus']} CPUs); head RSS "
        f"(driver + generators + recorder) {t['head_rss_mb']:.0f} MB"
    )
    if abs(v["vf_mean_reward"] - v["ours_mean_reward"]) < 1e-9:
        rewards = f"identical mean reward {v['ours_mean_reward']:.4f}"
    else:
        rewards = (
            f"mean reward {v['vf_mean_reward']:.4f} (vf-eval) and "
            f"{v['ours_mean_reward']:.4f} (causal-gym-run)"
        )
    versus = (
        f"`vf-eval causal_gym` (subprocess runtime) {v['vf_eval_s']:.1f} s, `causal-gym-run` "
        f"{v['causal_gym_run_s']:.1f} s (Ray start-up included): "
        f"{v['vf_eval_s'] / v['causal_gym_run_s']:.2f}x faster, {rewards}"
    )
    p = three.parameters
    scale = (
        f"{s['throughput_per_s']:.2f} episodes/s from the first start to the last end "
        f"against an ideal of {s['ideal_per_s']:.2f} ({p['concurrency']:,} / "
        f"{s['mean_episode_s']:.0f} s): {s['ratio']:.3f} ({s['ratio_end_to_end']:.3f} with "
        f"Ray's start-up and the report); the slots took {s['fill_s']:.0f} s to fill (every "
        f"task generated on the head: {p['concurrency'] / s['fill_s']:.0f} tasks/s), then "
        f"stayed {100 * s['busy_share']:.2f}% busy for {s['held_s']:.0f} s until the last "
        f"dispatch, and its {len(s['wave_widths_s'])} waves of episode ends were "
        f"{', '.join(f'{w:.0f}' for w in s['wave_widths_s'])} s wide; overhead p50 "
        f"{s['overhead_p50_ms']:.1f} ms (p90 "
        f"{s['overhead_p90_ms']:.0f} ms); head RSS (driver + generators + recorder) "
        f"{s['head_rss_mb'] / 1024:.2f} GB"
    )
    return [
        "| benchmark | result | target |",
        "| --- | --- | --- |",
        f"| `throughput`: eval-v1, {tasks}, reference agent, concurrency "
        f"{one.parameters['concurrency']} | {throughput} | overhead < 50 ms, efficiency >= 0.85 |",
        f"| `versus-vf`: the same {two.parameters['n']} eval-v1 tasks, one scripted server "
        f"replaying the reference analysis, concurrency {two.parameters['concurrency']} | "
        f"{versus} | >= 3x |",
        f"| `scale`: {s['episodes']:,} simulated model-bound episodes, {p['concurrency']:,} at "
        f"once ({p['turns']} turns of {p['turn_s']:g} s) on {p['nodes']} nodes, "
        f"{-(-p['concurrency'] // p['episodes_per_actor'])} actors of "
        f"{p['episodes_per_actor']}, {p['generators']} generators | {scale} | "
        f">= 0.9, overhead p50 < 20 ms, head RSS < 2 GB |",
    ]


def bench_stream() -> list[str]:
    runs = _bench("stream", "stream").results["runs"]

    def row(measure: str, cell: Callable[[dict[str, float]], str]) -> str:
        return f"| {measure} | {', '.join(cell(r) for r in runs)} |"

    def pair(name: str, digits: int) -> Callable[[dict[str, float]], str]:
        def cell(r: dict[str, float]) -> str:
            if f"{name}_p50_ms" not in r:
                return "-"
            return f"{r[f'{name}_p50_ms']:.{digits}f}/{r[f'{name}_p99_ms']:.{digits}f}"

        return cell

    return [
        f"| measure | runs 1-{len(runs)} |",
        "| --- | --- |",
        row(
            "scored tasks per head CPU-second, one worker (service pinned to one core)",
            lambda r: f"{r['w1_scored_per_head_cpu_s']:.1f}",
        ),
        row(
            "the same tasks generated bare in the benchmark's process, per CPU-second",
            lambda r: f"{r['w1_same_tasks_bare_per_cpu_s']:.1f}",
        ),
        row(
            "head rate over bare generation of the same tasks",
            lambda r: f"{r['w1_scored_per_head_cpu_s'] / r['w1_same_tasks_bare_per_cpu_s']:.2f}",
        ),
        row(
            "head rate over bare linear-task generation in the same run",
            lambda r: f"{r['w1_scored_per_head_cpu_s'] / r['bare_linear_tasks_per_cpu_s']:.2f}",
        ),
        row(
            "two workers over one, wall throughput in cores' worth of bare generation",
            lambda r: f"{r['w2_cores_of_generation'] / r['w1free_cores_of_generation']:.2f}",
        ),
        row("pull of one ready task, p50 / p99 (ms)", pair("pull", 1)),
        row("score right after a pull, p50 / p99 (ms)", pair("score", 0)),
        row("score with nothing being made, p50 / p99 (ms)", pair("idle_score", 1)),
    ]


def bench_cpu() -> list[str]:
    result = _bench("run_scale_cpu", "run-scale-cpu").results
    names = {
        "generators": "the generators (head)",
        "driver": "the driver: dispatch (head)",
        "recorder": "the recorder (head)",
        "gcs": "Ray's GCS (head)",
        "sandbox_actors": "the sandbox actors (workers)",
        "raylets": "the three raylets",
        "other": "everything else on the machine",
    }
    rows = ["| process | CPU ms per finished episode | cores busy |", "| --- | ---: | ---: |"]
    for name, label in names.items():
        rows.append(
            f"| {label} | {result['cpu_ms_per_episode'][name]:.1f} | {result['cores'][name]:.2f} |"
        )
    rows.append(
        f"| the head in all | {result['head_cpu_ms_per_episode']:.1f} | "
        f"{sum(result['cores'][n] for n in HEAD):.2f} |"
    )
    return rows


def bench_capacity() -> list[str]:
    """What a head of C cores sustains, from the scale run's CPU per finished episode
    (scripts/head_cpu.py): the head's processes share its cores; each generator is one
    process (one core at most), and so is the driver that dispatches."""
    result = _bench("run_scale_cpu", "run-scale-cpu").results
    cpu, head = result["cpu_ms_per_episode"], result["head_cpu_ms_per_episode"]
    per_generator = 1000 / cpu["generators"]  # tasks/s one generator core makes
    driver = 1000 / cpu["driver"]  # episodes/s one driver process dispatches
    rows = [
        "| head cores (= generators) | episodes/s | tasks generated/s | in flight at 600 s "
        "an episode | what binds |",
        "| ---: | ---: | ---: | ---: | --- |",
    ]
    for cores in (1, 2, 4, 8):
        limits = {
            "the head's cores": cores * 1000 / head,
            "the generators": cores * per_generator,
            "the driver (one process)": driver,
        }
        binds = min(limits, key=lambda name: limits[name])
        rate = limits[binds]
        rows.append(f"| {cores} | {rate:.0f} | {rate:.0f} | {rate * 600:,.0f} | {binds} |")
    return rows


# --- the real tier: ranking transfer and the NSW reality check (docs/real/*.json) -----
def real_ranking() -> list[str]:
    result = _json("docs/real/ranking.json")
    rewards, labels = result["rewards"], result["labels"]
    place = {g: {r: i + 1 for i, r in enumerate(o)} for g, o in result["orders"].items()}
    rows = [
        "| rung | synthetic tiers: reward (SE) | rank | real tier: reward (SE) | rank |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for rung, label in labels.items():
        s, r = rewards["synthetic"][rung], rewards["real"][rung]
        rows.append(
            f"| {label} | {s['mean']:+.4f} ({s['se']:.4f}) | {place['synthetic'][rung]} | "
            f"{r['mean']:+.4f} ({r['se']:.4f}) | {place['real'][rung]} |"
        )
    n = rewards["real"]["reference"]["n"]
    rows.append(
        f"| Kendall's tau between the orders ({n} tasks a group) | "
        f"{result['kendall_tau']:+.3f} | | | |"
    )
    return rows


def real_reality_check() -> list[str]:
    result = _json("docs/real/reality_check.json")
    exp = result["experiment"]
    rows = [
        "| analyst | estimate | 90% interval | from the experiment (its SEs) | holds it | reward |",
        "| --- | ---: | --- | ---: | :---: | ---: |",
        f"| the NSW experiment ({exp['n_treated']} treated, {exp['n_control']} controls) | "
        f"{exp['estimate']:,.0f} | SE {exp['se']:,.0f} | 0 | | |",
    ]
    for row in result["analysts"].values():
        rows.append(
            f"| {row['label']} | {row['estimate']:,.0f} | [{row['ci_lower']:,.0f}, "
            f"{row['ci_upper']:,.0f}] | {row['distance_in_experiment_se']:+.2f} | "
            f"{'yes' if row['covers_experiment'] else 'no'} | {row['reward']:+.3f} |"
        )
    return rows


TABLES: dict[str, Callable[[], list[str]]] = {
    "baselines-eval-v1": baselines("eval-v1"),
    "baselines-eval-v1-demo": baselines("eval-v1-demo"),
    "baselines-eval-v2": baselines("eval-v2"),
    "baselines-eval-expert-v1": baselines("eval-expert-v1"),
    "baselines-eval-v3": baselines("eval-v3"),
    "baselines-eval-real-v1": baselines("eval-real-v1"),
    **audit_tables(),
    "demo": demo,
    "demo-families": demo_families,
    "analyst-decisions": analyst_decisions,
    "analyst-ladder": analyst_ladder,
    "demo-temperature": demo_temperature,
    "demo-profile": demo_profile,
    "eval-v1-reference": eval_v1_reference,
    "bench-generate": bench_generate,
    "bench-generate-real": bench_generate_real,
    "bench-expert": bench_expert,
    "bench-cli": bench_cli,
    "bench-sandbox": bench_sandbox,
    "bench-run": bench_run,
    "bench-capacity": bench_capacity,
    "bench-cpu": bench_cpu,
    "bench-stream": bench_stream,
    "real-ranking": real_ranking,
    "real-reality-check": real_reality_check,
}


def render(text: str, where: str = "") -> tuple[str, list[str]]:
    """The page with every marked table regenerated, and the names of the tables that
    changed; an unknown table name is an error."""
    changed: list[str] = []

    def replace(match: re.Match[str]) -> str:
        opening, name, old, closing = match.groups()
        if name not in TABLES:
            raise KeyError(f"{where}: unknown table {name!r} (known: {', '.join(TABLES)})")
        # blank lines around the table: Markdown ends an HTML comment's block there
        new = "\n" + "\n".join(TABLES[name]()) + "\n\n"
        if new != old:
            changed.append(name)
        return opening + new + closing

    return MARKER.sub(replace, text), changed


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: python scripts/docs_tables.py [--check]", file=sys.stderr)
        return 2
    stale = []
    for page in sorted(PAGES.glob("*.md")):
        text = page.read_text("utf-8")
        new, changed = render(text, page.name)
        stale += [f"{page.relative_to(ROOT)}: {name}" for name in changed]
        if changed and not check:
            page.write_text(new, "utf-8")
    for line in stale:
        print(("stale " if check else "rewrote ") + line)
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
