"""One number, one interval, read off the built book (``_build/html``; skipped until it exists).

Every value the book prints with an interval (``0.940 (0.86\u20131.00)``, in prose or in a table cell,
``value over interval`` on a phone included) is collected page by page. A judge's quantity is
computed once into a record, so a value printed beside an interval no record with that value has is
a second computation of one number. And each interval mark (\u2020, \u2021) printed after a number
has its legend on the same page.

    .venv/bin/python -m pytest -p no:nbval -o addopts="" -m browser tests/test_book_html.py
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html (build it first)"),
]

_NUM = r"[\u2212+\-]?\d+\.\d+"
INTERVAL = re.compile(rf"(?<![\d.])({_NUM})\s*\(\s*({_NUM})\s*(?:\u2013| to )\s*({_NUM})\s*\)\s*([\u2020\u2021*]?)")
"""``value (low\u2013high)mark`` as the book prints it (``to`` between negative bounds)."""

MARKED = re.compile(r"(?:\)|\d)([\u2020\u2021])")
"""A dagger or double dagger right after a number or an interval."""


def _pages() -> list[Path]:
    return sorted(
        p
        for p in HTML.rglob("*.html")
        if "_static" not in p.parts and "_sources" not in p.parts and p.name not in ("search.html", "genindex.html")
    )


def _reader_text(page: Path) -> str:
    """The article's text as a reader meets it: no code cells, no hidden source."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    main = soup.find("article") or soup.find("main") or soup
    for tag in main.select("div.cell_input, script, style, .sidebar-secondary, nav"):
        tag.decompose()
    return main.get_text(" ", strip=True)


def intervals_by_value(text: str) -> dict[str, set[tuple[str, str]]]:
    """Printed value -> the distinct intervals (low, high) printed with it in ``text``."""
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for value, low, high, _ in INTERVAL.findall(text):
        out[value.replace("\u2212", "-")].add((low.replace("\u2212", "-"), high.replace("\u2212", "-")))
    return out


def test_interval_pattern_reads_the_books_formats():
    text = "recall 0.940 (0.86\u20131.00) and \u22120.180 (\u22120.28 to \u22120.08) and 0.000 (0.00\u20130.04)\u2020"
    assert intervals_by_value(text) == {
        "0.940": {("0.86", "1.00")},
        "-0.180": {("-0.28", "-0.08")},
        "0.000": {("0.00", "0.04")},
    }


def _seed_records(data) -> list[str]:
    """The seeds chapter's records: each ensemble sample's metrics and the paired differences between samples."""
    from trajectory_judge.analysis.statistics.seeds import load_members, seed_variance
    from trajectory_judge.book.paths import data_dir
    from trajectory_judge.book.render.style import format_interval

    members = load_members(data_dir(), [t.trajectory_id for t in data.trajectories])
    sv = seed_variance(data.trajectories, data.verdicts, members, resamples=10_000, seed=7) if members else None
    if sv is None or sv.deltas is None:
        return []
    out = [format_interval(r.value, r.low, r.high, "bootstrap") for r in sv.deltas.itertuples()]
    if sv.lows is not None and sv.highs is not None:
        out += [
            format_interval(sv.values.at[m, j], sv.lows.at[m, j], sv.highs.at[m, j], "bootstrap")
            for m in sv.lows.index
            for j in sv.lows.columns
        ]
    return out


def quantity_records() -> set[tuple[str, str, str]]:
    """(value, low, high) as printed, of every quantity record: each judge's metrics, per-type recalls, paired
    deltas and gaps in both editions' reports, and every estimate of the claims register."""
    from trajectory_judge.book.chapters.editions import load_editions
    from trajectory_judge.book.render.claim_text import paper_claims
    from trajectory_judge.book.render.style import format_interval

    ed = load_editions(10_000, 7)  # the book's replicates and seed
    texts = []
    for rep in (ed.paper_rep, ed.rep):
        for jr in rep.judges.values():
            texts += [format_interval(jr.metrics[m], iv.low, iv.high, iv.method) for m, iv in jr.intervals.items()]
            texts += [
                format_interval(jr.per_type_recall[t], iv.low, iv.high, iv.method)
                for t, iv in jr.per_type_intervals.items()
            ]
        texts += [format_interval(d.value, d.low, d.high, "bootstrap") for d in rep.deltas]
        texts += [format_interval(g.value, g.low, g.high, "bootstrap") for g in rep.gaps]
    texts += [c.value_text() for c in paper_claims(ed.paper_rep, ed.paper)]
    texts += _seed_records(ed.ours)
    texts += _beyond_records(ed)
    return {(v, lo, hi) for t in texts for v, ivs in intervals_by_value(t).items() for lo, hi in ivs}


def _intervals_in(obj) -> list[str]:
    """Every estimate (a record with value, low and high) inside ``obj``'s dataclasses, lists and dicts, as printed."""
    import dataclasses

    from trajectory_judge.book.render.style import format_interval

    for name in ("value", "estimate"):  # an Estimate's value, a rate's or a corrected rate's estimate
        if all(hasattr(obj, a) for a in (name, "low", "high")) and isinstance(getattr(obj, name), float | int):
            return [format_interval(getattr(obj, name), obj.low, obj.high, getattr(obj, "method", "bootstrap"))]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [t for f in dataclasses.fields(obj) for t in _intervals_in(getattr(obj, f.name))]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _intervals_in(v)]
    if isinstance(obj, list | tuple):
        return [t for v in obj for t in _intervals_in(v)]
    return []


def _beyond_records(ed) -> list[str]:
    """The records of the chapters beyond the paper: judge statistics, where the fault sits, the reply judge
    beside the camera-ready figure."""
    from trajectory_judge.analysis.core.loading import load_data
    from trajectory_judge.analysis.paper.paired_detail import reply_unchanged_paired
    from trajectory_judge.analysis.statistics.organic import load_episodes
    from trajectory_judge.analysis.statistics.position import position_study
    from trajectory_judge.book.render.style import format_interval

    texts = []
    for rep in (ed.paper_rep, ed.rep):
        for jr in rep.judges.values():
            texts += [
                format_interval(jr.statistics[m], iv.low, iv.high, iv.method)
                for m, iv in jr.statistic_intervals.items()
            ]
        texts += [format_interval(d.value, d.low, d.high, "bootstrap") for d in rep.statistic_deltas]
    for j in ed.rep.judges:
        e = reply_unchanged_paired(ed.rep, ed.ours.trajectories, ed.ours.verdicts, j)
        texts += _intervals_in(e) if e is not None else []
    data = ROOT / "data"
    ch = position_study(
        ed.paper,
        ed.ours,
        load_data(data / "counterfactual"),
        load_episodes(data),
        resamples=10_000,
        seed=7,
        labelled=20,
        calibration=load_data(data),
    )
    from trajectory_judge.book.chapters.statistics import paper_dependence, paper_deployment, paper_type_family

    clustered = [  # the headline differences when whole base runs are resampled: a record of their own
        format_interval(d.value, d.clustered_low, d.clustered_high, "bootstrap") for d in paper_dependence(ed).deltas
    ]
    clustered += [  # the per-type recalls read as one family, and the statistics at a deployment's share of faults
        format_interval(c.value, c.sim_low, c.sim_high, "bootstrap") for c in paper_type_family(ed).cells
    ]
    clustered += [
        format_interval(j.values[m], j.low[m], j.high[m], "bootstrap")
        for j in paper_deployment(ed).judges
        for m in j.values
    ]
    return texts + clustered + _intervals_in([ch.recalls, ch.counterfactual, ch.prevalence])


@pytest.fixture(scope="module")
def records() -> set[tuple[str, str, str]]:
    return quantity_records()


def stray_intervals(records: set[tuple[str, str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Page and value -> the intervals printed with it that no record with that value has."""
    values = {v for v, _, _ in records}
    stray = {}
    for page in _pages():
        for value, ivs in intervals_by_value(_reader_text(page)).items():
            if value in values:
                bad = sorted(iv for iv in ivs if (value, *iv) not in records)
                if bad:
                    stray[f"{page.relative_to(HTML)} {value}"] = bad
    return stray


def test_every_judge_value_is_printed_with_the_interval_of_its_one_record(records):
    # A judge's quantity is computed once: a value printed beside an interval that no record with that value
    # has is a second computation of one number (as 0.940 "(0.83-0.99)" beside the report's "(0.86-1.00)" was).
    assert stray_intervals(records) == {}


LEGEND = re.compile(r"(?<![\d)])([\u2020\u2021])\s+[A-Za-z]")
"""A mark that opens a phrase (its legend: "\u2020 marks an exact interval", "\u2020 Exact Clopper-Pearson...")."""


def test_each_interval_mark_has_its_legend_on_the_page():
    missing = []
    for page in _pages():
        text = _reader_text(page)
        explained = set(LEGEND.findall(text))
        missing += [f"{page.relative_to(HTML)} {m}" for m in sorted(set(MARKED.findall(text)) - explained)]
    assert missing == []


# --- provenance lines and downloads (book/_ext/tj_provenance.py) -----------------------------------
def _soup(page: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


def _chapters() -> list[Path]:
    return sorted((HTML / "notebooks").glob("*.html"))


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_provenance_checksum_is_the_sha256_of_the_file_it_names():
    seen, wrong = 0, []
    for page in _pages():
        for code in _soup(page).select("details.tj-provenance code.tj-sha"):
            seen += 1
            path, full = ROOT / code["data-path"], code["data-sha256"]
            if not full.startswith(code.get_text()) or not path.is_file() or _sha256(path) != full:
                wrong.append(f"{page.relative_to(HTML)} {code['data-path']}")
    assert seen and wrong == []


def test_every_line_names_the_package_function_that_computed_its_table_or_figure():
    unnamed = [
        f"{page.name} #{i}"
        for page in _chapters()
        for i, d in enumerate(_soup(page).select("details.tj-provenance"))
        if not d.select_one("p > code")
        or not d.get_text().split("Computed by", 1)[-1].strip().startswith("trajectory_judge.")
    ]
    assert unnamed == []


def test_every_table_and_figure_of_a_chapter_says_how_it_was_made():
    missing = []
    for page in _chapters():
        soup = _soup(page)
        for node in soup.select("figure.numbered-table, div.cell_output img, div.tj-figure"):
            if node.name == "img" and node.parent.name == "figure":
                node = node.parent  # the line follows the figure's caption
            nxt = node.find_next_sibling()
            if nxt is None or "tj-provenance" not in (nxt.get("class") or []):
                missing.append(
                    f"{page.relative_to(HTML)} {node.get('id') or node.get('alt') or node.get('aria-label', '')[:40]}"
                )
    assert missing == []


def _downloads(page: Path) -> list[tuple[Path, str]]:
    out = []
    for a in _soup(page).select("#tj-downloads a.tj-download"):
        out.append(((page.parent / a["href"]).resolve(), a.find_next_sibling("code", class_="tj-sha")["data-sha256"]))
    return out


def test_each_chapter_of_results_offers_its_tables_and_data_with_true_checksums():
    with_tables = [p for p in _chapters() if _soup(p).select("figure.numbered-table")]
    assert with_tables
    wrong = []
    for page in with_tables:
        links = _downloads(page)
        kinds = {p.suffix for p, _ in links}
        if not {".csv", ".json", ".jsonl"} <= kinds:
            wrong.append(f"{page.name}: {sorted(kinds)}")
        wrong += [f"{page.name} {p}" for p, sha in links if not p.is_file() or _sha256(p) != sha]
    assert wrong == []


def test_a_downloaded_csv_parses_back_to_the_values_of_the_table_shown():
    import json

    import pandas as pd

    from trajectory_judge.book.render.tables import readable

    page = HTML / "notebooks" / "results.html"
    soup = _soup(page)
    checked = 0
    for fig in soup.select("figure.numbered-table"):
        name = fig.select_one("div.tj-table-block")["data-name"]
        base = HTML / "_downloads" / "tj" / "results" / "tables" / name
        doc = json.loads(base.with_suffix(".json").read_text(encoding="utf-8"))
        frame = pd.read_csv(
            base.with_suffix(".csv"),
            header=list(range(doc["column_levels"])),
            index_col=list(range(doc["index_levels"])),
            keep_default_na=False,
            na_values=[""],
        )
        text = readable(frame, decimals=doc["decimals"], counts=doc["counts"])
        shown = [
            [td.get_text(" ", strip=True) for td in tr.select("td")]
            for tr in fig.select_one("table.tj-table").select("tbody tr")
            if tr.select("td")
        ]
        assert shown == text.iloc[: len(shown)].astype(str).values.tolist(), name
        checked += 1
    assert checked >= 3


# --- the execution page (book/execution.md, filled by book/_ext/tj_execution.py) -------------------
EXECUTION = HTML / "book" / "execution.html"


def _execution_table(name: str) -> list[tuple[str, str | None, list[str]]]:
    """Rows of the execution page's table ``name``: (row label, its link or None, cell texts)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(EXECUTION.read_text(encoding="utf-8"), "html.parser")
    tab = soup.find("table", id=f"T_{name}")
    assert tab is not None, f"no table {name} on the execution page"
    rows = []
    for tr in tab.find("tbody").find_all("tr"):
        th, link = tr.find("th"), tr.find("th").find("a")
        rows.append(
            (
                th.get_text(" ", strip=True),
                link["href"] if link else None,
                [td.get_text(" ", strip=True) for td in tr.find_all("td")],
            )
        )
    return rows


def test_execution_page_lists_each_chapter_of_the_book_once_with_a_link_to_it():
    toc = re.findall(r"file:\s*notebooks/(\w+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
    links = [href for _, href, _ in _execution_table("tbl-execution-chapters")]
    assert sorted(links) == sorted(f"../notebooks/{stem}.html" for stem in toc) and len(set(links)) == len(links)
    rows = _execution_table("tbl-execution-chapters")
    outputs = {"committed notebook", "executed for this build", "an earlier build’s execution"}
    assert all(cells[0] in outputs for _, _, cells in rows), [cells[0] for _, _, cells in rows]


def test_execution_page_shows_a_committed_chapter_only_when_its_notebook_records_the_digest_the_page_names():
    import json

    rows = _execution_table("tbl-execution-chapters")
    text = _reader_text(EXECUTION)
    named = re.search(r"\(sha256 ([0-9a-f]{12})\)", text)
    assert named is not None, "the execution page names no data digest"
    for title, href, cells in rows:
        if cells[0] != "committed notebook":
            continue
        nb = json.loads((ROOT / "notebooks" / f"{Path(href).stem}.ipynb").read_text(encoding="utf-8"))
        assert nb["metadata"]["trajectory_judge"]["data_sha256"].startswith(named.group(1)), title
        assert cells[1] == "–"  # a committed notebook records no run time


def test_execution_page_run_times_are_positive_and_add_up_to_its_total_and_name_the_slowest():
    rows = _execution_table("tbl-execution-chapters")
    times = {title: float(cells[1]) for title, _, cells in rows if cells[0] == "executed for this build"}
    text = _reader_text(EXECUTION)
    if not times:
        assert "Nothing executed in this build." in text or "earlier build" in text
        return
    assert all(t > 0 for t in times.values())
    m = re.search(r"Executing took (\d+\.\d) s between them(?:; the slowest, (.+?), (\d+\.\d) s)?", text)
    assert m is not None, "no total on the execution page"
    assert abs(sum(times.values()) - float(m.group(1))) <= 0.05 * len(times) + 0.05  # each rounded to 0.1 s
    if m.group(2):
        assert times[m.group(2)] == float(m.group(3)) == max(times.values())


def test_execution_page_names_the_lock_by_its_sha256_and_a_commit_of_this_repository():
    import hashlib
    import subprocess

    from trajectory_judge.book.building.execution_page import COMMIT_ROW, LOCK_ROW

    env = {label: cells for label, _, cells in _execution_table("tbl-execution-environment")}
    assert env[LOCK_ROW][0] == hashlib.sha256((ROOT / ".ci" / "requirements.lock").read_bytes()).hexdigest()
    commit = env[COMMIT_ROW][0].split(",")[0]
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    assert subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"]).returncode == 0


def test_execution_page_versions_are_the_installed_ones_as_every_chapter_saw_them():
    import platform

    from trajectory_judge.book.building.records import KEY_PACKAGES, package_versions

    env = {}
    for label, _, cells in _execution_table("tbl-execution-environment"):
        assert label not in env, f"{label}: the chapters' kernels saw more than one version"
        env[label] = cells
    assert env["Python"] == [platform.python_version(), "every chapter"]
    for package, version in package_versions(KEY_PACKAGES).items():
        assert env[package] == [version, "every chapter"], package


def test_execution_page_checksums_are_those_of_the_files_in_the_repository():
    import hashlib

    rows = _execution_table("tbl-execution-files")
    assert rows and len({name for name, _, _ in rows}) == len(rows)
    for name, _, (short, size, _readers) in rows:
        if name.startswith("$"):
            continue  # a folder named by a variable of the build ($TJ_DATA...): not necessarily this machine's now
        data = (ROOT / name).read_bytes()
        assert hashlib.sha256(data).hexdigest().startswith(short) and len(short) == 12, name
        assert int(size) == len(data), name


# --- counts of claims, and links to the register's rows -------------------------------------------------------------
@pytest.fixture(scope="module")
def claim_tallies() -> dict[str, dict[str, int]]:
    """Each set of claims the book counts, by its words, with the register's tally of it on the committed data."""
    from trajectory_judge.book.chapters.editions import load_editions
    from trajectory_judge.book.chapters.landing import FINDING_KEYS, FINDING_SCOPE
    from trajectory_judge.book.render.claim_summary import SCOPES, tally, tally_of
    from trajectory_judge.book.render.claim_text import paper_claims

    ed = load_editions(10_000, 7)
    claims = paper_claims(ed.paper_rep, ed.paper)
    out = {SCOPES[name][1]: tally(claims, name).counts() for name in SCOPES}
    out[FINDING_SCOPE] = tally_of(claims, FINDING_KEYS, FINDING_SCOPE).counts()
    return out


def test_every_count_of_claims_a_page_prints_is_the_registers_tally(claim_tallies):
    from claim_counts import read_counts

    wrong, found = [], 0
    for page in _pages():
        for said in read_counts(_reader_text(page)):
            found += 1
            counts = claim_tallies.get(str(said["scope"]))
            if counts is None or any(counts[k] != v for k, v in said.items() if k != "scope"):
                wrong.append(f"{page.relative_to(HTML)}: {said} against {counts}")
    assert found and not wrong, "\n".join(wrong)


def test_every_link_to_a_register_row_names_a_row_of_the_register_and_every_citing_chapter_links():
    audit = _soup(HTML / "notebooks" / "audit.html")
    rows = {tr["id"] for tr in audit.select("tr[id^=claim-]")}
    assert rows, "the register's rows carry no anchors"
    broken, linking = [], set()
    for page in _pages():
        for a in _soup(page).select("a.tj-claim-mark"):
            target, _, anchor = a["href"].partition("#")
            if anchor not in rows or target not in ("", "audit.html"):
                broken.append(f"{page.relative_to(HTML)}: {a['href']}")
            linking.add(page.name)
    assert not broken, broken
    assert {"results.html", "analysis.html", "audit.html"} <= linking
