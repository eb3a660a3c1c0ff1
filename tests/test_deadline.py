"""The time limit long work checks (scwo_np._deadline): per thread, the sooner of two, checked by counting."""

import threading

import pytest

from scwo_np import load_sample
from scwo_np._deadline import DeadlineExceeded, check_deadline, deadline
from scwo_np.tokens import count_tokens


def test_no_deadline_no_effect():
    check_deadline()
    with deadline(None):
        check_deadline()
    assert count_tokens(["a b"]).tolist() == [1]


def test_counting_stops_past_the_deadline():
    texts = list(load_sample().texts[:50])
    with deadline(0), pytest.raises(DeadlineExceeded, match="time limit of 0 s"):
        count_tokens(texts)
    assert count_tokens(texts).shape == (50,)  # the limit ended with its block


def test_the_sooner_of_two_and_restored():
    with deadline(3600):
        with deadline(0), pytest.raises(DeadlineExceeded):
            check_deadline()
        check_deadline()  # the outer hour again
        with deadline(7200):  # a later limit inside keeps the sooner one
            check_deadline()


def test_a_deadline_is_its_threads_own():
    seen = []

    def other():
        try:
            check_deadline()
            seen.append("ok")
        except DeadlineExceeded:
            seen.append("stopped")

    with deadline(0):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == ["ok"]


def test_a_deadline_is_a_timeout_error():
    assert issubclass(DeadlineExceeded, TimeoutError)
