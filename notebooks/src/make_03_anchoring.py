"""Builds notebooks/03_anchoring.ipynb (executed, outputs saved)."""

from _builder import Builder

nb = Builder()
md, code = nb.md, nb.code


md("""# 03 — Dynamic anchoring of large JSON arrays (SmartCrusher)

Which positions does `scwo_np.anchor.crush` keep, for each data pattern and query? Each row
of the pictures below is one call; a mark is a kept position. The static rule (first 3 +
last 2) is the top row for comparison. The notebook is executed by the test suite.""")

code("""import matplotlib.pyplot as plt
import numpy as np

from scwo_np.anchor import AnchorConfig, PositionLearner, crush

rng = np.random.default_rng(0)
N, K = 400, 24
datasets = {
    "search_results": [{"title": f"result {i}", "score": round(1 - i / N, 4)} for i in range(N)],
    "logs": [{"timestamp": f"2024-01-01T{i // 60:02d}:{i % 60:02d}:00", "level": "ERROR" if i in (123, 301) else "INFO",
              "message": f"request {i}"} for i in range(N)],
    "time_series": [{"ts": f"2024-01-{1 + i // 24:02d}T{i % 24:02d}:00", "value": float(np.sin(i / 20) + (8 if i == 250 else 0))}
                    for i in range(N)],
    "generic": [{"id": f"row{i:04d}", "category": "ABCD"[i * 4 // N], "size": int(rng.integers(1, 100))} for i in range(N)],
}""")

code("""def picture(title, rows):
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 0.8))
    for r, (_, idx) in enumerate(rows):
        ax.scatter(idx, np.full(len(idx), r), marker="|", s=160)
    ax.set_yticks(range(len(rows)), [label for label, _ in rows])
    ax.set_xlim(-5, N + 5)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.set_xlabel("position in the array")
    plt.tight_layout()


for name, items in datasets.items():
    rows = [("static (first 3 + last 2)", crush(items, K, config=AnchorConfig(strategy="static")))]
    for q in ["", "show the latest entries", "what happened first", "give me all of it"]:
        idx, rep = crush(items, K, query=q, report=True)
        rows.append((f"{q or 'no query'}  [{rep.pattern}, anchors {rep.anchor_slots}]", idx))
    picture(name, rows)""")

md("""## What is always kept

Errors, numeric anomalies and items named in the query are kept wherever they sit; when
they alone exceed the budget, the most severe win and the report says how many were dropped.""")

code("""items = datasets["logs"]
idx, rep = crush(items, 10, query="what about request 200", report=True)
print([items[i]["message"] for i in idx])
print(f"pattern {rep.pattern}, errors {rep.errors}, query matches {rep.query_matches}, anchors {rep.anchor_slots}")
assert 123 in idx and 301 in idx and 200 in idx
ts = datasets["time_series"]
assert 250 in crush(ts, 10), "the spike at position 250 is kept"
""")

md("""## Learned positions

A `PositionLearner` counts which positions users actually retrieved per tool (SQLite, one
file); after 10 recorded compressions its weights replace the pattern's.""")

code("""learner = PositionLearner(":memory:")
for _ in range(12):
    learner.record_retrieval("db_query", N, list(rng.integers(int(N * 0.4), int(N * 0.6), 3)))
w = learner.weights("db_query")
print(learner.pattern("db_query"), w)
items = datasets["generic"]
picture("generic rows: pattern weights vs learned (users look in the middle)",
        [("pattern", crush(items, K)), ("learned", crush(items, K, learned=w))])""")

md("""## On a real log: the size chosen from the data, the marker, and getting items back

`scwo_evals/data/tool_outputs/dpkg_log.jsonl` is Debian's package log as JSON Lines (3,000 events no one
here wrote). `max_items="auto"` picks the size from the data: the fewest items whose facts
(normalised values, words, numeric buckets, field sets) cover 95% of the log's, plus every
error, anomaly and rare event. The marker says what was dropped; the store gives it back.""")

code("""import json
from pathlib import Path

from scwo_np.anchor import CrushStore, auto_size, columns, crush_json, information_curve, read_document

root = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "scwo_evals" / "data" / "tool_outputs").is_dir())
text = (root / "scwo_evals" / "data" / "tool_outputs" / "dpkg_log.jsonl").read_text()
log = read_document(text).items
c = columns(log)
curve = information_curve(c)
sizes = {b: auto_size(c, bias=b, upper=400) for b in ("aggressive", "balanced", "conservative")}
fig, ax = plt.subplots(figsize=(9, 3))
ax.plot(np.arange(1, curve.size + 1), curve / curve[-1])
for b, k in sizes.items():
    ax.axvline(k, ls=":", c="grey")
    ax.text(k, 0.1, f" {b}: {k}", rotation=90)
ax.set_xscale("log")
ax.set_xlabel("items kept (greedy order)")
ax.set_ylabel("share of the facts covered")
ax.set_title(f"dpkg log: {len(log)} events, {curve[-1]} facts")
plt.tight_layout()""")

code("""store = CrushStore(":memory:")
out = crush_json(text, "auto", query="latest upgrades", store=store).splitlines()
marker = json.loads(out[-1])["_omitted"]
print(f"kept {len(out) - 1} of {marker['of']}; dropped {marker['count']} in {len(marker['ranges'])} ranges")
print(json.dumps(marker["fields"]["action"]))
upgrades = store.retrieve(marker["key"], where={"action": "upgrade"}, dropped_only=False)
kept_upgrades = [json.loads(line) for line in out[:-1] if json.loads(line)["action"] == "upgrade"]
installs = store.retrieve(marker["key"], where={"action": "install"})  # by default only what was dropped
print(f"{len(kept_upgrades)} of the {len(upgrades)} upgrades in the context (the query names them); "
      f"the {len(installs)} dropped installs come back from the store, e.g. {installs[0]}")
assert len(upgrades) == sum(r["action"] == "upgrade" for r in log)
assert len(installs) == sum(r["action"] == "install" for r in log) - sum(
    json.loads(line)["action"] == "install" for line in out[:-1])
assert all(json.loads(line) in log for line in out[:-1])""")

nb.write("03_anchoring.ipynb")
