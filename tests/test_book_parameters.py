"""Appendices A, B and G print the testbed's and the organic agent's parameters from the code (issue 26)."""

from __future__ import annotations

from trajectory_judge.book.chapters import appendix as A
from trajectory_judge.testbed import agent, checker, env


def test_instance_parameters_table_reads_the_generators_constants():
    t = A.instance_parameters_table()["value"]
    assert all(sku in t["item (SKU)"] for sku in env.SKU_POOL)
    lo, hi = env.TOTAL_RANGE_EUR
    assert f"EUR {lo:.2f}" in t["order total"] and f"EUR {hi:.2f}" in t["order total"]
    assert t["refund window"].startswith(", ".join(f"{w:g}" for w in env.WINDOWS_DAYS))
    assert t["restocking fee"].startswith(", ".join(f"{f:g}" for f in env.RESTOCKING_FEES_PCT))
    assert f"CUS-{env.DECOY_ID_BASE}" in t["decoy customer"]


def test_sku_and_policy_tables_describe_exactly_the_instances_they_are_given():
    instances = env.generate_instances(60, 7)
    skus = A.sku_table(instances)
    assert list(skus.index) == list(env.SKU_POOL) and skus["instances"].sum() == 60
    lo, hi = env.TOTAL_RANGE_EUR
    assert skus["lowest total (EUR)"].min() >= lo and skus["highest total (EUR)"].max() <= hi
    pol = A.policy_table(instances)
    assert pol["owned by the decoy"].to_dict() == {s: (10 if s == "wrong_customer" else 0) for s in env.STRATA}
    assert pol.loc["happy", "fees (%)"] == "0" and pol.loc["restocking", "fees (%)"] != "0"


def test_checker_parameters_table_quotes_the_thresholds_the_rules_use():
    t = A.checker_parameters_table()["value"]
    assert f"{checker.AMOUNT_TOLERANCE_EUR:g} EUR" in t["amount mismatch (R4)"]
    assert f"{checker.GROUNDING_TOLERANCE:g}" in t["a number is grounded"]
    assert f"{env.OUTCOME_TOLERANCE_EUR:g} EUR" in t["outcome survived"]


def test_organic_settings_put_the_paper_first_and_read_each_models_last_run_that_wrote():
    recs = [
        {
            "kind": "organic",
            "agent_model": "m:1b",
            "written": 0,
            "episodes": 4,
            "instance_seed": 7,
            "decoding": {"temperature": 0.5, "seed": 1, "max_tokens": 64, "num_ctx": 1024},
        },
        {
            "kind": "organic",
            "agent_model": "m:1b",
            "written": 3,
            "episodes": 9,
            "instance_seed": 7,
            "decoding": {"temperature": 0.0, "seed": 7, "max_tokens": 512, "num_ctx": 8192},
        },
        {"kind": "judge", "model": "x", "written": 5},
    ]
    t = A.organic_settings_table(recs, "qwen2.5:14b", 60)
    paper, ours = t.iloc[:, 0], t.iloc[:, 1]
    assert len(t.columns) == 2
    assert (ours["episodes"], ours["temperature"], ours["seed"], ours["step limit"]) == (
        "9",
        "0",
        "7",
        str(agent.MAX_STEPS),
    )
    # the paper's Appendix G states the agent's temperature, seed and step limit (qwen2.5:14b, temperature 0,
    # seed 7, at most 10 steps); what it does not state (tokens per step, context window) stays "–"
    assert (paper["episodes"], paper["temperature"], paper["seed"], paper["step limit"]) == ("60", "0", "7", "10")
    assert paper["output tokens per step"] == paper["context window (tokens)"] == "\u2013"
