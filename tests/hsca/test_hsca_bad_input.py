"""Issue 32's HSCA cases: NaN, negative, huge and wrong-typed inputs are clear errors, never a
quiet "unclassified", a NaN support, a dropped session or a raw sqlite3 error."""

from __future__ import annotations

import math

import pytest

from scwo_np.hsca import (
    ContextSnapshot,
    HSCAEngine,
    SnapshotStore,
    WeightedChunk,
    domain_tags,
    support_strength,
)

SNAP = {
    "snapshot_id": "s",
    "chunks": [],
    "macro_weight": 0.5,
    "domain_summary": {},
    "conversation_position": 0,
}
CHUNK = {"chunk_id": "a", "text": "", "layer1_score": 0.5, "coherence_score": 0.5}


@pytest.mark.parametrize("w", [math.nan, -5.0, math.inf, 10**400])
def test_domain_weights_must_be_finite_and_non_negative(w):
    with pytest.raises(ValueError, match=r"weights\['legal'\] must be a finite number >= 0"):
        domain_tags("The court ruled that the contract was void.", weights={"legal": w})
    assert domain_tags("The court ruled that the contract was void.", weights={"legal": 2.0}) == ["legal"]


def test_support_strength_checks_its_chunks():
    good = WeightedChunk("a", "", 0.8, [], 0.9, [], None)
    assert support_strength([good]) == 0.8 and support_strength([]) == 0.0
    with pytest.raises(ValueError, match=r"grounding\[1\].layer1_score must be in \[0, 1\]; got nan"):
        support_strength([good, WeightedChunk("b", "", math.nan, [], 0.9, [], None)])
    for bad in ("abc", good, None, [None]):
        with pytest.raises(TypeError, match="grounding"):
            support_strength(bad)


@pytest.mark.parametrize("created", [math.nan, math.inf, 10**400])
def test_snapshot_created_at_must_be_finite(created):
    with pytest.raises(ValueError, match="ContextSnapshot.from_dict: field 'created_at' must be finite"):
        ContextSnapshot.from_dict({**SNAP, "created_at": created})
    with pytest.raises(ValueError, match="WeightedChunk.from_dict: field 'created_at' must be finite"):
        WeightedChunk.from_dict({**CHUNK, "created_at": created})


def test_a_huge_score_is_a_value_error_not_an_overflow():
    with pytest.raises(ValueError, match=r"field 'layer1_score' must be in \[0, 1\]; got 1000"):
        WeightedChunk.from_dict({**CHUNK, "layer1_score": 10**400})


def test_aggregate_domains_refuses_a_nan_now(tmp_path):
    store = SnapshotStore(tmp_path / "s.sqlite")
    eng = HSCAEngine()
    eng.ingest_turn("The court ruled that the contract was void.")
    store.save("s1", [eng.take_snapshot()])
    assert store.aggregate_domains(["s1"], now=0.0)
    with pytest.raises(ValueError, match="now must be a finite number; got nan"):
        store.aggregate_domains(["s1"], now=math.nan)


@pytest.mark.parametrize(
    "kw, error, match",
    [
        (dict(context_position="a"), TypeError, "context_position must be an integer"),
        (dict(last=1.5), TypeError, "last must be an integer"),
        (dict(last=-1), ValueError, "last must be"),
        (dict(radius=None), TypeError, "radius must be an integer"),
    ],
)
def test_relevant_snapshots_checks_its_arguments(kw, error, match):
    eng = HSCAEngine()
    eng.ingest_turn("The court ruled that the contract was void.")
    eng.take_snapshot()
    assert eng.relevant_snapshots("court", context_position=0, last=1)
    with pytest.raises(error, match=match):
        eng.relevant_snapshots("court", **kw)
    with pytest.raises(TypeError, match="query must be a str"):
        eng.relevant_snapshots(None)


def test_save_checks_what_it_is_given(tmp_path):
    """Issue 32: a list of None, a bare snapshot, or a NaN time gave raw AttributeError/IntegrityError."""
    store = SnapshotStore(tmp_path / "s.sqlite")
    eng = HSCAEngine()
    eng.ingest_turn("The court ruled that the contract was void.")
    snap = eng.take_snapshot()
    with pytest.raises(TypeError, match=r"snapshots\[0\] must be a ContextSnapshot; got NoneType"):
        store.save("s1", [None])
    with pytest.raises(TypeError, match="snapshots must be a list of ContextSnapshot; got ContextSnapshot"):
        store.save("s1", snap)
    snap.created_at = math.nan
    with pytest.raises(ValueError, match=r"snapshots\[0\]: .*'created_at' must be finite"):
        store.save("s1", [snap])
    assert store.load("s1") == []  # nothing half-saved


@pytest.mark.parametrize(
    "change, error, match",
    [
        (
            dict(macro_weight="high"),
            TypeError,
            r"snapshots\[0\]\.macro_weight must be a number in \[0, 1\].*got str",
        ),
        (
            dict(macro_weight=None),
            TypeError,
            r"snapshots\[0\]\.macro_weight .*got NoneType.*set it to a float",
        ),
        (dict(macro_weight=1 + 2j), TypeError, r"snapshots\[0\]\.macro_weight .*got complex"),
        (dict(macro_weight=math.nan), ValueError, r"snapshots\[0\]\.macro_weight must be in \[0, 1\]"),
        (dict(domain_summary={"legal": "x"}), TypeError, r"domain_summary\['legal'\] must be a number"),
        (dict(domain_summary=[("legal", 1.0)]), TypeError, r"domain_summary must be a dict"),
        (dict(chunks="c1"), TypeError, r"snapshots\[0\]\.chunks must be a list of WeightedChunk"),
    ],
)
def test_save_names_a_weight_that_is_not_a_number(tmp_path, change, error, match):
    """Issue 40 part 8: a weight that is not a number gave "type str doesn't define __round__ method"."""
    import dataclasses

    store = SnapshotStore(tmp_path / "s.sqlite")
    eng = HSCAEngine()
    eng.ingest_turn("The court ruled that the contract was void.")
    snap = eng.take_snapshot()
    with pytest.raises(error, match=match):
        store.save("s1", [dataclasses.replace(snap, **change)])
    bad_chunk = dataclasses.replace(snap.chunks[0], layer1_score="high")
    with pytest.raises(TypeError, match=r"snapshots\[0\]\.chunks\[0\]\.layer1_score must be a number"):
        store.save("s1", [dataclasses.replace(snap, chunks=[bad_chunk])])
    assert store.load("s1") == []  # nothing half-saved
    store.save("s1", [snap])
    assert len(store.load("s1")) == 1


@pytest.mark.parametrize("text", ["", "  \n\t"])
def test_an_empty_turn_is_refused_and_nothing_is_added(text):
    eng = HSCAEngine()
    eng.ingest_turn("The court ruled that the contract was void.")
    with pytest.raises(ValueError, match="text is empty or only whitespace"):
        eng.ingest_turn(text)
    assert len(eng.buffer) == 1
    with pytest.raises(TypeError, match="text must be a str; got bytes"):
        eng.ingest_turn(b"a turn")
