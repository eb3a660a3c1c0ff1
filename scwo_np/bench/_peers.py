"""The peers of :func:`~scwo_np.bench.quality_at_budget`: other libraries' context selection, run on
the same questions, vectors and budgets as ours (``scwo bench --quality --peers``).

Each peer is a function ``peer(texts, question, query, vectors, costs, budget, token_counter, *,
embedder) -> list of str``: the 50 retrieved paragraphs in retrieval order, the question as text and
as a vector, the paragraphs' vectors and token counts, the budget, the benchmark's token counter, and
the embedder that made the vectors (for a peer that embeds sentences itself).  It returns the texts
it puts into the context.  :data:`PEERS` names them; each entry says which package it needs and the
settings it runs with.  Nothing here imports a peer's package until that peer runs.

The benchmark counts what a peer returns the way it counts the array strategies' picks: the tokens
of each text by the token counter, separators free.  A peer with no budget of its own (LlamaIndex's
optimizer), or one that overshoots its target (headroom's TextCrusher stops after the segment that
reaches it), can return more: :func:`run_peer` then cuts the context (the texts joined by a blank
line) to the budget and reports the overrun, which the benchmark counts as ``over``.

Peers that choose a number of items ``k`` rather than a budget (pyversity's strategies, LangChain's
MMR) get the largest ``k`` whose picks fit: ``k`` grows from 1 while the ``k`` texts picked fit the
budget (each strategy is run again at each ``k``, so one whose picks depend on ``k`` is taken as it
is at that ``k``).  They never overrun; they leave what is left of the budget empty.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._registry import Registry
from ..embed import embed_texts, embedder_name

__all__ = ["PEERS", "Peer", "cut_to_budget", "installed", "require", "run_peer", "with_peers"]

#: What joins the texts a method returns into one context.
SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Peer:
    """One peer: its adapter, the module whose absence skips it, its package and its settings."""

    fn: Callable[..., list[str]]
    module: str
    package: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    about: str = ""


def _relevance(query: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Cosine of each vector to the query (what the retriever ranked by)."""
    v = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    return (v @ q) / (np.linalg.norm(v, axis=1) * np.linalg.norm(q))


def _largest_k(pick: Callable[[int], Sequence[int]], texts, costs, budget) -> list[str]:
    """The texts of the largest ``k`` (grown from 1) whose ``pick(k)`` fits the budget."""
    best: list[str] = []
    for k in range(1, len(texts) + 1):
        idx = [int(j) for j in pick(k)]
        if int(np.sum(np.asarray(costs)[idx])) > budget:
            break
        best = [texts[j] for j in idx]
    return best


def _headroom(texts, question, query, vectors, costs, budget, token_counter, *, embedder, order="retrieved",
              **config) -> list[str]:  # fmt: skip
    from headroom.transforms.text_crusher import TextCrusher, TextCrusherConfig

    ordered = list(texts) if order == "retrieved" else list(texts)[::-1]
    content = SEPARATOR.join(ordered)  # its segments are lines and sentences; blank lines are skipped
    ratio = budget / max(1, token_counter(content))  # its target is a share of the input's characters
    out = TextCrusher(TextCrusherConfig(**config)).compress(content, question, ratio)
    return [out.compressed]


def _pyversity(texts, question, query, vectors, costs, budget, token_counter, *, embedder, strategy,
               diversity=0.5) -> list[str]:  # fmt: skip
    from pyversity import diversify

    rel = _relevance(query, vectors)
    E = np.asarray(vectors, dtype=np.float64)
    return _largest_k(
        lambda k: diversify(E, rel, k, strategy=strategy, diversity=diversity).indices, texts, costs, budget
    )


def _langchain(texts, question, query, vectors, costs, budget, token_counter, *, embedder,
               lambda_mult=0.5) -> list[str]:  # fmt: skip
    from langchain_core.vectorstores.utils import maximal_marginal_relevance

    q = np.asarray(query, dtype=np.float64)
    E = np.asarray(vectors, dtype=np.float64)
    return _largest_k(
        lambda k: maximal_marginal_relevance(q, E, lambda_mult=lambda_mult, k=k), texts, costs, budget
    )


@functools.cache
def _vectors_class() -> type:
    """A LlamaIndex ``BaseEmbedding`` over one of our embedders (the vectors the benchmark uses)."""
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr

    class BenchVectors(BaseEmbedding):
        _embedder: Any = PrivateAttr()

        def __init__(self, embedder: Callable) -> None:
            super().__init__(model_name=embedder_name(embedder))
            self._embedder = embedder

        @classmethod
        def class_name(cls) -> str:
            return "BenchVectors"

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embed_texts(self._embedder, texts).astype(np.float64).tolist()

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    return BenchVectors


@functools.lru_cache(maxsize=8)
def _optimized(texts: tuple[str, ...], rel: tuple[float, ...], question: str, query: tuple[float, ...],
               embedder: Callable, percentile_cutoff: float | None, context_before: int | None,
               context_after: int | None) -> tuple[str, ...]:  # fmt: skip
    """The node texts SentenceEmbeddingOptimizer leaves (it has no budget: the same at every one)."""
    from llama_index.core.postprocessor import SentenceEmbeddingOptimizer
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    nodes = [NodeWithScore(node=TextNode(text=t), score=float(r)) for t, r in zip(texts, rel, strict=True)]
    optimizer = SentenceEmbeddingOptimizer(
        embed_model=_vectors_class()(embedder),
        percentile_cutoff=percentile_cutoff,
        context_before=context_before,
        context_after=context_after,
    )
    out = optimizer.postprocess_nodes(nodes, query_bundle=QueryBundle(question, embedding=list(query)))
    return tuple(n.node.get_content() for n in out)


def _llamaindex(texts, question, query, vectors, costs, budget, token_counter, *, embedder,
                percentile_cutoff=None, context_before=None, context_after=None) -> list[str]:  # fmt: skip
    q = tuple(float(x) for x in np.asarray(query, dtype=np.float64))
    rel = tuple(float(r) for r in _relevance(query, vectors))  # the nodes' scores, as a retriever gives them
    return list(
        _optimized(tuple(texts), rel, question, q, embedder, percentile_cutoff, context_before, context_after)
    )


#: Peer name -> :class:`Peer`: what ``quality_at_budget(methods=[...])`` and ``scwo bench --quality
#: --methods`` accept beside :data:`~scwo_np.bench.QUALITY_METHODS`, and what ``--peers`` runs.
PEERS: Registry[Peer] = Registry(
    "methods",
    {
        "headroom": Peer(
            _headroom, "headroom", "headroom-ai",
            about="TextCrusher, its defaults (recency 1, relevance 2, salience 1.5); the 50 texts in "
            "retrieval order joined by blank lines, the question as context, target ratio budget / input tokens",
        ),
        "headroom (tuned)": Peer(
            _headroom, "headroom", "headroom-ai", {"w_recency": 0.0, "w_salience": 0.0},
            about="TextCrusher with recency and salience off (w_recency=0, w_salience=0: BM25 relevance and its "
            "near-duplicate check), the best of 10 settings on the tune split",
        ),
        **{
            f"pyversity {s}": Peer(
                _pyversity, "pyversity", "pyversity", {"strategy": s},
                about=f"diversify(strategy={s!r}), its default diversity 0.5, the cosine to the question as "
                "scores; the largest k whose picks fit",
            )
            for s in ("mmr", "msd", "dpp", "ssd", "cover")
        },
        "langchain mmr": Peer(
            _langchain, "langchain_core", "langchain-core",
            about="langchain_core's maximal_marginal_relevance, its default lambda_mult 0.5; the largest k "
            "whose picks fit",
        ),
        "llamaindex optimizer": Peer(
            _llamaindex, "llama_index.core", "llama-index-core",
            about="SentenceEmbeddingOptimizer, its defaults (no percentile or threshold cutoff, one sentence "
            "of context each side) over the 50 texts as nodes, our vectors through a BaseEmbedding",
        ),
        "llamaindex optimizer (tuned)": Peer(
            _llamaindex, "llama_index.core", "llama-index-core", {"percentile_cutoff": 0.5},
            about="SentenceEmbeddingOptimizer with percentile_cutoff=0.5 (each node's better half of its "
            "sentences), the best of None, 0.3, 0.5, 0.7 and 0.9 on the tune split",
        ),
    },
)  # fmt: skip


def installed(registry: Mapping[str, Peer] | None = None) -> tuple[list[str], list[str]]:
    """The peers whose package is installed, and one line for each that is not.

    Examples
    --------
    >>> names, skipped = installed({"ghost": Peer(_langchain, "scwo_np_no_such_peer", "ghost-peer")})
    >>> names, skipped
    ([], ["peer 'ghost' skipped: ghost-peer is not installed (pip install ghost-peer)"])
    """
    registry = PEERS if registry is None else registry
    names, skipped = [], []
    for name, peer in registry.items():
        if _found(peer.module):
            names.append(name)
        else:
            skipped.append(
                f"peer {name!r} skipped: {peer.package} is not installed (pip install {peer.package})"
            )
    return names, skipped


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent is missing
        return False


def require(name: str) -> Peer:
    """The peer ``name``, installed: an ``ImportError`` with the pip line when its package is missing."""
    peer = PEERS.lookup(name)
    if not _found(peer.module):
        raise ImportError(f"peer {name!r} needs {peer.package}: pip install {peer.package}")
    return peer


def with_peers(
    methods: Sequence[str] | None, peers: bool, ours: Sequence[str]
) -> tuple[list[str] | None, list[str]]:
    """``methods`` (None: ``ours``) with every installed peer added if ``peers``, and a line for each
    peer skipped; a peer named in ``methods`` and not installed is an ``ImportError``."""
    for name in methods or ():
        if name in PEERS:
            require(name)
    if not peers:
        return (None if methods is None else list(methods)), []
    names, skipped = installed()
    return list(dict.fromkeys([*(ours if methods is None else methods), *names])), skipped


def cut_to_budget(context: str, budget: int, token_counter: Callable[[str], int]) -> str:
    """The longest prefix of ``context`` within ``budget`` tokens, ended at a word boundary.

    Examples
    --------
    >>> from scwo_np.tokens import as_token_counter
    >>> cut_to_budget("one two three four five six", 4, as_token_counter("estimate"))
    'one two three'
    """
    if token_counter(context) <= budget:
        return context
    lo, hi = 0, len(context)  # the prefix of lo characters fits, the one of hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if token_counter(context[:mid]) <= budget:
            lo = mid
        else:
            hi = mid
    out = context[:lo]
    if not context[lo].isspace():  # the cut fell inside a word: end at the one before
        space = max(out.rfind(" "), out.rfind("\n"))
        if space > 0:
            out = out[:space]
    return out.rstrip()


def run_peer(name: str, texts: Sequence[str], question: str, query: np.ndarray, vectors: np.ndarray,
             costs: np.ndarray, budget: int, token_counter: Callable[[str], int],
             embedder: Callable, **settings: Any) -> tuple[str, int, bool]:  # fmt: skip
    """Run one peer: the context it gives (cut to the budget), its tokens, and whether it overran.

    ``settings`` override the peer's own (to try others: ``quality_at_budget(methods={"mine":
    {"peer": "headroom", "w_recency": 0.5}})``).
    """
    peer = require(name)
    out = peer.fn(list(texts), question, query, vectors, costs, budget, token_counter, embedder=embedder,
                  **{**peer.settings, **settings})  # fmt: skip
    tokens = int(sum(token_counter(t) for t in out))
    context = SEPARATOR.join(out)
    if tokens <= budget:
        return context, tokens, False
    context = cut_to_budget(context, budget, token_counter)
    return context, token_counter(context), True
