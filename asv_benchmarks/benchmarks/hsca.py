"""Benchmarks for scwo_np.hsca: layer-1 throughput, a long document, ingest_turn, the snapshot store.

Targets: layer 1 in batch >= 1,000,000 tokens/s on 2 cores (including
tokenizing); a 20,000-word document <= 50 ms; ``ingest_turn`` on a 100-word
turn <= 1 ms median; compared in the same run with a TextRank-style baseline
(sparse co-occurrence graph + PageRank over the same tokens).  Layer 1's
background model loads in <= 100 ms and adds <= 50 MB to the installed package
(``Background``); eval 6's layer-1 AUCs on the held-out real texts are tracked
as quality (``RealText``, criterion 0.95).
"""

from importlib import resources
from pathlib import Path

import numpy as np
from scipy import sparse

from scwo_np.hsca import (
    ContextSnapshot,
    HSCAEngine,
    SnapshotStore,
    WeightedChunk,
    relational_weights,
    tokenize,
)
from scwo_np.hsca import _background as background_module

from .common import Benchmark, best_time, sizes
from .datasets import pydoc_paragraphs


def _corpus(n_docs=1000, paragraphs=30):
    texts, _ = pydoc_paragraphs(500, edited=0)
    return [" ".join(texts[(k + j) % len(texts)] for j in range(paragraphs)) for k in range(n_docs)]


def textrank(tok, window=5, iters=30, d=0.85):
    """TextRank-style baseline on the same tokens: per document, a co-occurrence graph and PageRank."""
    out = np.zeros(tok.tok_ptr.shape[0] - 1)
    for t in range(out.shape[0]):
        w = tok.words[tok.tok_ptr[t] : tok.tok_ptr[t + 1]]
        if w.size < 2:
            continue
        uniq, inv = np.unique(w, return_inverse=True)
        rows, cols = [], []
        for k in range(1, window):
            rows.append(inv[:-k])
            cols.append(inv[k:])
        r, c = np.concatenate(rows), np.concatenate(cols)
        A = sparse.coo_matrix((np.ones(r.size), (r, c)), shape=(uniq.size, uniq.size)).tocsr()
        A = A + A.T
        deg = np.asarray(A.sum(axis=1)).ravel()
        deg[deg == 0] = 1
        P = sparse.diags(1 / deg) @ A
        x = np.full(uniq.size, 1 / uniq.size)
        for _ in range(iters):
            x = (1 - d) / uniq.size + d * (P.T @ x)
        out[t] = x.max()
    return out


class Layer1(Benchmark):
    number = 1
    repeat = 1

    def setup(self):
        self.texts = _corpus()
        self.tok = tokenize(self.texts)
        self.ntok = self.tok.words.shape[0]
        relational_weights(self.tok)
        self.doc = " ".join(" ".join(self.texts[:3]).split()[:20000])
        relational_weights([self.doc])

    def track_layer1_tokens_per_second(self):
        """Layer 1 on token arrays (the text tokenized once beforehand), 2 threads."""
        return self.ntok / best_time(lambda: relational_weights(self.tok), repeat=5)

    track_layer1_tokens_per_second.unit = "tokens/s"

    def track_layer1_with_tokenizing_tokens_per_second(self):
        return self.ntok / best_time(lambda: relational_weights(self.texts), repeat=2)

    track_layer1_with_tokenizing_tokens_per_second.unit = "tokens/s"

    def track_ms_20000_word_document(self):
        return 1e3 * best_time(lambda: relational_weights([self.doc]), repeat=5)

    track_ms_20000_word_document.unit = "ms"


class Layer1Curve(Benchmark):
    """Layer 1 over n documents of 30 paragraphs: against TextRank and against its floor.

    The floor is tokenizing alone (one pass over the text, which layer 1 must
    make); ``track_time_over_tokenize`` is layer 1 with tokenizing over that.
    """

    params = sizes(10, 100, 1_000)
    param_names = ["docs"]
    number = 1
    repeat = 1

    def setup(self, docs):
        self.texts = _corpus(docs)
        self.tok = tokenize(self.texts)
        relational_weights(self.tok)

    def track_speedup_vs_textrank(self, docs):
        sub = self.tok if docs <= 100 else tokenize(self.texts[:100])
        return best_time(lambda: textrank(sub), repeat=1) / best_time(
            lambda: relational_weights(sub), repeat=5
        )

    track_speedup_vs_textrank.unit = "x"

    def track_time_over_tokenize(self, docs):
        reps = 5 if docs <= 100 else 2
        ours = best_time(lambda: relational_weights(self.texts), repeat=reps)
        return ours / best_time(lambda: tokenize(self.texts), repeat=reps)

    track_time_over_tokenize.unit = "x tokenize"


class Engine(Benchmark):
    def setup(self):
        texts, _ = pydoc_paragraphs(500, edited=0)
        self.turn = " ".join(" ".join(texts[:5]).split()[:100])
        self.engine = HSCAEngine()
        self.engine.ingest_turn(self.turn)

    def time_ingest_turn_100_words(self):
        self.engine.ingest_turn(self.turn)


class Store(Benchmark):
    number = 1
    repeat = 3

    def setup(self):
        self.snaps = [
            ContextSnapshot(
                f"s{i}", [WeightedChunk(f"c{i}", "some text " * 20, 0.5, ["physics"], 0.8, [], f"s{i}", 0.0)],
                0.5, {"physics": 1.0}, i, False, 0.0,
            )
            for i in range(10_000)
        ]  # fmt: skip

    def time_save_and_load_10000_snapshots(self):
        store = SnapshotStore(":memory:")
        store.save("bench", self.snaps)
        store.load("bench")


class Background(Benchmark):
    """The background word-association table of layer 1: load time, memory, size on disk."""

    def timeraw_load_background(self):
        """A fresh process loading the table (the package already imported)."""
        return "background()", "from scwo_np.hsca._background import background"

    def setup(self):
        background_module._MODEL.clear()

    def peakmem_load_background(self):
        background_module.background()

    def track_installed_megabytes(self):
        """Bytes the HSCA data files add to the installed package (target <= 50 MB)."""
        folder = Path(str(resources.files("scwo_np.bundled").joinpath("hsca")))
        return sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) / 1e6

    track_installed_megabytes.unit = "MB"


class RealText(Benchmark):
    """Eval 6 on the held-out third of the real texts: layer 1 genuine vs stuffed and vs salad (AUC)."""

    number = 1
    repeat = 1

    def setup(self):
        from scwo_evals.realtext import eval6_real_text

        self.result = eval6_real_text()

    def track_layer1_auc_vs_stuffed(self):
        return self.result.detail["layer1_auc_vs_stuffed"]

    def track_layer1_auc_vs_salad(self):
        return self.result.detail["layer1_auc_vs_salad"]

    def track_coherence_median_salad(self):
        return self.result.detail["coherence_median_salad"]


class RealDomains(Benchmark):
    """Eval 7 on the held-out third: domain tags against the domain each document's source gives."""

    number = 1
    repeat = 1

    def setup(self):
        from scwo_evals.realtext import eval7_real_domains

        self.result = eval7_real_domains()

    def track_macro_recall(self):
        return self.result.pass_rate

    track_macro_recall.unit = "share"

    def track_poetry_recall(self):
        return self.result.detail["poetry_recall"]

    track_poetry_recall.unit = "share"

    def track_legal_precision(self):
        return self.result.detail["legal_precision"]

    track_legal_precision.unit = "share"
