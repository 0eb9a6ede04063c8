"""The sentences each chapter computes and pastes into its prose, computed here by the chapter helpers on
the committed data without executing a notebook.

Each function takes the loaded :class:`~trajectory_judge.book.chapters.editions.Editions` and returns the
chapter's sentences by the name the notebook glues them under (a few that are displayed rather than glued
carry a name of their own, without a glue of that name in the notebook). tests/test_prose.py snapshots them,
checks them against what the committed notebooks glued, and checks their form.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from trajectory_judge.book.chapters.editions import Editions

Sentences = dict[str, str]


def testbed(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.testbed import example_instance_id

    return {"example_id": example_instance_id(ed.ours.trajectories)}


def judges(ed: Editions) -> Sentences:
    from collections import Counter

    from trajectory_judge.analysis.loading import judge_order
    from trajectory_judge.book.chapters.audit import read_runs
    from trajectory_judge.book.chapters.judges import holdings_sentence, paper_judges_frame
    from trajectory_judge.book.paths import paper_data_dir
    from trajectory_judge.book.render.claim_text import number_word
    from trajectory_judge.book.render.style import judges_frame, list_text, llm_judges, views_present

    ids = judge_order(ed.ours.verdicts)
    frame = judges_frame(ids)
    judged = Counter(v.judge_id for v in ed.ours.verdicts)
    frame["judged"] = [judged[j] for j in frame.index]
    paper_ids = judge_order(ed.paper.verdicts)
    paper_judges = paper_judges_frame(ed.paper.verdicts, read_runs(paper_data_dir()))
    subject = "This edition's verdicts hold"
    return {
        "holdings_text": holdings_sentence(frame, llm_judges(ids), len(ed.ours.trajectories), subject=subject),
        "paper_n_judges": number_word(len(paper_judges)),
        "views_used": list_text(views_present(ids)),
        "paper_views_used": list_text(views_present(paper_ids)),
    }


def metrics(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.metrics import edge_sentence, interior_edges

    verdicts = ed.ours.verdicts
    return {"edge_sentence": edge_sentence(interior_edges([v.confidence for v in verdicts]), len(verdicts))}


def results(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.editions import ours_phrases
    from trajectory_judge.book.chapters.results import (
        above_baseline,
        anchor_example,
        anchor_rule,
        baseline_design,
        no_signal_clause,
        signal_table,
        summary_phrases,
    )
    from trajectory_judge.book.render.claim_text import paper_claims, scope_phrase, signal_phrase
    from trajectory_judge.book.render.style import llm_judges

    paper, rep = ed.paper_rep, ed.rep
    claims = paper_claims(paper, ed.paper)
    out: Sentences = dict(ours_phrases(ed.ours))
    for c in claims.items:
        out[f"claim_{c.key}"] = c.sentence()
        out[f"claim_{c.key}_value"] = c.value_text()
    out.update(summary_phrases(claims, rep))
    strata = rep.strata_table()
    out["scope"] = scope_phrase([int(x) for x in strata.sum(axis=1)], rep.n_trajectories)
    out["baseline_design"] = baseline_design(rep)
    out["paper_above_baseline"] = above_baseline(paper, "the paper's")
    out["above_baseline"] = above_baseline(rep, "our")
    out["anchor_rule"] = anchor_rule(rep)
    signal = signal_table(rep)
    out["no_signal_clause"] = no_signal_clause(signal)
    out["paper_no_signal_clause"] = no_signal_clause(signal_table(paper))
    llm = llm_judges(list(rep.judges))
    out["edition_signal"] = signal_phrase(len(llm), int((signal.loc[llm, "silent_minus_far"] > 0).sum()))
    out["anchor_example"] = anchor_example(paper, "outcome:qwen2.5:14b", "The paper's") + "."
    return out


def paired(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.landing import finding_sentence, register_sentence, verdict_sentence
    from trajectory_judge.book.chapters.paired import (
        camera_ready_quantities,
        hidden_claim_sentence,
        hidden_input_summary,
        paired_detail,
        reply_beside_camera_ready,
    )
    from trajectory_judge.book.chapters.results import anchor_example
    from trajectory_judge.book.render.claim_text import paper_claims

    paper, ours = ed.paper, ed.ours
    hidden = pd.concat(
        {
            "the paper": hidden_input_summary(paired_detail(paper.trajectories, paper.verdicts)),
            "this edition": hidden_input_summary(paired_detail(ours.trajectories, ours.verdicts)),
        }
    )
    key = "Paper (release) · Qwen2.5 14B"
    numbers = {key: camera_ready_quantities(ed.paper_rep, paper.trajectories, *_PAPER_PAIR, paper.verdicts)}
    cr = {k: q.value for k, q in numbers[key].items()}
    register = paper_claims(ed.paper_rep, paper)
    return {
        "anchor_spread": anchor_example(ed.paper_rep, "outcome:qwen2.5:14b", "the paper's") + ".",
        "hidden_claim": hidden_claim_sentence(hidden.droplevel(0)),
        "landing_finding": finding_sentence(ed.paper_rep, cr),
        "landing_verdict": verdict_sentence(register) + ".",
        "landing_register": register_sentence(register) + ".",
        "reply_beside_camera_ready": reply_beside_camera_ready(ed.rep, ours.trajectories, ours.verdicts),
    }


_PAPER_PAIR = ("outcome:qwen2.5:14b", "step:qwen2.5:14b")


def analysis(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.analysis import (
        claim_above_sentence,
        claim_summary,
        cost_ratio,
        cost_sentence,
        floor_sentence,
        floor_table,
        hidden_fault_table,
        hidden_sentence,
        landing_hidden_sentence,
        naming_sentence,
        view_deltas,
        view_effect_sentence,
    )
    from trajectory_judge.book.render.claim_summary import summary_sentence, tally
    from trajectory_judge.book.render.claim_text import paper_claims
    from trajectory_judge.book.render.style import family_pairs

    reports = {"release": ed.paper_rep, "edition": ed.rep}
    verdicts = {"release": ed.paper.verdicts, "edition": ed.ours.verdicts}
    deltas = {s: view_deltas(r, verdicts[s]) for s, r in reports.items()}
    hidden = {s: hidden_fault_table(r) for s, r in reports.items()}
    floors = {s: floor_table(r) for s, r in reports.items()}
    above = claim_above_sentence({s: claim_summary(r) for s, r in reports.items()})
    pairs = {s: family_pairs(list(r.judges), [("step", "selfcons")]) for s, r in reports.items()}
    ratios = {s: {b: cost_ratio(verdicts[s], a, b) for a, b in ps} for s, ps in pairs.items()}
    naming = {s: r.metrics_table().loc[list(r.judges), ["recall", "type_macro_f1"]] for s, r in reports.items()}
    return {
        "analysis_hold": summary_sentence(tally(paper_claims(ed.paper_rep, ed.paper), "analysis")),
        "view_effect": view_effect_sentence(deltas),
        "hidden_pairs": hidden_sentence(hidden),
        "landing_hidden": landing_hidden_sentence(hidden["edition"]),
        "claim_above": above[:1].upper() + above[1:],
        "floor_paper": floor_sentence(floors["release"], "The paper's"),
        "floor_ours": floor_sentence(floors["edition"], "Our"),
        "sc_text": cost_sentence(ratios),
        "name_below": naming_sentence(naming),
    }


def organic(ed: Editions) -> Sentences:
    from trajectory_judge.analysis import published as P
    from trajectory_judge.book.chapters.organic import (
        gap_sentence,
        load_episodes,
        organic_status,
        outcome_gaps,
        repeat_sentence,
        repeated_calls,
    )
    from trajectory_judge.book.paths import data_dir

    episodes = load_episodes(data_dir())
    eps = episodes or []
    wrong = sum(not e.trajectory.label.outcome_correct for e in eps)
    return {
        "organic_status": organic_status(episodes, int(P.PUBLISHED_COUNTS["organic_episodes"].value)),
        "repeat_sentence": repeat_sentence(repeated_calls(eps)),
        "gap_sentence": gap_sentence(outcome_gaps(eps), wrong),
    }


def seeds(ed: Editions) -> Sentences:
    from trajectory_judge.analysis.cost import read_run_records
    from trajectory_judge.analysis.seeds import check_ensembles, load_members, seed_variance
    from trajectory_judge.book.chapters.seeds import glue_values, prose_values
    from trajectory_judge.book.paths import data_dir

    data = ed.ours
    members = load_members(data_dir(), [t.trajectory_id for t in data.trajectories])
    sv = seed_variance(data.trajectories, data.verdicts, members, resamples=ed.rep.resamples, seed=ed.rep.seed)
    checks = check_ensembles(data.verdicts, members, read_run_records(data_dir()))
    return {**glue_values(sv, checks, len(data.trajectories)), **prose_values(sv, checks)}


def statistics(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.statistics import glue_values

    return glue_values(ed)


def runs(ed: Editions) -> Sentences:
    from trajectory_judge.analysis.cost import compute_spent
    from trajectory_judge.analysis.loading import judge_order
    from trajectory_judge.book.chapters.runs import (
        builds_sentence,
        greedy_sentence,
        run_settings,
        run_summary,
        runs_sentence,
        settings_sentence,
    )
    from trajectory_judge.book.paths import data_dir
    from trajectory_judge.book.render.style import llm_judges

    settings = run_settings(data_dir())
    summary = run_summary(settings)
    llm = llm_judges(judge_order(ed.ours.verdicts))
    return {
        "runs_text": runs_sentence(settings, llm),
        "settings_text": settings_sentence(summary),
        "builds_text": builds_sentence(summary),
        "greedy_text": greedy_sentence(settings, llm),
        "compute_text": compute_spent(data_dir()).sentence(),
    }


def position(ed: Editions) -> Sentences:
    from trajectory_judge.analysis.loading import load_data
    from trajectory_judge.analysis.organic import load_episodes
    from trajectory_judge.book.chapters.position import position_chapter
    from trajectory_judge.book.paths import repo_root

    cf = load_data(repo_root() / "data" / "counterfactual")
    episodes = load_episodes(repo_root() / "data")
    ch = position_chapter(ed.paper, ed.ours, cf, episodes, resamples=ed.rep.resamples, seed=ed.rep.seed, labelled=20)
    return ch.values


def audit(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.audit import contradictions_markdown, register_markdown, register_phrases
    from trajectory_judge.book.render.claim_text import RULE, paper_claims

    claims = paper_claims(ed.paper_rep, ed.paper)
    said = register_phrases(claims)
    return {
        "register_markdown (displayed)": register_markdown(RULE),
        "register_summary": said["register_summary"],
        "contradictions_markdown (displayed)": contradictions_markdown(claims),
        "abstract_summary": said["abstract_summary"],
    }


def appendix(ed: Editions) -> Sentences:
    from trajectory_judge.book.chapters.appendix import rerun_durations

    return {f"rerun_{step}": words for step, words in rerun_durations().items()}


CHAPTERS: dict[str, Callable[[Editions], Sentences]] = {
    "testbed": testbed,
    "judges": judges,
    "metrics": metrics,
    "results": results,
    "paired": paired,
    "analysis": analysis,
    "organic": organic,
    "seeds": seeds,
    "statistics": statistics,
    "runs": runs,
    "position": position,
    "audit": audit,
    "appendix": appendix,
}
"""Every chapter notebook, in the book's order, with the function that computes its sentences."""
