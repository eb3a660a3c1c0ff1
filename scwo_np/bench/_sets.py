"""Researchers' own question sets: a JSONL file read, checked and made into a :class:`QuestionSet`.

One question per line::

    {"question": "How do I ...?", "texts": ["what the retriever returned", ...], "gold": [0, 3],
     "answers": ["an answer paragraph the retriever missed"], "split": "held_out", "id": "q17"}

``texts`` are the question's candidates, nearest first; ``gold`` the indices into ``texts`` of
the answer texts; ``answers`` (optional) answer paragraphs that are not among the candidates, so
the retrieval ceiling is honest; ``split`` (optional) ``"tune"`` or ``"held_out"`` (the default);
``id`` (optional) a str or int, unique in the file.  Identical texts on different lines become
one paragraph, embedded once.  :func:`~scwo_np.bench.quality_at_budget` takes the file's path
(or the :class:`QuestionSet` read from it) wherever it takes a bundled set's name.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..datasets import QUESTION_SETS, QuestionSet, load_questions
from ..validation import check_int, check_method, check_text, check_texts

__all__ = ["read_questions"]

_FIELDS = ("question", "texts", "gold", "answers", "split", "id")
_SPLITS = ("held_out", "tune")  # SPLITS of _at_budget (a registry of these two names)
_EXAMPLE = '{"question": "...", "texts": ["...", "..."], "gold": [0]}'


def _field(where: str, field: str, exc: Exception) -> ValueError:
    """The validation module's message, as a ValueError naming the file, the line and the field."""
    return ValueError(f"{where}: field {field!r}: {str(exc).rstrip('.')}")


def _json_error(exc: json.JSONDecodeError) -> str:
    """What is wrong and where, then what to do ("Invalid control character at" names no place by itself)."""
    what = f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
    if exc.doc.startswith("\ufeff"):  # (json's advice, to decode with utf-8-sig, is for line 1 only)
        return (
            "(a byte-order mark, U+FEFF, opens the line); delete it: only the file's first line may have one"
        )
    if "control character" in what:
        return f"({what.lower()}): a string holds a raw tab or line break; write it escaped, as \\t or \\n"
    return f"({what}); write one JSON object per line"


def _near_misses(obj: dict, where: str, warned: set[str]) -> None:
    """Warn, once per file and field, of a field that is not read but is spelled like one that is
    ("answer", "splits"): other fields (a source, scores, an answer kept for reading) are the user's."""
    for key in obj:
        if key in _FIELDS or key in warned:
            continue
        near = difflib.get_close_matches(str(key), _FIELDS, n=1, cutoff=0.75)
        if near and near[0] not in obj:
            warned.add(key)
            warnings.warn(
                f"{where}: field {key!r} is not read (the fields are {', '.join(_FIELDS)}); if you meant "
                f"{near[0]!r}, rename it; other fields are left as they are",
                UserWarning,
                stacklevel=4,
            )


def _record(obj: object, where: str) -> tuple[str, list[str], list[int], list[str], str, Any]:
    """One line's question, texts, gold, answers, split and id, checked; errors say how to fix them."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object like {_EXAMPLE}, got {type(obj).__name__}")
    for key in ("question", "texts", "gold"):
        if key not in obj:
            what = {
                "question": "the question as text",
                "texts": "the question's candidate texts (what the retriever returned), nearest first",
                "gold": "the indices into texts of the answer texts ([] when only answers hold them)",
            }[key]
            raise ValueError(f"{where}: missing field {key!r}; give {what}, e.g. {_EXAMPLE}")
    try:
        question = check_text(obj["question"], name="question")
    except TypeError as exc:
        raise _field(where, "question", exc) from None
    if not question.strip():
        raise ValueError(f"{where}: field 'question' is empty; give the question as text")
    texts = obj["texts"]
    if isinstance(texts, list) and not texts:
        raise ValueError(f"{where}: field 'texts' is empty; give at least one candidate text")
    try:
        texts = check_texts(texts, name="texts", nonempty=True)
    except (TypeError, ValueError) as exc:
        raise _field(where, "texts", exc) from None
    gold = obj["gold"]
    if not isinstance(gold, list):
        raise ValueError(
            f"{where}: field 'gold' must be a list of indices into texts, e.g. [0]; got {type(gold).__name__}"
        )
    for k, g in enumerate(gold):
        try:
            check_int(g, name=f"gold[{k}]", low=0, high=len(texts) - 1)
        except TypeError as exc:
            raise _field(where, "gold", f"{str(exc).rstrip('.')} (an index into texts)") from None
        except ValueError:
            raise ValueError(
                f"{where}: field 'gold': gold[{k}] is {g}, out of range: gold holds indices into texts, "
                f"which has {len(texts)} entr{'y' if len(texts) == 1 else 'ies'}, so 0 to {len(texts) - 1}"
            ) from None
        if g in gold[:k]:
            raise ValueError(f"{where}: field 'gold' lists {g} twice; list each answer text once")
    answers = obj.get("answers", [])
    try:
        answers = check_texts(answers, name="answers", nonempty=True)
    except (TypeError, ValueError) as exc:
        raise _field(where, "answers", exc) from None
    if not gold and not answers:
        raise ValueError(
            f"{where}: field 'gold' is empty and there are no 'answers': a question needs its answer; list "
            "the indices of the answer texts in gold, or give the answer paragraphs the retriever missed "
            "in answers"
        )
    split = obj.get("split", "held_out")
    if split not in _SPLITS:
        raise ValueError(
            f"{where}: field 'split' must be 'tune' or 'held_out'; got {split!r} (leave it out for held_out)"
        )
    qid = obj.get("id")
    if qid is not None and (isinstance(qid, bool) or not isinstance(qid, str | int)):
        raise ValueError(f"{where}: field 'id' must be a str or an int; got {type(qid).__name__}")
    return question, texts, gold, answers, split, qid


class _Twice(Exception):
    """A key given twice in one JSON object (``json`` keeps the last one silently)."""


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Twice(k)
        out[k] = v
    return out


def read_questions(path: str | os.PathLike, *, name: str | None = None) -> QuestionSet:
    """Read your own question set: one JSON object per line, checked, as a :class:`~scwo_np.datasets.QuestionSet`.

    Each line holds ``question`` (str), ``texts`` (its candidate texts, e.g. what your
    retriever returned, nearest first), ``gold`` (the indices into ``texts`` of the answer
    texts), and optionally ``answers`` (answer paragraphs the retriever missed: they count as
    parts of the answer but are not candidates), ``split`` (``"tune"`` or ``"held_out"``, the
    default) and ``id`` (a str or int, unique in the file).  Blank lines are skipped; other
    fields are ignored (one spelled like a field that is read, ``answer``, with a warning, once per
    file).  Identical texts on different lines become one paragraph.

    Parameters
    ----------
    path : str or path-like
        The JSONL file (UTF-8).
    name : str, optional
        The set's name in the rows and tables (default: the file's name without ``.jsonl``).

    Returns
    -------
    QuestionSet
        ``kind`` ``"user"``, ``source`` the path; ``paragraphs`` every distinct text and answer,
        ``candidates`` each question's texts as indices into them, ``gold`` its answer's
        paragraphs (the gold texts, then the answers).

    Raises
    ------
    ValueError
        A line that is not JSON, not an object, lacks a field or holds a wrong one (an empty
        text, a gold index out of range or listed twice, an unknown split, an id used before),
        or a file with no questions: the message names the file, the line and the field.
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "mine.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"question": "Why is the sky blue?", "texts": ["Air scatters blue light most.", '
    ...                 '"The sea is wide."], "gold": [0]}\\n')
    ...     _ = f.write('{"question": "Why is the sea salty?", "texts": ["The sea is wide."], "gold": [], '
    ...                 '"answers": ["Rivers carry salts into the sea."], "split": "tune"}\\n')
    >>> qs = read_questions(path)
    >>> qs.name, qs.kind, len(qs.paragraphs), qs.candidates, qs.gold, qs.split
    ('mine', 'user', 3, [[0, 1], [1]], [[0], [2]], ['held_out', 'tune'])
    >>> with open(path, "a") as f:
    ...     _ = f.write('{"question": "Why?", "texts": ["Because."], "gold": [1]}\\n')
    >>> read_questions(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../mine.jsonl:3: field 'gold': gold[0] is 1, out of range: gold holds indices into texts, ...
    """
    if isinstance(path, bool) or not isinstance(path, str | os.PathLike):
        raise TypeError(
            f"path must be the path of a JSONL file (a str or path-like); got {type(path).__name__}"
        )
    if not os.fspath(path):
        raise ValueError("path is empty; give the path of a JSONL file")
    shown = os.fspath(path)
    if name is not None:
        check_text(name, name="name")
    index: dict[str, int] = {}  # text -> paragraph
    paragraphs: list[str] = []
    questions, candidates, gold, split = [], [], [], []
    ids: dict[Any, int] = {}
    warned: set[str] = set()

    def para(text: str) -> int:
        if text not in index:
            index[text] = len(paragraphs)
            paragraphs.append(text)
        return index[text]

    lineno = 0
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            where = f"{shown}:{lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{where}: not valid UTF-8 (byte {exc.start}: {exc.reason}); save the file as UTF-8"
                ) from None
            if lineno == 1:  # a byte-order mark, as some editors write UTF-8
                line = line.removeprefix("\ufeff")
            if not line.strip():
                continue
            try:
                obj = json.loads(line.rstrip("\r\n"), object_pairs_hook=_once)
            except _Twice as exc:
                raise ValueError(
                    f"{where}: field {exc.args[0]!r} is given twice on the line; keep the one you mean"
                ) from None
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not valid JSON {_json_error(exc)}") from None
            except RecursionError:
                raise ValueError(
                    f"{where}: JSON nested too deeply to parse; write one flat object per line"
                ) from None
            q, texts, g, answers, sp, qid = _record(obj, where)
            _near_misses(obj, where, warned)
            if qid is not None:
                if qid in ids:
                    raise ValueError(
                        f"{where}: field 'id': {qid!r} is also the id on line {ids[qid]}; give each question its own id"
                    )
                ids[qid] = lineno
            both = set(texts).intersection(answers)
            if both:  # an answer among the candidates would be gold without saying so
                a = next(k for k, t in enumerate(answers) if t in both)
                raise ValueError(
                    f"{where}: field 'answers': answers[{a}] is also texts[{texts.index(answers[a])}]; "
                    "answers are the answer paragraphs the retriever missed: list an answer among "
                    "the texts in 'gold' by its index"
                )
            cand = [para(t) for t in texts]
            questions.append(q)
            candidates.append(cand)
            gold.append(list(dict.fromkeys([cand[k] for k in g] + [para(a) for a in answers])))
            split.append(sp)
    if not questions:
        what = "holds only blank lines" if lineno else "is empty"
        raise ValueError(
            f"{shown}: no questions (the file {what}); write one JSON object per line, e.g. {_EXAMPLE}"
        )
    return QuestionSet(
        name=Path(shown).name.removesuffix(".jsonl") if name is None else name,
        kind="user",
        source=shown,
        licence="unknown (your file)",
        retriever="given in the file",
        paragraphs=paragraphs,
        questions=questions,
        candidates=candidates,
        gold=gold,
        split=split,
    )


def _check_set(qs: QuestionSet, where: str) -> QuestionSet:
    """A QuestionSet made by hand: its lists agree in length and its indices point at paragraphs."""
    n, p = len(qs.questions), len(qs.paragraphs)
    if not n:
        raise ValueError(f"{where} has no questions")
    for field in ("candidates", "gold", "split"):
        if len(getattr(qs, field)) != n:
            raise ValueError(
                f"{where}: {field} has {len(getattr(qs, field))} entries for {n} questions; give one per question"
            )
    for i in range(n):
        for field in ("candidates", "gold"):
            idx = getattr(qs, field)[i]
            if not idx:
                raise ValueError(f"{where}: {field}[{i}] is empty; each question needs {field}")
            for k, j in enumerate(idx):
                check_int(j, name=f"{where}: {field}[{i}][{k}]", low=0, high=p - 1)
        check_method(qs.split[i], _SPLITS, name=f"{where}: split[{i}]")
    return qs


def _as_sets(sets: object) -> list[QuestionSet]:
    """``sets=`` of quality_at_budget: bundled names, JSONL paths and QuestionSets, as QuestionSets.

    Names stay unique: your set whose name is taken is named by its path as given.
    """
    if isinstance(sets, str | os.PathLike | QuestionSet):
        sets = [sets]
    if not isinstance(sets, Iterable):
        raise TypeError(f"sets must be names, paths or QuestionSets in a list; got {type(sets).__name__}")
    out: list[QuestionSet] = []
    for k, s in enumerate(sets):
        if isinstance(s, QuestionSet):
            qs = _check_set(s, f"sets[{k}] (QuestionSet {s.name!r})")
        elif isinstance(s, str) and s in QUESTION_SETS:
            qs = load_questions(s)
        elif isinstance(s, os.PathLike) or (isinstance(s, str) and os.path.isfile(s)):
            qs = read_questions(s)
        elif not isinstance(s, str):
            raise TypeError(
                f"sets[{k}] must be a bundled set's name, the path of a JSONL file or a QuestionSet; "
                f"got {type(s).__name__}."
            )
        else:
            raise ValueError(
                f"sets must be one of {', '.join(map(repr, QUESTION_SETS))} or the path of a JSONL file; "
                f"got {s!r} (no such file)."
            )
        clash = next((o for o in out if o.name == qs.name), None)
        if clash is not None and qs.kind == "user" and qs.source != clash.source:
            qs = dataclasses.replace(qs, name=qs.source)  # mine.jsonl beside a set named mine: by its path
        if any(o.name == qs.name for o in out):
            raise ValueError(f"sets: {qs.name!r} is given twice; give each set once")
        out.append(qs)
    if not out:
        raise ValueError(f"sets is empty; give bundled names ({', '.join(QUESTION_SETS)}) or JSONL files")
    return out


def _ceiling(qs: QuestionSet, split: str | None) -> float:
    """The retrieval ceiling: the share of the questions (of ``split``; None: all) with a gold among the candidates."""
    keep = [i for i, s in enumerate(qs.split) if split in (None, s)]
    found = sum(bool(set(qs.gold[i]) & set(qs.candidates[i])) for i in keep)
    return found / len(keep) if keep else 0.0
