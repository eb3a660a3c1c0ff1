import pytest

from scwo_np.hsca import ContextSnapshot, HSCAEngine, SessionState, SnapshotStore, WeightedChunk


def _snap(i, session_ts=0.0, tags=("physics",)):
    c = WeightedChunk(f"c{i}", f"text {i}", 0.5, list(tags), 0.8, ["hedged"], f"s{i}", created_at=session_ts)
    return ContextSnapshot(
        f"s{i}", [c], 0.5, {t: 1.0 / len(tags) for t in tags}, i, False, created_at=session_ts
    )


def test_session_state_round_trip_and_backward_compatibility():
    eng = HSCAEngine(snapshot_coherence_threshold=0.0, snapshot_on_topic_shift=False)  # a beat per turn
    eng.ingest_turn("The court ruled on the contract. The judge cited the statute. The parties appealed.")
    st = SessionState("s", ["old summary"], eng.get_macro_context())
    again = SessionState.from_dict(st.to_dict())
    assert (
        again.task_summaries == ["old summary"]
        and again.context_snapshots[0].snapshot_id == st.context_snapshots[0].snapshot_id
    )
    assert SessionState.from_dict({"session_id": "old", "task_summaries": ["x"]}).context_snapshots == []
    with pytest.raises(ValueError):
        SessionState.from_dict({"task_summaries": []})


def test_store_round_trip_weight_maps_only_and_atomic(tmp_path):
    path = tmp_path / "snaps.sqlite"
    store = SnapshotStore(path)
    snaps = [_snap(i) for i in range(5)]
    store.save("alice", snaps)
    loaded = SnapshotStore(path).load("alice")
    assert [s.conversation_position for s in loaded] == list(range(5))
    assert loaded[2].chunks[0].text == "text 2" and loaded[2].snapshot_id == "alice/s2"
    lean = SnapshotStore(tmp_path / "lean.sqlite", keep_text=False)
    lean.save("bob", snaps)
    assert lean.load("bob")[0].chunks[0].text == "" and lean.load("bob")[0].chunks[0].layer1_score == 0.5
    with pytest.raises(ValueError):
        store.save("a/b", snaps)


def test_cross_session_aggregation_decays_old_sessions():
    store = SnapshotStore()
    now = 1_000_000.0
    store.save("old", [_snap(0, now - 30 * 86400, ("legal",))])
    store.save("new", [_snap(0, now, ("physics",))])
    agg = store.aggregate_domains(["old", "new"], half_life=7 * 86400, now=now)
    assert agg["physics"] > 0.9 > agg["legal"] > 0 and abs(sum(agg.values()) - 1) < 1e-12
    assert store.sessions() == ["new", "old"]


def test_ten_thousand_snapshots_round_trip(tmp_path):
    store = SnapshotStore(tmp_path / "big.sqlite")
    snaps = [_snap(i) for i in range(10_000)]
    store.save("big", snaps)  # the timing is in asv (benchmarks/hsca.py, Store)
    loaded = store.load("big")
    assert len(loaded) == 10_000


def test_a_session_stored_without_text_gives_an_empty_context_and_says_why():
    """It gave '[turns 1-3] ' and four line breaks: a citation of nothing (a new user's trial)."""
    eng = HSCAEngine()
    for t in ["Mein Server heißt Brombeere und die IP-Adresse ist 10.24.7.19.",
              "Gut, Brombeere (10.24.7.19) ist notiert.", "Now let's configure the apt proxy on port 3128."]:  # fmt: skip
        eng.ingest_turn(t)
    store = SnapshotStore(keep_text=False)
    store.save("s", eng.get_macro_context(), buffer=eng.buffer)
    again = HSCAEngine.from_store(store, "s")
    for query, budget in (("Wie heißt mein Server?", 200), (None, 200), (None, 5000)):
        with pytest.warns(UserWarning, match="no text .*keep_text=True"):
            ctx = again.context(query, budget)
        assert (ctx.text, ctx.tokens, ctx.pieces) == ("", 0, [])
    # turns ingested afterwards have their text, and only they are shown
    again.ingest_turn("The proxy is squid on host kestrel, port 3128.")
    again.ingest_turn("ok thanks")
    for query, budget in (("Which host runs the proxy?", 200), (None, 5000)):
        ctx = again.context(query, budget)
        assert "kestrel" in ctx.text and "[turns 1" not in ctx.text and ctx.tokens <= budget
        assert all(p.text for p in ctx.pieces)
