"""``scwo select``, ``scwo demo``, ``scwo sample`` and ``scwo bench``: budgeted MMR from the command line."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .. import _dot
from ..embed import EMBEDDERS
from ..select import (
    GRANULARITIES,
    MMR_METHODS,
    ORDERS,
    STRATEGIES,
    arrange,
    auto_lam,
    coverage,
    mmr_select,
    topk_relevance,
    truncate,
)
from ..tokens import COUNTERS
from ._io import (
    _count,
    _embeddings,
    _input_file,
    _lam,
    _out,
    _output_file,
    _read_chunks,
    _read_jsonl,
    _renamed_flag,
    _text_field,
    _texts,
    _token_counter,
    _token_counts,
    _vector_option,
    _where,
    _write_jsonl,
)
from ._strategy import _by_strategy


def _cmd_select(args: argparse.Namespace) -> int:
    args.file = _input_file(args.file)
    if args.query is not None:
        return _cmd_select_text(args)
    for opt in ("embedder", "tokens", "cache", "elision"):
        if getattr(args, opt) is not None:
            raise SystemExit(
                f"scwo: --{opt.replace('tokens', 'token-counter')} goes with --query (a question as text)"
            )
    if args.granularity != "chunk":
        raise SystemExit(
            "scwo: --granularity sentence goes with --query (sentences are embedded from their text)"
        )
    records, E, costs = _read_chunks(args.file, args.embedding_field, args.tokens_field)
    if not len(records) and args.query_index is None:
        if not args.quiet:
            sys.stderr.write(f"scwo select: {_where(args.file)} holds no chunks; nothing to select\n")
        return 0
    if args.query_index is not None:
        if not records:
            where = "standard input" if args.file == "-" else args.file
            raise SystemExit(f"scwo: {where} has no chunks to take --query-index {args.query_index} from")
        if not 0 <= args.query_index < len(records):
            raise SystemExit(f"scwo: --query-index must be in [0, {len(records)}); got {args.query_index}")
        q = E[args.query_index]
    else:
        q = _vector_option(args.query_embedding, "--query-embedding")
    try:
        lam = args.lam
        if lam == "auto" and len(records):  # the choice mmr_select would make, made here to report it
            rel_all = _relevance(E, q)
            ok = rel_all is not None and np.isfinite(rel_all).all()
            lam = auto_lam(rel_all) if ok else "auto"  # bad vectors: mmr_select says what is wrong
        if args.strategy == "mmr":
            idx, gains = mmr_select(
                E, q, costs, args.budget, lam=lam, method=args.method, cost_aware=args.cost_aware,
                cost_exponent=args.cost_exponent, return_gains=True,
            )  # fmt: skip
        else:
            idx, gains = _by_strategy(args, E, q, costs, lam)
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    rel = _relevance(np.asarray(E)[idx], q) if len(idx) else np.empty(0)
    pos = arrange(idx, rel, args.order)
    tokens = np.asarray(costs, dtype=np.int64)
    lam_used = float(lam) if lam != "auto" else None
    _write_picks(
        records, idx[pos], gains[pos], pos, rel[pos], tokens[idx[pos]], args, args.tokens_field, lam=lam_used
    )
    if not args.quiet:
        sys.stderr.write(
            f"scwo select: kept {len(idx)} of {len(records)} chunks, {int(tokens[idx].sum()) if len(idx) else 0} "
            f"of {args.budget} tokens ({args.tokens_field!r}); {_lam_note(args.lam, lam_used)}\n"
        )
    return 0


def _relevance(E, q) -> np.ndarray | None:
    """Each row's cosine to ``q`` exactly as ``mmr_select`` computes it, or None for unusable input.

    :func:`scwo_np._dot.query_cosines` (the one recipe, in the embeddings' precision, then
    ``dot / (norm * query norm)`` in float64, as the selection's first pass), so
    ``lam="auto"`` chosen from these is the choice ``mmr_select`` makes, and the relevance the CLI
    reports is the one the selection saw.  Shapes or types the selection would reject give None
    (``mmr_select`` then says what is wrong).
    """
    E = np.asarray(E)
    if E.ndim != 2 or E.dtype.kind not in "fiu" or np.ndim(q) != 1 or np.shape(q)[0] != E.shape[1]:
        return None
    E = np.ascontiguousarray(E, dtype=E.dtype if E.dtype in (np.float32, np.float64) else np.float64)
    return _dot.query_cosines(E, q)[0]


def _lam_note(given, used: float | None) -> str:
    """``lam 0.7``, or ``lam auto: 0.9`` (what ``--lam auto`` chose)."""
    if used is None:  # no selection made (no chunks): the lam that was asked for
        return "lam auto" if given == "auto" else f"lam {given:g}"
    return f"lam auto: {used:g}" if given == "auto" else f"lam {used:g}"


def _write_picks(records, idx, gains, ranks, rel, tokens, args, counter: str, sel=None, lam=None) -> None:
    """The chosen records, in order; with ``--annotate`` each gets a ``_scwo`` field.

    ``_scwo`` names the record by its input ``line`` (1-based; a .npz's chunks by their row,
    ``index``, 0-based) and gives the ``lam`` the selection used (the one ``--lam auto`` chose).

    With sentences (``sel.granularity == "sentence"``) a record's text field holds its kept
    sentences and the record gets ``_scwo_spans``: the character spans of the original text kept.
    """
    by_sentence = sel is not None and sel.granularity == "sentence"
    lines = getattr(records, "lines", None)

    def out():
        for k, i in enumerate(idx.tolist()):
            rec = records[i]
            if by_sentence:
                rec = {**rec, args.text_field: sel.texts[k], args.tokens_field: int(tokens[k]),
                       "_scwo_spans": [list(x) for x in sel.spans[k]]}  # fmt: skip
            if args.annotate:
                where = {"line": lines[i]} if lines is not None else {"index": i}
                rec = {**rec, "_scwo": {
                    "rank": int(ranks[k]), **where, "gain": round(float(gains[k]), 6),
                    "relevance": round(float(rel[k]), 6), "tokens": int(tokens[k]), "token_counter": counter,
                    **({} if lam is None else {"lam": lam}),
                }}  # fmt: skip
            yield rec

    _write_jsonl(out(), args.output)


def _text_embedder(args, texts, has_emb):
    from ..embed import LSAEmbedder, MiniLMEmbedder

    if has_emb:
        if args.embedder != "minilm":
            raise SystemExit(
                f"scwo: the chunks carry embeddings ({args.embedding_field!r}) and --query is text: say which "
                "model made them with --embedder minilm (all-MiniLM-L6-v2), or drop the field to embed the "
                "texts here (lsa fits its own space, which cannot be compared with the file's vectors)"
            )
        return MiniLMEmbedder()
    if args.embedder == "minilm":
        return MiniLMEmbedder()
    try:
        return LSAEmbedder(texts + [args.query])
    except ValueError as exc:
        raise SystemExit(f"scwo: cannot fit the lsa embedder on these texts: {exc}") from None


def _cmd_select_text(args: argparse.Namespace) -> int:
    """``scwo select FILE --query TEXT``: embed (cached), count, select, write the chosen records."""
    from ..embed import EmbeddingCache, user_embedding_cache
    from ..select import select_texts

    if args.cost_aware:
        raise SystemExit("scwo: --cost-aware goes with --query-embedding/--query-index for now")
    if args.strategy != "mmr" and args.granularity == "sentence":
        raise SystemExit("scwo: --strategy goes with --granularity chunk (sentences are selected with mmr)")
    if args.elision is not None and args.granularity != "sentence":
        raise SystemExit("scwo: --elision goes with --granularity sentence")
    if not args.query.strip():
        raise SystemExit("scwo: --query is empty; give the question as text")
    path = args.file
    records = _read_jsonl(path)
    has_emb = bool(records) and all(args.embedding_field in r for r in records)
    need_text = not has_emb or args.tokens is not None or not all(args.tokens_field in r for r in records)
    args.text_field = _text_field(records, args.text_field, "select", quiet=args.quiet)
    if need_text:
        texts = _texts(records, args.text_field)
    else:  # embeddings and token counts given: a text is only shown, never needed
        texts = [
            t if isinstance(t := r.get(args.text_field), str) and t.strip() else f"line {ln}"
            for ln, r in zip(records.lines, records, strict=True)
        ]
    # Counted by a counter, the texts are counted by select_texts, which counts the joined context
    # again, as a user's call does (given counts here made the CLI fill less: 385 of 400 tokens where
    # select_texts filled 395); the file's own counts are the user's, summed with the separators.
    counter, costs = None, None
    if args.tokens is not None or not all(args.tokens_field in r for r in records):
        counter = _token_counter(args.tokens or "estimate")
        counter_name = counter.name
    else:
        costs, counter_name = _token_counts(records, args.tokens_field), f"field {args.tokens_field!r}"
    E = _embeddings(records, args.embedding_field) if has_emb else None
    # The library's embedding cache: --cache FILE caches any embedder there; by default minilm's
    # vectors go to the user's cache (user_embedding_cache), lsa's nowhere; --no-cache: none.
    cache = None
    if records and args.cache and not args.no_cache:
        cache = EmbeddingCache(args.cache)
    try:
        emb = _text_embedder(args, texts, has_emb) if records else None
        store = cache
        if (
            store is None
            and emb is not None
            and not args.no_cache
            and getattr(emb, "cache_by_default", False)
        ):
            store = user_embedding_cache()
        if emb is not None and store is not None and not args.quiet and sys.stderr.isatty():
            store.embed(emb, texts if E is None else [], progress=True)  # fill the cache with a bar
        sentences = args.granularity == "sentence"
        sel = select_texts(
            texts, args.query, args.budget, embedder=emb, costs=None if sentences else costs, embeddings=E,
            lam=args.lam, method=args.method, order=args.order, granularity=args.granularity,
            cache=False if args.no_cache else cache,
            token_counter=(counter or args.tokens or "estimate") if sentences or costs is None else None,
            **({"elision": args.elision} if sentences else {"strategy": args.strategy}),
        )  # fmt: skip
    except ImportError as exc:
        raise SystemExit(f"scwo: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    finally:
        if cache is not None:
            cache.close()
    if sentences:
        counter_name = sel.token_counter
    lam_used = float(sel.lam) if records and np.isfinite(sel.lam) else None
    _write_picks(
        records,
        sel.indices,
        sel.gains,
        sel.ranks,
        sel.relevance,
        sel.tokens,
        args,
        counter_name,
        sel,
        lam_used,
    )
    if not args.quiet and not records:
        sys.stderr.write(f"scwo select: {_where(path)} holds no chunks; nothing to select\n")
    elif not args.quiet:
        what = "chunks (sentences of them)" if sentences else "chunks"
        sys.stderr.write(
            f"scwo select: kept {len(sel)} of {len(records)} {what}, {sel.context_tokens} of {args.budget} tokens "
            f"joined by blank lines "
            f"({counter_name}); embedder {emb.name if emb is not None else '-'}; order {args.order}; "
            f"{_lam_note(args.lam, lam_used)}\n"
        )
    return 0


def _demo_query(arg: str, n: int):
    """``--query``: a bundled query's number, or any text."""
    from ..datasets import load_sample, sample_query

    s = load_sample()
    if arg.strip().lstrip("-").isdigit():
        k = int(arg)
        if not 0 <= k < n:
            raise SystemExit(f"scwo: --query must be a bundled query's number in [0, {n}) or a text; got {k}")
        return s.query_embeddings[k], repr(s.queries[k]), f"bundled query #{k}, from {s.query_sources[k]}"
    try:
        v, how = sample_query(arg)
    except ValueError as exc:
        raise SystemExit(f"scwo: --query: {exc}") from None
    return v, repr(arg), how


def _cmd_demo(args: argparse.Namespace) -> int:
    from ..datasets import load_sample

    s = load_sample()
    E, costs, texts = s.embeddings, s.costs, s.texts
    q, shown, how = _demo_query(args.query, len(s.queries))
    rel = _relevance(E, q)
    lam, lam_shown = args.lam, f"{args.lam}"
    if lam == "auto":  # the same choice mmr_select makes (from the same relevance), to show it
        lam = auto_lam(rel)
        lam_shown = f"auto: {lam:g}"
    try:
        t0 = time.perf_counter()
        idx, gains = mmr_select(E, q, costs, args.budget, lam=args.lam, return_gains=True)
        t1 = time.perf_counter()
        mmr_select(E, q, costs, args.budget, lam=args.lam)
        t2 = time.perf_counter()
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"scwo: {exc}") from None
    _out(f"Query: {shown}  ({how})")
    _out(
        f"Corpus: {len(E)} chunks of the Python docs, {int(costs.sum())} tokens; budget {args.budget} tokens"
    )
    used = int(costs[idx].sum())
    _out(f"\nSelected {len(idx)} chunks, {used} tokens (lam={lam_shown}):")
    for i in idx:
        i = int(i)
        _out(f"  [{i:4d}] {s.sources[i]:<28} {costs[i]:4d} tok  {texts[i][:70]}...")
    for line in _why(E, rel, costs, args.budget, lam, idx):
        _out(line)
    tr = truncate(costs, args.budget)
    tk = topk_relevance(E, q, costs, args.budget)
    _out("\nCoverage (0.6 relevance + 0.4 diversity):")
    _out(f"  MMR        {coverage(E[idx], q):.4f}" if len(idx) else "  MMR        (nothing fits)")
    _out(f"  top-k      {coverage(E[tk], q):.4f}" if len(tk) else "  top-k      (nothing fits)")
    _out(f"  truncation {coverage(E[tr], q):.4f}" if len(tr) else "  truncation (nothing fits)")
    _out(f"\nTime: first call {1e3 * (t1 - t0):.1f} ms (includes JIT load), then {1e3 * (t2 - t1):.3f} ms")
    return 0


def _why(E, rel, costs, budget, lam, idx) -> list[str]:
    """Two lines: what decided the picks (relevance ``rel``, redundancy) and where the budget went."""
    if len(idx) == 0:
        return [f"\nWhy: no chunk fits the budget of {budget} tokens (the smallest has {int(costs.min())})."]
    last = float(rel[idx].min())
    picked = np.zeros(len(E), dtype=bool)
    picked[idx] = True
    passed = np.flatnonzero(~picked & (rel > last))  # more relevant than a pick, not taken
    # redundancy: each passed chunk's cosine to its closest pick, through _dot as the selection's
    red = np.max([_relevance(E[passed], E[j]) for j in idx], axis=0) if len(passed) else np.empty(0)
    left = budget - int(costs[idx].sum())
    fits = np.flatnonzero(~picked & (costs <= left))
    before_last = left + int(costs[idx[-1]])
    too_long = int((costs[passed] > before_last).sum())
    rank = np.argsort(-rel, kind="stable")[: len(idx)]
    l1 = (
        f"\nWhy: each pick had the best {lam:g}·relevance − {1 - lam:g}·redundancy among the chunks that "
        f"still fit; the picks' relevance (cosine to the query) is {float(rel[idx].mean()):.2f} on average "
        f"(the {len(idx)} most relevant chunks: {float(rel[rank].mean()):.2f})."
    )
    close = red[costs[passed] <= before_last]
    l2 = (
        f"     Of the {len(passed)} chunks more relevant than its least relevant pick, {too_long} were longer"
    )
    l2 += f" than the {before_last} tokens left before that pick"
    if len(close):
        l2 += f", {len(close)} lost on redundancy (median cosine to the closest pick {float(np.median(close)):.2f})"
    l2 += f"; {budget - left} of {budget} tokens used, " + (
        f"and none of the other chunks fits the {left} left." if len(fits) == 0 else f"{left} left."
    )
    return [l1, l2]


def _cmd_sample(args: argparse.Namespace) -> int:
    from ..datasets import load_sample

    if args.retrieved_sets:
        return _write_sets(args)
    s = load_sample()
    score = None
    if args.query is not None:
        if not 0 <= args.query < len(s.queries):
            raise SystemExit(f"scwo: --query must be in [0, {len(s.queries)}); got {args.query}")
        score = _relevance(s.embeddings, s.query_embeddings[args.query])
    n = len(s.texts) if args.n is None else max(0, min(args.n, len(s.texts)))
    records = (
        {
            "id": i,
            "source": s.sources[i],
            "text": s.texts[i],
            "tokens": int(s.costs[i]),
            **({} if score is None else {"score": round(float(score[i]), 6)}),
            "embedding": [round(float(x), 7) for x in s.embeddings[i]],
        }
        for i in range(n)
    )
    _write_jsonl(records, args.output)
    return 0


def _write_sets(args: argparse.Namespace) -> int:
    """``scwo sample --retrieved-sets``: the bundled queries' top-k chunks as a Parquet candidates file."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SystemExit("scwo: Parquet output needs pyarrow: pip install 'scwo_np[batch]'") from None
    from ..rerank import sample_sets

    if args.output == "-":
        raise SystemExit("scwo: --retrieved-sets writes Parquet: give a file with -o")
    cands, _ = sample_sets(args.top_k, query_embedding_column=True)
    with _output_file(args.output) as name:  # written under a temporary name, renamed when complete
        pq.write_table(cands, name)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``scwo select``, ``scwo demo``, ``scwo sample`` and ``scwo bench`` to the ``scwo`` parser."""
    s = sub.add_parser("select", help="budgeted MMR selection over JSONL or .npz chunks")
    s.add_argument(
        "file",
        nargs="?",
        help="JSONL with one chunk per line (- or none, piped: stdin), or .npz with embeddings, costs",
    )
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--query", help="the question as text (embedded with --embedder)")
    g.add_argument("--query-embedding", help="query embedding as a JSON list")
    g.add_argument("--query-index", type=int, help="use chunk N's embedding as the query")
    s.add_argument("--budget", type=int, required=True, help="token budget (in the --token-counter's tokens)")
    s.add_argument(
        "--lam",
        type=_lam,
        default=0.7,
        help="relevance/diversity trade-off in [0, 1] (0.7), or auto: chosen per question (0.7 or 0.9)",
    )
    s.add_argument("--method", choices=list(MMR_METHODS), default="auto", help="mmr's method (auto)")
    s.add_argument("--strategy", choices=list(STRATEGIES), default="mmr", help="selection strategy (mmr)")
    s.add_argument(
        "--cost-aware", action="store_true", help="prefer shorter chunks (never fills less than plain MMR)"
    )
    s.add_argument(
        "--cost-exponent",
        type=float,
        default=0.25,
        help="cost weight in (0, 1] for --cost-aware (0.25; 1 = per token)",
    )
    s.add_argument("--embedding-field", default="embedding")
    s.add_argument("--tokens-field", default="tokens")
    s.add_argument(
        "--text-field",
        help="with --query: the chunks' text (default text; records with only content are read from content)",
    )
    s.add_argument(
        "--embedder",
        choices=list(EMBEDDERS),
        help="with --query: lsa (TF-IDF + SVD over the file, the default for chunks without embeddings) "
        "or minilm (all-MiniLM-L6-v2, the embed extra; needed when the chunks carry MiniLM embeddings)",
    )
    _renamed_flag(s, "--tokens", "--token-counter", dest="tokens", choices=list(COUNTERS))
    s.add_argument(
        "--token-counter",
        dest="tokens",
        choices=list(COUNTERS),
        help="with --query: count tokens with this counter (default: the --tokens-field when every "
        "chunk has it, else estimate)",
    )
    s.add_argument("--order", choices=list(ORDERS), default="pick", help="layout of the output (pick)")
    s.add_argument(
        "--granularity",
        choices=list(GRANULARITIES),
        default="chunk",
        help="with --query: select whole chunks, or sentences of them under the one budget (each kept "
        "chunk's text then holds its kept sentences; _scwo_spans says where they are)",
    )
    s.add_argument(
        "--elision",
        metavar="MARK",
        help="with --granularity sentence: put MARK between sentences that were not adjacent",
    )
    s.add_argument(
        "--cache", help="with --query: the embedding cache file (default: in the user cache folder)"
    )
    s.add_argument("--no-cache", action="store_true", help="with --query: embed without a cache")
    s.add_argument("--annotate", action="store_true", help="add a _scwo field: rank, gain, relevance, tokens")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary on stderr")
    s.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    s.set_defaults(func=_cmd_select)

    d = sub.add_parser("demo", help="select from the bundled Python-docs sample")
    d.add_argument(
        "--query",
        default="0",
        help="a bundled query's number (0-31) or a question as text (default 0); "
        "text is embedded with all-MiniLM-L6-v2 when the `embed` extra is installed, "
        "otherwise the nearest bundled query stands in",
    )
    d.add_argument("--budget", type=int, default=1000)
    d.add_argument("--lam", type=_lam, default=0.7, help="trade-off in [0, 1] (0.7), or auto")
    d.set_defaults(func=_cmd_demo)

    sm = sub.add_parser(
        "sample", help="write the bundled Python-docs chunks as JSONL (id, source, text, tokens, embedding)"
    )
    sm.add_argument("--query", type=int, help="add `score`: each chunk's cosine to bundled query N (0-31)")
    sm.add_argument("-n", type=_count, help="only the first N chunks")
    sm.add_argument("-o", "--output", default="-", help="output JSONL (default stdout)")
    sm.add_argument(
        "--retrieved-sets", action="store_true",
        help="write Parquet instead: each bundled query's --top-k chunks, one row per candidate (for scwo rerank)",
    )  # fmt: skip
    sm.add_argument("--top-k", type=int, default=50, help="candidates per query with --retrieved-sets (50)")
    sm.set_defaults(func=_cmd_sample)
