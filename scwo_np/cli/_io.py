"""What every command shares: reading JSONL and .npz input, writing output whole or not at all."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator

import numpy as np


def _whole(text: str, low: int) -> int:
    try:
        n = int(text)
    except ValueError:
        n = low - 1
    if n < low:
        raise argparse.ArgumentTypeError(f"must be a whole number >= {low}, not {text!r}")
    return n


def _positive(text: str) -> int:
    """An argparse ``type=``: a whole number >= 1."""
    return _whole(text, 1)


def _count(text: str) -> int:
    """An argparse ``type=``: a whole number >= 0."""
    return _whole(text, 0)


def _lam(text: str) -> float | str:
    """An argparse ``type=``: MMR's trade-off, a number in [0, 1] or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return float(text)  # its range is checked where it is used, with the library's message
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1] or auto, not {text!r}") from None


def _out(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def _stdin():
    """Standard input as a binary stream, or a clear error when there is none (``cmd <&-``)."""
    try:
        if sys.stdin is None or sys.stdin.closed:
            raise OSError
        os.fstat(sys.stdin.fileno())
    except (OSError, ValueError):
        raise SystemExit(
            "scwo: no input: standard input is closed; pass a file name instead of '-'"
        ) from None
    return sys.stdin.buffer


def _lines(path: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of a UTF-8 file (``-`` = stdin); errors name the file and line."""
    if path == "-":
        fh_ctx = contextlib.nullcontext(_stdin())
    else:
        try:
            fh_ctx = open(path, "rb")
        except OSError as exc:
            raise SystemExit(f"scwo: cannot read {path}: {exc.strerror}") from None
    with fh_ctx as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SystemExit(
                    f"scwo: {path}:{lineno}: not valid UTF-8 (byte {exc.start} of the line: {exc.reason}); "
                    "convert the file to UTF-8"
                ) from None


def _read_jsonl(path: str, required: tuple[str, ...] = ()) -> list[dict]:
    """One JSON object per line (``-`` = stdin); blank lines skipped; errors name the line."""
    records = []
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"scwo: {path}:{lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise SystemExit(f"scwo: {path}:{lineno}: JSON nested too deeply to parse") from None
        if not isinstance(rec, dict):
            raise SystemExit(f"scwo: {path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
        for f in required:
            if f not in rec:
                raise SystemExit(f"scwo: {path}:{lineno}: missing field {f!r}")
        records.append(rec)
    return records


@contextlib.contextmanager
def _output(path: str):
    """A text stream for ``path`` (``-`` = stdout) that appears only when complete.

    A regular file is written under a temporary name in its own folder and
    renamed at the end, so a failure (bad input found late, a full disk)
    leaves no half-written output behind and an existing file untouched.
    Anything else that exists (``/dev/stdout``, a pipe, a device) is written
    directly.
    """
    if path == "-":
        yield sys.stdout
        return
    if os.path.isdir(path):
        raise IsADirectoryError(21, "is a directory", path)
    if os.path.exists(path) and not os.path.isfile(path):
        try:
            with open(path, "w", encoding="utf-8") as out:
                yield out
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, path) from None
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, path) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise type(exc)(exc.errno, exc.strerror, path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _write_jsonl(records, path: str) -> None:
    with _output(path) as out:
        for r in records:
            out.write(json.dumps(r, ensure_ascii=False) + "\n")


def _read_chunks(path: str, emb_field: str, tok_field: str):
    """Records, embeddings and costs from JSONL (``-`` = stdin) or ``.npz``."""
    if path.endswith(".npz"):
        try:
            with np.load(path) as z:
                E, c = z["embeddings"], z["costs"]
        except FileNotFoundError:
            raise SystemExit(f"scwo: cannot read {path}: no such file") from None
        except Exception as exc:  # noqa: BLE001 - a corrupt, truncated or foreign file: say which
            raise SystemExit(
                f"scwo: {path}: not a readable .npz with 'embeddings' and 'costs' arrays ({type(exc).__name__}: {exc})"
            ) from None
        return [{"index": i, "tokens": int(t)} for i, t in enumerate(c)], E, c
    records = _read_jsonl(path, (emb_field, tok_field))
    if not records:
        return [], np.empty((0, 1)), np.empty(0, dtype=np.int64)
    return (
        records,
        np.array([r[emb_field] for r in records], dtype=np.float64),
        [r[tok_field] for r in records],
    )


def _vector_option(text: str, option: str) -> np.ndarray:
    """A JSON list of numbers given on the command line, or a clear error naming the option."""
    try:
        v = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = getattr(exc, "msg", "nested too deeply")
        raise SystemExit(
            f"scwo: {option} is not valid JSON ({msg}); give a list of numbers like [0.1, -0.2]"
        ) from None
    if not isinstance(v, list) or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in v):
        raise SystemExit(f"scwo: {option} must be a JSON list of numbers like [0.1, -0.2]; got {text[:60]!r}")
    return np.array(v, dtype=np.float64)


def _json_object_option(text: str, option: str) -> dict:
    """A JSON object given on the command line, or a clear error naming the option."""
    try:
        v = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise SystemExit(
            f"scwo: {option} is not valid JSON ({getattr(exc, 'msg', 'nested too deeply')})"
        ) from None
    if not isinstance(v, dict):
        raise SystemExit(f'scwo: {option} must be a JSON object like {{"maxChunks": 5}}; got {text[:60]!r}')
    return v


def _field(rec: dict, names: list[str], lineno: int, path: str, default=...):
    for n in names:
        if n in rec:
            return rec[n]
    if default is not ...:
        return default
    raise SystemExit(f"scwo: {path}: record {lineno}: missing field {names[0]!r}")
