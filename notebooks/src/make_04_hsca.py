"""Builds notebooks/04_hsca.ipynb (executed, outputs saved)."""

from _builder import Builder

nb = Builder()
md, code = nb.md, nb.code


md("""# 04 — HSCA: a conversation's macro map

`scwo_np.hsca.HSCAEngine` scores every turn through layers 1–3 (relational weight, domain
tags and coherence, nuance flags), buffers turns into a *beat*, and freezes the beat into a
`ContextSnapshot` when the beat is coherent and the next turn changes topic, or when the
buffer is full. The list of snapshots is the conversation's *macro map*. This notebook builds
a conversation from real text — 15 turns in 5 true topics: three consecutive paragraphs each
from five modules of the Python documentation bundled with the package (modules kept out of
layer 1's background corpus) — draws its map, scores the beat boundaries against the true
topic changes, asks the map the structural questions of the spec's section 3, and runs the
evals. It is executed by the test suite and uses the public API only, plus the eval harness
(`scwo_evals`, which lives in the source tree beside the notebooks, not in the wheel).""")

code("""import sys
from pathlib import Path

import matplotlib.pyplot as plt

from scwo_np.hsca import HSCAEngine, Tuner

# The eval harness is in the source tree (a clone), not in the installed package.
sys.path.insert(0, str(next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "scwo_evals").is_dir())))
from scwo_evals import hsca as evals  # noqa: E402

paragraphs = {}
for source, text in evals.pydoc_paragraphs():
    paragraphs.setdefault(source, []).append(text)
modules = ["library/json.rst", "library/sqlite3.rst", "library/random.rst", "library/datetime.rst",
           "library/re.rst"]
turns, truth = [], []
for topic, module in enumerate(modules):
    for text in paragraphs[module][3:6]:
        turns.append(text)
        truth.append(topic)

eng = HSCAEngine()
for t in turns:
    eng.ingest_turn(t)
if eng.buffer:  # the conversation ends: freeze what is left
    eng.take_snapshot()
snaps = eng.get_macro_context()
hyp = [k for k, s in enumerate(snaps) for _ in s.chunks]
print(f"{len(turns)} turns in {len(modules)} topics -> {len(snaps)} snapshots; "
      f"Pk {evals.pk(truth, hyp):.2f}, WindowDiff {evals.window_diff(truth, hyp):.2f}")
start = 0
for s in snaps:
    top = sorted(s.domain_summary.items(), key=lambda kv: -kv[1])[:3]
    print(
        f"{s.conversation_position}: turns {start + 1}-{start + len(s.chunks)}",
        f"(true topics {sorted(set(truth[start:start + len(s.chunks)]))})",
        f"macro_weight {s.macro_weight:.2f}",
        "forced" if s.forced else "",
        {k: round(v, 2) for k, v in top},
    )
    start += len(s.chunks)""")

md("""## The macro map

One column per snapshot, as wide as the turns it holds; the stacked bars are its topical
domain distribution (normalised to 1 for the picture), the black line its `macro_weight`
(mean layer-1 weight), a star marks `cross_domain`. Dashed lines are the true topic changes
of the conversation (where one module's paragraphs end and the next module's begin).""")

code("""topics = sorted({k for s in snaps for k in s.domain_summary} - {"cross_domain", "unclassified"})
colours = dict(zip(topics, plt.cm.tab10.colors, strict=False))
fig, ax = plt.subplots(figsize=(11, 4))
start = 0
for s in snaps:
    width = len(s.chunks)
    dist = {k: v for k, v in s.domain_summary.items() if k in colours}
    total = sum(dist.values()) or 1.0
    bottom = 0.0
    for k in topics:
        h = dist.get(k, 0.0) / total
        ax.bar(start, h, width=width, bottom=bottom, align="edge", color=colours[k], edgecolor="white")
        bottom += h
    ax.plot([start, start + width], [s.macro_weight] * 2, color="black", lw=2)
    if "cross_domain" in s.domain_summary:
        ax.plot(start + width / 2, 1.04, marker="*", color="black", ms=12)
    start += width
for k in range(1, len(truth)):
    if truth[k] != truth[k - 1]:
        ax.axvline(k, color="grey", ls="--")
handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in topics]
ax.legend(handles, topics, loc="upper left", bbox_to_anchor=(1.0, 1.0))
ax.set_xlim(0, len(turns))
ax.set_ylim(0, 1.1)
ax.set_xlabel("turn")
ax.set_ylabel("domain share / macro weight")
ax.set_title("macro map: snapshots over time and their domain distributions")
plt.tight_layout()""")

md("""## Structural queries (spec section 3)""")

code("""word = "cursor"  # first met in the sqlite3 turns
before = eng.state_before(word)
print(
    f"before {word!r} was introduced: {len(before)} snapshot(s),",
    [max(s.domain_summary, key=s.domain_summary.get) for s in before],
)
print("domain evolution:", [max(d, key=d.get) for d in eng.domain_evolution()])
query = " ".join(snaps[-1].chunks[0].text.split()[:6])
for s, score in eng.relevant_snapshots(query, last=3)[:3]:
    print(f"last three beats, position {s.conversation_position}: relevance {score:.3f}")""")

md("""## Self-tuning

Hits recorded with the domain their query was about teach layer 2: per-domain weights, and
domain words for stems no lexicon knows; window, threshold and nuance weights learn from
hit/miss contrast. Every step is bounded and reversible.""")

code("""tuner = Tuner()
for s in snaps:
    dom = max((k for k in s.domain_summary if k in colours), key=s.domain_summary.get)
    for c in s.chunks:
        tuner.record(c, hit=True, domain=dom)
params = tuner.tune(eng)
words = params.pop("domain_words")
print(params)
print(len(words), "learned domain words, e.g.", dict(list(words.items())[:8]))
print(tuner.revert(eng))""")

md("""## The evals (section 7)

`python -m scwo_evals.hsca` (from a clone) prints all seven; eval 3 replays 1,000 interactions three times (about 25 s),
so it is left to the command line here.""")

code("""for r in evals.run([1, 2, 4, 5, 6]):
    print(r.line(), {k: round(v, 3) if isinstance(v, float) else v for k, v in r.detail.items()})""")

nb.write("04_hsca.ipynb")
