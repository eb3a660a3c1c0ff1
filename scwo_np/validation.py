"""Input validation: the one place where user input becomes kernel input.

Every public function converts and checks its arguments here, then hands
contiguous arrays of fixed dtype to private kernels that never check anything.
Each error names the argument and says how to fix it.

Finiteness and zero rows of an embedding matrix are checked from the row norms
that the first similarity pass computes anyway (:func:`check_row_norms`), so a
million-row matrix is not scanned a second time and no ``(n, d)`` temporary is
made: a NaN or inf in a row makes its norm non-finite.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import math
import numbers
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

#: Row and query norms must lie in ``NORM_RANGE[dtype]`` so that squared
#: norms and dot products, computed in the embeddings' precision, neither
#: underflow to 0 nor overflow to inf (see ``scwo_np._dot``).
NORM_RANGE = {"float32": (1e-15, 1e15), "float64": (1e-150, 1e150)}

#: The largest token count one chunk may have.  No tokenizer makes a chunk
#: this long, and with it every running sum of costs stays far inside int64
#: for any array that fits in memory (fewer than 2**31 chunks x 2**31 tokens).
MAX_COST = 2**31 - 1

#: Budgets above this are treated as this ("everything fits"): it exceeds
#: the total cost of any valid input, and ``budget - cost`` stays an int64.
MAX_BUDGET = 2**62

__all__ = [
    "MAX_COST",
    "MAX_BUDGET",
    "check_embeddings",
    "check_query",
    "check_queries",
    "check_costs",
    "check_budget",
    "check_lam",
    "check_nonnegative_float",
    "check_positive_float",
    "check_int",
    "check_text",
    "as_array",
    "check_row_norms",
    "check_method",
    "check_ndim",
    "check_unit_interval",
    "check_texts",
    "check_scores",
    "RenamedWarning",
    "renamed_keywords",
    "renamed_attributes",
    "renamed_message",
    "renamed_property",
    "DEPRECATED_SINCE",
    "REMOVAL_IN",
]

#: The version in which the names of issue 41 were renamed, and the one that removes the old names
#: (they keep working, with a ``DeprecationWarning``, for one minor version).
DEPRECATED_SINCE = "0.2"
REMOVAL_IN = "0.3"

F = TypeVar("F", bound=Callable[..., Any])


class RenamedWarning(DeprecationWarning):
    """An old name was used: it works until :data:`REMOVAL_IN`; the message gives the new one.

    A ``DeprecationWarning``, so Python shows it where the old name was written.  The project's
    own tests turn it into an error (``filterwarnings`` in ``pyproject.toml``): nothing in the
    project itself may use an old name.

    Examples
    --------
    >>> import warnings
    >>> from scwo_np.tokens import as_token_counter
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = as_token_counter(counter="estimate")
    >>> w[0].category.__name__, issubclass(w[0].category, DeprecationWarning)
    ('RenamedWarning', True)
    """


def _as_float_array(x: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and other non-arrays
        raise TypeError(f"{name} must be an array of numbers; could not convert it: {exc}") from None
    if arr.dtype == object:
        raise TypeError(
            f"{name} must be a rectangular array of numbers; got an object array "
            "(ragged lists or mixed types). Pad or filter the rows so they all have the same length."
        )
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must hold numbers, not booleans; convert with .astype(float) if intended.")
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must be real; got complex values.")
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold numbers; got dtype {arr.dtype}.")
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    return np.ascontiguousarray(arr)


def check_embeddings(embeddings: ArrayLike, *, name: str = "embeddings") -> NDArray[np.floating]:
    """Return ``embeddings`` as a C-contiguous ``(n, d)`` float32/float64 array.

    float32 and float64 are kept as they are (no copy if already contiguous);
    integer input becomes float64.  Finiteness and zero rows are checked later
    by :func:`check_row_norms` from the norms the kernels compute.

    Parameters
    ----------
    embeddings : array_like
        One row per chunk, shape ``(n, d)``; integers and float16 become float64.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    numpy.ndarray
        The same values, C-contiguous, float32 or float64 (float32 stays float32).

    Examples
    --------
    >>> check_embeddings([[1, 0], [0, 1]]).dtype
    dtype('float64')
    >>> check_embeddings([1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: embeddings must be 2-D (n_chunks, dim); got shape (2,). For a single chunk use embeddings.reshape(1, -1).
    """
    arr = _as_float_array(embeddings, name)
    if arr.ndim != 2:
        hint = " For a single chunk use embeddings.reshape(1, -1)." if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_chunks, dim); got shape {arr.shape}.{hint}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has dimension 0; every chunk needs at least one embedding value.")
    return arr


def check_query(query: ArrayLike, dim: int, *, dtype: DTypeLike = np.float64, name: str = "query") -> NDArray:
    """Return ``query`` as a finite, non-zero vector of length ``dim`` and type ``dtype``.

    ``dtype`` is the embeddings' type (float32 or float64): similarities are
    computed in it, so the query is rounded to it.

    Parameters
    ----------
    query : array_like
        One vector of length ``dim``.
    dim : int
        The embeddings' dimension.
    dtype : data-type
        The type to return (the embeddings' type).
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    numpy.ndarray
        The query as a C-contiguous vector of ``dtype``.

    Examples
    --------
    >>> check_query([0.0, 0.0], 2)
    Traceback (most recent call last):
    ...
    ValueError: query is the zero vector; cosine similarity to it is undefined. Pass a non-zero query embedding.
    """
    q = _as_float_array(query, name).astype(np.float64, copy=False)
    if q.ndim != 1:
        raise ValueError(f"{name} must be 1-D of length {dim}; got shape {q.shape}.")
    return _check_rows(q.reshape(1, -1), dim, np.dtype(dtype), lambda j: name).reshape(-1)


def _check_rows(q: np.ndarray, dim: int, dtype: np.dtype, label) -> np.ndarray:
    """Query vectors (rows of the float64 ``q``): finite, non-zero, norm in range; ``label(j)`` names row ``j``."""
    if q.shape[1] != dim:
        raise ValueError(
            f"{label(0)} has dimension {q.shape[1]} but the embeddings have dimension {dim}; "
            "embed the query with the same model as the chunks."
        )
    lo, hi = NORM_RANGE[dtype.name]
    sq = np.einsum("ij,ij->i", q, q)  # NaN or inf anywhere makes it NaN or inf
    if np.all((sq >= lo * lo) & (sq <= hi * hi)):  # the common case: one pass, nothing to report
        return np.ascontiguousarray(q.astype(dtype, copy=False))
    scale = np.abs(q).max(axis=1)  # NaN propagates; inf stays inf
    bad = ~np.isfinite(scale)
    if bad.any():
        raise ValueError(f"{label(int(np.argmax(bad)))} contains NaN or inf; pass a finite query embedding.")
    zero = scale == 0.0
    if zero.any():
        raise ValueError(
            f"{label(int(np.argmax(zero)))} is the zero vector; cosine similarity to it is undefined. "
            "Pass a non-zero query embedding."
        )
    qn = scale * np.sqrt(np.einsum("ij,ij->i", q / scale[:, None], q / scale[:, None]))
    out = ~((qn >= lo) & (qn <= hi))
    if out.any():
        j = int(np.argmax(out))
        raise ValueError(
            f"{label(j)} has norm {qn[j]:.3g}, outside [{lo:g}, {hi:g}] where cosines are computed reliably in "
            f"{dtype.name}; rescale it (cosine similarity does not depend on scale)."
        )
    return np.ascontiguousarray(q.astype(dtype, copy=False))


def check_queries(
    queries: ArrayLike, dim: int, *, dtype: DTypeLike = np.float64, name: str = "queries"
) -> NDArray:
    """Return ``queries`` as a C-contiguous ``(m, dim)`` array of type ``dtype``, m >= 1.

    Parameters
    ----------
    queries : array_like
        One query of length ``dim``, or ``(m, dim)`` queries.
    dim : int
        The embeddings' dimension.
    dtype : data-type
        The type to return (the embeddings' type).
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    numpy.ndarray
        Shape ``(m, dim)``, C-contiguous, of ``dtype``.

    Examples
    --------
    >>> check_queries([1.0, 0.0], 2).shape
    (1, 2)
    """
    q = _as_float_array(queries, name).astype(np.float64, copy=False)
    if q.ndim == 1:
        q = q.reshape(1, -1)
    if q.ndim != 2 or q.shape[0] == 0:
        raise ValueError(f"{name} must be (n_queries, {dim}) with at least one query; got shape {q.shape}.")
    return _check_rows(q, dim, np.dtype(dtype), lambda j: f"{name}[{j}]")


def check_query_weights(weights: ArrayLike, m: int, *, name: str = "weights") -> NDArray[np.float64]:
    """``weights`` of ``m`` queries: finite, non-negative, not all zero; normalised to sum to 1.

    Examples
    --------
    >>> check_query_weights([1, 3], 2)
    array([0.25, 0.75])
    >>> check_query_weights(["a", "b"], 2)
    Traceback (most recent call last):
    ...
    TypeError: weights must be numbers, one per query; got ['a', 'b'].
    """
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers, one per query; got {weights!r}.") from None
    if w.shape != (m,):
        raise ValueError(f"{name} must have shape ({m},), one per query; got {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"{name} must be finite, non-negative and not all zero.")
    return np.ascontiguousarray(w / w.sum())


def check_token_count(value: object, *, name: str) -> int:
    """Return one chunk's token count (an int, or a float holding a whole number) as an int.

    Examples
    --------
    >>> check_token_count(4.0, name="tokens")
    4
    >>> check_token_count(3.7, name="matches[0] tokens")
    Traceback (most recent call last):
    ...
    ValueError: matches[0] tokens must be a whole token count; got 3.7. Round or count tokens exactly.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a whole token count; got {value!r}.")
    if isinstance(value, numbers.Integral):
        count = int(value)
    else:
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name} must be a whole token count; got {value!r}.")
        if v != math.floor(v):
            raise ValueError(
                f"{name} must be a whole token count; got {value!r}. Round or count tokens exactly."
            )
        count = int(v)
    if count < 0:
        raise ValueError(f"{name} must be a non-negative token count; got {value!r}.")
    if count > MAX_COST:
        raise ValueError(
            f"{name} = {value!r} tokens is more than one chunk can hold (at most {MAX_COST}); split the "
            "chunk, or leave it out."
        )
    return count


def check_costs(costs: ArrayLike, n: int, *, name: str = "costs") -> NDArray[np.int64]:
    """Return ``costs`` (token counts) as an int64 vector of length ``n``.

    Floats are accepted only when they hold whole numbers (``3.0``), since a
    token count is an integer.

    Parameters
    ----------
    costs : array_like
        One token count per chunk.
    n : int
        The number of chunks.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    numpy.ndarray
        The counts as int64, length ``n``.

    Examples
    --------
    >>> check_costs([3, 4.0], 2)
    array([3, 4])
    >>> check_costs([3, -1], 2)
    Traceback (most recent call last):
    ...
    ValueError: costs must be non-negative token counts; costs[1] = -1.
    """
    if isinstance(costs, str | bytes):
        raise TypeError(f"{name} must be a 1-D array of integer token counts; got a {type(costs).__name__}.")
    try:
        c = np.asarray(costs)
    except Exception as exc:
        raise TypeError(f"{name} must be a 1-D array of integer token counts: {exc}") from None
    if c.dtype.kind == "b" or c.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integer token counts; got dtype {c.dtype}.")
    if c.ndim != 1 or c.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},), one token count per chunk; got shape {c.shape}.")
    if c.dtype.kind == "f":
        if not np.all(np.isfinite(c)):
            raise ValueError(f"{name} contains NaN or inf; every chunk needs a token count.")
        if np.any(c != np.round(c)):
            bad = int(np.flatnonzero(c != np.round(c))[0])
            raise ValueError(
                f"{name} must be whole token counts; {name}[{bad}] = {c[bad].item()!r}. Round or count tokens exactly."
            )
    if c.size and c.min() < 0:
        bad = int(np.argmin(c))
        raise ValueError(f"{name} must be non-negative token counts; {name}[{bad}] = {c[bad].item()!r}.")
    if c.size and c.max() > MAX_COST:  # compared before any conversion, so nothing wraps
        bad = int(np.argmax(c))
        raise ValueError(
            f"{name}[{bad}] = {c[bad].item()!r} tokens is more than one chunk can hold (at most {MAX_COST}); "
            "split the chunk, or leave it out."
        )
    return np.ascontiguousarray(c.astype(np.int64))


def check_budget(budget: object, *, name: str = "budget") -> int:
    """Return ``budget`` as a non-negative Python int, at most :data:`MAX_BUDGET`.

    A budget above ``MAX_BUDGET`` (``10**30``, ``2**64 - 1``) means the same
    as ``MAX_BUDGET``: more than every valid input's total cost, so
    everything fits.

    Parameters
    ----------
    budget : int
        The token budget.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    int
        The budget, capped at ``MAX_BUDGET``.

    Examples
    --------
    >>> check_budget(4096)
    4096
    >>> check_budget(10**30) == MAX_BUDGET
    True
    >>> check_budget(-1)
    Traceback (most recent call last):
    ...
    ValueError: budget must be >= 0 tokens; got -1.
    """
    if isinstance(budget, bool) or not isinstance(budget, numbers.Real):
        raise TypeError(f"{name} must be an integer number of tokens; got {type(budget).__name__}.")
    if not isinstance(budget, numbers.Integral):
        if not np.isfinite(budget) or budget != int(budget):
            raise TypeError(f"{name} must be a whole number of tokens; got {budget!r}.")
    b = int(budget)
    if b < 0:
        raise ValueError(f"{name} must be >= 0 tokens; got {b}.")
    return min(b, MAX_BUDGET)


def check_lam(lam: object, *, name: str = "lam", auto: bool = False) -> float | str:
    """Return the MMR trade-off ``lam`` as a float in [0, 1] (or ``"auto"`` where allowed).

    Parameters
    ----------
    lam : float or "auto"
        The trade-off: 1 is pure relevance, 0 pure diversity; ``"auto"`` lets the
        selection choose it per retrieved set (:func:`scwo_np.select.auto_lam`).
    name : str
        The argument's name, used in error messages.
    auto : bool
        Whether ``"auto"`` is accepted here.

    Returns
    -------
    float or str
        ``lam`` as a Python float, or ``"auto"``.

    Examples
    --------
    >>> check_lam(0.5), check_lam("auto", auto=True)
    (0.5, 'auto')
    >>> check_lam(1.5)
    Traceback (most recent call last):
    ...
    ValueError: lam must be in [0, 1] (1 = pure relevance, 0 = pure diversity); got 1.5.
    """
    if isinstance(lam, str) and lam.strip().lower() == "auto":
        if auto:
            return "auto"
        raise ValueError(
            f"{name}='auto' chooses MMR's trade-off (mmr_select, select_texts, select_batch with "
            "strategy='mmr', ...); here pass a number in [0, 1]."
        )
    x = _real(lam, name, "a number in [0, 1]" + (" or 'auto'" if auto else ""))
    if not (0.0 <= x <= 1.0):
        raise ValueError(f"{name} must be in [0, 1] (1 = pure relevance, 0 = pure diversity); got {lam!r}.")
    return x


def check_unit_interval(value: object, *, name: str, meaning: str = "") -> float:
    """Return ``value`` as a float in [0, 1] (a threshold or a weight).

    Parameters
    ----------
    value : float
        The number to check.
    name : str
        The argument's name, used in error messages.
    meaning : str
        What the number is, said in the error message.

    Returns
    -------
    float
        ``value`` as a Python float.

    Examples
    --------
    >>> check_unit_interval(1.2, name="threshold", meaning="a similarity")
    Traceback (most recent call last):
    ...
    ValueError: threshold must be in [0, 1] (a similarity); got 1.2.
    """
    x = _real(value, name, "a number in [0, 1]")
    if not (0.0 <= x <= 1.0):  # also rejects NaN
        extra = f" ({meaning})" if meaning else ""
        raise ValueError(f"{name} must be in [0, 1]{extra}; got {value!r}.")
    return x


def check_texts(texts: object, *, name: str = "texts", nonempty: bool = False) -> list[str]:
    """Return ``texts`` as a list of str; anything else is a ``TypeError`` naming the item.

    With ``nonempty=True`` a text that is empty or only whitespace is a
    ``ValueError`` too (it has nothing to embed or select).

    Parameters
    ----------
    texts : sequence of str
        The texts (a list, a tuple, a NumPy array of str...; not one str).
    name : str
        The argument's name, used in error messages.
    nonempty : bool
        Refuse a text that is empty or only whitespace.

    Returns
    -------
    list of str
        The texts as a new list.

    Examples
    --------
    >>> check_texts(["a", 3])
    Traceback (most recent call last):
    ...
    TypeError: texts[1] is int, not str; convert it with str() or drop it.
    """
    if isinstance(texts, str | bytes | bytearray | Mapping):
        what = "one string" if isinstance(texts, str) else type(texts).__name__
        raise TypeError(f"{name} must be a sequence of strings, not {what}; wrap it in a list.")
    try:
        out = list(texts)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"{name} must be a sequence of strings; got {type(texts).__name__}.") from None
    for i, t in enumerate(out):
        if not isinstance(t, str):
            if t is None:
                raise TypeError(f"{name}[{i}] is None, not str; drop it or replace it with its text.")
            hint = (
                "decode it first" if isinstance(t, bytes | bytearray) else "convert it with str() or drop it"
            )
            raise TypeError(f"{name}[{i}] is {type(t).__name__}, not str; {hint}.")
        if nonempty and not t.strip():
            raise ValueError(f"{name}[{i}] is empty or only whitespace; drop it (it has nothing to select).")
    return out


def check_scores(scores: ArrayLike | None, n: int, *, name: str = "scores") -> NDArray[np.float64]:
    """Return ``scores`` as a finite float64 vector of length ``n`` (zeros when None).

    Parameters
    ----------
    scores : array_like or None
        One relevance score per item, or None.
    n : int
        The number of items.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    numpy.ndarray
        The scores as float64 (zeros when ``scores`` is None).

    Examples
    --------
    >>> check_scores([0.5, float("nan")], 2)
    Traceback (most recent call last):
    ...
    ValueError: scores[1] is NaN or inf; pass finite relevance scores (or None to treat all equally).
    """
    if scores is None:
        return np.zeros(n)
    s = _as_float_array(scores, name).astype(np.float64, copy=False)
    if s.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one per item; got {s.shape}.")
    bad = ~np.isfinite(s)
    if bad.any():
        raise ValueError(
            f"{name}[{int(np.flatnonzero(bad)[0])}] is NaN or inf; pass finite relevance scores "
            "(or None to treat all equally)."
        )
    return np.ascontiguousarray(s)


def _float(value: numbers.Real) -> float:
    """``float(value)``, with an int too large for a float as ``inf`` (then refused as not finite)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _real(value: object, name: str, what: str) -> float:
    """``value`` as a float (see :func:`_float`) if it is a real number and not a bool, else a
    ``TypeError``: "``name`` must be ``what``; got its type". The range is the caller's check."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {what}; got {type(value).__name__}.")
    return _float(value)


def check_finite_float(value: object, *, name: str) -> float:
    """Return ``value`` as a finite float (a time stamp, a weight that may be negative).

    Examples
    --------
    >>> check_finite_float(float("nan"), name="now")
    Traceback (most recent call last):
    ...
    ValueError: now must be a finite number; got nan.
    """
    x = _real(value, name, "a number")
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number; got {value!r}.")
    return x


def check_nonnegative_float(value: object, *, name: str) -> float:
    """Return ``value`` as a finite float >= 0.

    Parameters
    ----------
    value : float
        The number to check.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    float
        ``value`` as a Python float.

    Examples
    --------
    >>> check_nonnegative_float(0, name="timeout")
    0.0
    """
    x = _real(value, name, "a non-negative number")
    if not (np.isfinite(x) and x >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}.")
    return x


def check_positive_float(value: object, *, name: str, meaning: str = "") -> float:
    """Return ``value`` as a finite float > 0 (a time, a half-life, a z-score cutoff).

    Parameters
    ----------
    value : float
        The number to check.
    name : str
        The argument's name, used in error messages.
    meaning : str
        What the number is, said in the error message (``"seconds"``).

    Returns
    -------
    float
        ``value`` as a Python float.

    Examples
    --------
    >>> check_positive_float(0, name="half_life", meaning="seconds")
    Traceback (most recent call last):
    ...
    ValueError: half_life must be a finite number > 0 (seconds); got 0.
    """
    x = _real(value, name, "a positive number")
    if not (np.isfinite(x) and x > 0.0):
        extra = f" ({meaning})" if meaning else ""
        raise ValueError(f"{name} must be a finite number > 0{extra}; got {value!r}.")
    return x


def check_ndim(value: object, ndim: int, *, name: str, what: str = "") -> np.ndarray:
    """``np.asarray(value)`` if it is an array of numbers with ``ndim`` dimensions.

    What is not an array of numbers (None, a str, a scalar where an array is wanted, ragged
    lists) is a ``TypeError``; an array of numbers of the wrong shape is a ``ValueError``.
    The dtype is not checked further (booleans, complex): that is the caller's next check.

    Parameters
    ----------
    value : array_like
        What to check.
    ndim : int
        The number of dimensions wanted.
    name : str
        The argument's name, used in error messages.
    what : str
        What the array holds, e.g. ``"one token count per chunk"``, for the messages.

    Returns
    -------
    numpy.ndarray
        ``np.asarray(value)``.

    Examples
    --------
    >>> check_ndim([[1, 2]], 1, name="costs", what="one token count per chunk")
    Traceback (most recent call last):
    ...
    ValueError: costs must be 1-D, one token count per chunk; got shape (1, 2).
    >>> check_ndim(None, 1, name="costs")
    Traceback (most recent call last):
    ...
    TypeError: costs must be a 1-D array of numbers; got NoneType.
    """
    arr = as_array(value, name=name)
    shape = f"{ndim}-D" + (f", {what}" if what else "")
    if arr.dtype.kind not in "biufc" or (arr.ndim == 0 and ndim > 0):
        raise TypeError(f"{name} must be a {ndim}-D array of numbers; got {type(value).__name__}.")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {shape}; got shape {arr.shape}.")
    return arr


def check_int(value: object, *, name: str, low: int = 0, high: int | None = None, clamp: bool = False) -> int:
    """Return an integer parameter (a size, count, window or index) in ``[low, high]``.

    ``bool`` and floats are refused (``2.5`` items is not a size).  Above
    ``high``, ``clamp=True`` returns ``high`` (for sizes where "more than
    there is" means "all"), else it is an error.

    Parameters
    ----------
    value : int
        The integer to check.
    name : str
        The argument's name, used in error messages.
    low : int
        The smallest value allowed.
    high : int or None
        The largest value allowed (None: no limit).
    clamp : bool
        Return ``high`` for a larger value instead of raising.

    Returns
    -------
    int
        ``value`` as a Python int.

    Examples
    --------
    >>> check_int(10**30, name="window", low=1, high=1000, clamp=True)
    1000
    >>> check_int(0, name="max_items", low=1)
    Traceback (most recent call last):
    ...
    ValueError: max_items must be an integer >= 1; got 0.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}.")
    v = int(value)
    if v < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {v}.")
    if high is not None and v > high:
        if clamp:
            return high
        raise ValueError(f"{name} must be an integer in [{low}, {high}]; got {v}.")
    return v


def check_text(value: object, *, name: str = "text") -> str:
    """Return ``value`` if it is a ``str``; bytes and other objects are a ``TypeError``.

    Parameters
    ----------
    value : str
        The text to check.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    str
        ``value`` itself.

    Examples
    --------
    >>> check_text(b"abc")
    Traceback (most recent call last):
    ...
    TypeError: text must be a str; got bytes (decode it first, e.g. value.decode('utf-8')).
    """
    if isinstance(value, str):
        return value
    hint = " (decode it first, e.g. value.decode('utf-8'))" if isinstance(value, bytes | bytearray) else ""
    raise TypeError(f"{name} must be a str; got {type(value).__name__}{hint}.")


def as_array(value: object, *, name: str) -> np.ndarray:
    """``np.asarray(value)`` with a ``TypeError`` naming ``name`` when it cannot be an array.

    Parameters
    ----------
    value : array_like
        What to convert.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    numpy.ndarray
        ``np.asarray(value)``.

    Examples
    --------
    >>> as_array([[1, 2], [3]], name="costs")
    Traceback (most recent call last):
    ...
    TypeError: costs must be an array; could not convert it: setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. The detected shape was (2,) + inhomogeneous part.
    """
    try:
        return np.asarray(value)
    except Exception as exc:  # ragged lists and other non-arrays
        raise TypeError(f"{name} must be an array; could not convert it: {exc}") from None


def check_row_norms(norms: NDArray[np.float64], embeddings: np.ndarray, *, name: str = "embeddings") -> None:
    """Raise if any row of ``embeddings`` is non-finite or zero, given its norms.

    ``norms`` are the canonical row norms computed by the first pass, in the
    embeddings' precision.  A row with NaN or inf has a non-finite norm; so
    has a row whose squared norm overflows, and a row of tiny non-zero values
    can have a zero one: both are reported as out of range.

    Parameters
    ----------
    norms : numpy.ndarray
        The rows' norms, float64, one per row of ``embeddings``.
    embeddings : numpy.ndarray
        The embeddings the norms were computed from (to tell NaN from overflow).
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    None
        It returns only when every row is usable.

    Examples
    --------
    >>> E = np.array([[1.0, 0.0], [0.0, 0.0]])
    >>> check_row_norms(np.sqrt((E * E).sum(1)), E)
    Traceback (most recent call last):
    ...
    ValueError: embeddings has a zero vector at row 1 (1 such row in all); cosine similarity is undefined for it. Drop those chunks or re-embed them.
    """
    finite = np.isfinite(norms)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        row = int(bad[0])
        if np.isfinite(embeddings[row]).all():
            raise ValueError(
                f"{name} row {row} is too large to square in {embeddings.dtype.name} (norm overflows); "
                "rescale the embeddings, e.g. divide by their maximum absolute value."
            )
        raise ValueError(
            f"{name} contains NaN or inf at row {row} ({bad.size} such row{'s' if bad.size > 1 else ''} in all); "
            "drop or re-embed those chunks before selection."
        )
    zero = norms == 0.0
    if zero.any():
        bad = np.flatnonzero(zero)
        if np.any(embeddings[int(bad[0])]):
            raise ValueError(
                f"{name} row {int(bad[0])} is too small to square in {embeddings.dtype.name} (norm underflows "
                "to 0); rescale the embeddings (cosine similarity does not depend on scale)."
            )
        raise ValueError(
            f"{name} has a zero vector at row {int(bad[0])} ({bad.size} such row{'s' if bad.size > 1 else ''} "
            "in all); cosine similarity is undefined for it. Drop those chunks or re-embed them."
        )
    lo, hi = NORM_RANGE[embeddings.dtype.name]
    out = (norms < lo) | (norms > hi)
    if out.any():
        row = int(np.flatnonzero(out)[0])
        raise ValueError(
            f"{name} row {row} has norm {norms[row]:.3g}, outside [{lo:g}, {hi:g}] where cosines are computed "
            f"reliably in {embeddings.dtype.name}; rescale the embeddings (cosine similarity does not depend on "
            "scale)."
        )


def check_method(method: object, choices: Sequence[str], *, name: str = "method") -> str:
    """Return ``method`` if it is one of ``choices``.

    Parameters
    ----------
    method : str
        The name given.
    choices : sequence of str
        The names allowed.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    str
        ``method`` itself.

    Examples
    --------
    >>> check_method("fast", ["auto", "exact", "lazy"])
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'auto', 'exact', 'lazy'; got 'fast'.
    >>> check_method("lazzy", ["auto", "exact", "lazy"])
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'auto', 'exact', 'lazy'; got 'lazzy'. Did you mean 'lazy'?
    """
    opts = ", ".join(repr(c) for c in choices)
    if not isinstance(method, str):
        raise TypeError(f"{name} must be one of {opts} (a str); got {type(method).__name__} {method!r}.")
    if method not in choices:
        near = difflib.get_close_matches(method, [str(c) for c in choices], n=1, cutoff=0.6)
        raise ValueError(
            f"{name} must be one of {opts}; got {method!r}." + (f" Did you mean {near[0]!r}?" if near else "")
        )
    return method


def renamed_message(
    old: str, new: str, *, what: str = "", since: str = DEPRECATED_SINCE, removal: str = REMOVAL_IN
) -> str:
    """The one sentence every renamed name warns with.

    Parameters
    ----------
    old, new : str
        The old name and the name that replaces it.
    what : str
        Where the name lives, e.g. ``"crush_json()"`` or ``"scwo crush"`` (may be empty).
    since, removal : str
        The version that renamed it and the one that removes the old name.

    Returns
    -------
    str

    Examples
    --------
    >>> renamed_message("max_tokens", "budget", what="crush_json()")
    "crush_json(): 'max_tokens' was renamed to 'budget' in 0.2; the old name stops working in 0.3."
    """
    where = f"{what}: " if what else ""
    return f"{where}{old!r} was renamed to {new!r} in {since}; the old name stops working in {removal}."


def renamed_property(old: str, new: str, *, what: str = "") -> property:
    """An attribute's old name for one minor version: reading and setting it warn and use ``new``.

    Parameters
    ----------
    old, new : str
        The old attribute name and the one that replaces it.
    what : str
        The class, for the warning (defaults to the instance's class name).

    Returns
    -------
    property
        To assign to the old name in the class body.

    Examples
    --------
    >>> import warnings
    >>> class Box:
    ...     def __init__(self):
    ...         self.budget = 10
    ...     max_tokens = renamed_property("max_tokens", "budget")
    >>> b = Box()
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     b.max_tokens = 20
    ...     b.budget, b.max_tokens, str(w[0].message)
    (20, 20, "Box: 'max_tokens' was renamed to 'budget' in 0.2; the old name stops working in 0.3.")
    """

    def _warn(obj: object) -> None:
        warnings.warn(renamed_message(old, new, what=what or type(obj).__name__), RenamedWarning, 3)

    def fget(self: object) -> Any:
        _warn(self)
        return getattr(self, new)

    def fset(self: object, value: Any) -> None:
        _warn(self)
        setattr(self, new, value)

    return property(fget, fset, doc=f"The old name of :attr:`{new}` (deprecated since {DEPRECATED_SINCE}).")


def renamed_keywords(
    *, since: str = DEPRECATED_SINCE, removal: str = REMOVAL_IN, **old_to_new: str
) -> Callable[[F], F]:
    """Accept a function's old keyword names for one minor version, with a ``DeprecationWarning``.

    The decorated function's signature, ``help()`` and docs show only the new names
    (``inspect.signature`` follows ``__wrapped__``).  Passing an old name calls the function
    with the new one and warns, pointing at the caller's line; passing both is a ``TypeError``
    naming both.  The map is kept on the wrapper as ``__renamed_keywords__``.

    Parameters
    ----------
    since, removal : str
        The version that renamed the keywords and the one that removes the old names.
    **old_to_new : str
        Old keyword name -> new keyword name (a parameter of the decorated function).

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keywords(max_tokens="budget")
    ... def fit(texts, *, budget=100):
    ...     return budget
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fit([], max_tokens=50)
    50
    >>> print(caught[0].category.__name__, caught[0].message)
    RenamedWarning fit(): 'max_tokens' was renamed to 'budget' in 0.2; the old name stops working in 0.3.
    >>> fit([], budget=10, max_tokens=50)
    Traceback (most recent call last):
    ...
    TypeError: fit() got both 'budget' and its old name 'max_tokens'; pass 'budget' only.
    """
    if not old_to_new:
        raise TypeError("renamed_keywords() needs at least one old_name='new_name' pair.")

    def decorate(func: F) -> F:
        params = inspect.signature(func).parameters
        for old, new in old_to_new.items():
            if new not in params:
                raise TypeError(
                    f"renamed_keywords: {func.__qualname__}() has no parameter {new!r} (for {old!r})."
                )
            if old in params:
                raise TypeError(
                    f"renamed_keywords: {func.__qualname__}() still has the old parameter {old!r}."
                )
        label = f"{func.__qualname__.removesuffix('.__init__')}()"
        positional = [n for n, p in params.items() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        # the number of positional arguments that reach the new name: old name and new given together
        reach = {new: positional.index(new) + 1 for new in old_to_new.values() if new in positional}

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if kwargs and not old_to_new.keys().isdisjoint(kwargs):
                for old, new in old_to_new.items():
                    if old not in kwargs:
                        continue
                    if new in kwargs or len(args) >= reach.get(new, len(args) + 1):
                        raise TypeError(
                            f"{label} got both {new!r} and its old name {old!r}; pass {new!r} only."
                        )
                    warnings.warn(
                        renamed_message(old, new, what=label, since=since, removal=removal),
                        RenamedWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__renamed_keywords__ = dict(old_to_new)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_attributes(
    module: str, old_to_new: Mapping[str, str], *, since: str = DEPRECATED_SINCE, removal: str = REMOVAL_IN
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves renamed public names for one minor version.

    ``module.OLD`` gives ``module.NEW`` and warns ``DeprecationWarning`` at the line that
    read it; ``from module import OLD`` works the same way.  The old names are not in the
    module's ``__all__`` nor its ``dir()``.

    Parameters
    ----------
    module : str
        The module's ``__name__``.
    old_to_new : Mapping[str, str]
        Old attribute name -> new attribute name (defined in the module), or
        ``"package.module:name"`` for a name that moved to another module (imported on
        first use; the warning says "moved to").
    since, removal : str
        The version that renamed them and the one that removes the old names.

    Returns
    -------
    callable
        The function to assign to the module's ``__getattr__``.

    Examples
    --------
    In a module: ``__getattr__ = renamed_attributes(__name__, {"STRATEGIES": "MORAG_LAYOUTS"})``,
    or for a name that moved: ``{"quality_at_budget": "scwo_np.bench:quality_at_budget"}``.
    """
    renames = dict(old_to_new)

    def __getattr__(name: str) -> Any:
        new = renames.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attr = new.rpartition(":")
        where = where or module
        # ``from package import OLD`` looks the name up twice: once in importlib's
        # _handle_fromlist (a hasattr), once for the import itself. Warn once, on the second.
        if sys._getframe(1).f_code.co_name != "_handle_fromlist":
            msg = renamed_message(f"{module}.{name}", f"{where}.{attr}", since=since, removal=removal)
            warnings.warn(
                msg.replace("was renamed to", "moved to") if where != module else msg, RenamedWarning, 2
            )
        return getattr(importlib.import_module(where), attr)

    __getattr__.__renamed_attributes__ = renames  # type: ignore[attr-defined]
    return __getattr__
