"""A time limit that long work checks as it goes, so a call abandoned by its caller stops.

A server that gives up on a call after ``--time-limit`` seconds (``scwo mcp``) cannot stop the
thread doing the work: Python has no way to kill a thread.  Left alone, the thread runs on, and a
client that retries starts another beside it, each holding the memory of its input (a 28 MB
``crush_json`` counted with WordPiece held 4 GB per call).  So the work checks a deadline at
its natural steps instead: :func:`scwo_np.tokens.count_tokens` before and between its batches,
embedders between theirs.  The server runs each call under :func:`deadline`; the first check
after it passes raises :class:`DeadlineExceeded` in the worker thread, which ends it.

The deadline is per thread, and with no deadline set :func:`check_deadline` costs one attribute
lookup: library calls outside the server never see it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["DeadlineExceeded", "check_deadline", "deadline"]

_LOCAL = threading.local()


class DeadlineExceeded(TimeoutError):
    """The work ran past the :func:`deadline` its thread was given."""


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Run the block with a time limit that :func:`check_deadline` enforces (None: no limit).

    Examples
    --------
    >>> with deadline(60):
    ...     check_deadline()  # well within the minute
    >>> with deadline(0):
    ...     check_deadline()
    Traceback (most recent call last):
    ...
    scwo_np._deadline.DeadlineExceeded: this call ran past its time limit of 0 s; it was stopped.
    """
    saved = getattr(_LOCAL, "at", None), getattr(_LOCAL, "seconds", None)
    if seconds is not None:
        at = time.monotonic() + seconds
        if saved[0] is None or at < saved[0]:  # a limit inside another keeps the sooner one
            _LOCAL.at, _LOCAL.seconds = at, seconds
    try:
        yield
    finally:
        _LOCAL.at, _LOCAL.seconds = saved


def check_deadline() -> None:
    """Raise :class:`DeadlineExceeded` when this thread's :func:`deadline` has passed."""
    at = getattr(_LOCAL, "at", None)
    if at is not None and time.monotonic() >= at:
        raise DeadlineExceeded(f"this call ran past its time limit of {_LOCAL.seconds:g} s; it was stopped.")
