"""The thread helpers: chunks cover every item once, and read-ahead keeps order, errors and early stops."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from scwo_np._parallel import map_chunks, read_ahead, run_chunks


@pytest.mark.parametrize("n, chunk", [(0, 4), (1, 4), (10, 3), (64, 64), (200, 7)])
def test_chunks_cover_every_item_once(n, chunk):
    seen = np.zeros(n, dtype=np.int64)

    def kernel(out, lo, hi):
        out[lo:hi] += 1

    run_chunks(kernel, n, seen, chunk=chunk)
    assert np.all(seen == 1)
    bounds = map_chunks(lambda lo, hi: (lo, hi), n, chunk=chunk)
    assert [b for b, _ in bounds] == list(range(0, n, chunk))


@pytest.mark.parametrize("depth", [1, 3])
def test_read_ahead_yields_everything_in_order(depth):
    assert list(read_ahead(iter(range(50)), depth)) == list(range(50))
    assert list(read_ahead([], depth)) == []


def test_read_ahead_reads_while_the_consumer_works():
    produced = []

    def slow():
        for i in range(3):
            produced.append(i)
            yield i

    it = read_ahead(slow(), 1)
    assert next(it) == 0
    deadline = time.monotonic() + 5
    while len(produced) < 2 and time.monotonic() < deadline:  # the next item is read meanwhile
        time.sleep(0.01)
    assert produced[:2] == [0, 1]
    assert list(it) == [1, 2]


def test_read_ahead_raises_the_readers_error_where_it_happened():
    def broken():
        yield 1
        raise OSError("disk gone")

    it = read_ahead(broken())
    assert next(it) == 1
    with pytest.raises(OSError, match="disk gone"):
        next(it)


def test_closing_early_stops_the_reader_thread():
    before = threading.active_count()
    it = read_ahead(iter(range(10**9)), 2)
    assert next(it) == 0
    it.close()
    assert threading.active_count() == before
