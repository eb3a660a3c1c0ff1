import multiprocessing as mp
import os

import pytest

from scwo_np.anchor import BUCKETS, PositionLearner, classify_position, crush


def test_round_trip_through_the_file(tmp_path):
    path = tmp_path / "positions.sqlite"
    with PositionLearner(path, min_samples=3) as lr:
        for _ in range(3):
            lr.record_retrieval("logs_tool", 1000, [990, 995, 500])
    with PositionLearner(path, min_samples=3) as again:
        p = again.pattern("logs_tool")
        assert p.total_compressions == 3
        assert p.position_retrievals == {
            "front_10%": 0,
            "front_30%": 0,
            "middle": 3,
            "back_30%": 0,
            "back_10%": 6,
        }
        w = again.weights("logs_tool")
        assert w.back > w.middle > w.front == 0
        assert again.snapshot()["logs_tool"] == p


def test_learned_weights_drive_crush_deterministically(tmp_path):
    lr = PositionLearner(tmp_path / "p.sqlite", min_samples=10)
    items = [{"i": i, "v": i % 7} for i in range(500)]
    for _ in range(9):
        lr.record_retrieval("t", 500, [499, 498])
    assert lr.weights("t") is None  # 9 < 10 samples: the pattern's defaults
    lr.record_retrieval("t", 500, [497])
    w = lr.weights("t")
    a = crush(items, 20, learned=w)
    b = crush(items, 20, learned=lr.weights("t"))
    assert a.tolist() == b.tolist() and (a >= 450).sum() > (a < 50).sum()


def _writer(path, k):
    lr = PositionLearner(path)
    for j in range(k):
        lr.record_retrieval(f"tool{j % 2}", 100, [j % 100])
    lr.close()


def test_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    PositionLearner(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, 50)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    snap = PositionLearner(path).snapshot()
    assert sum(p.total_compressions for p in snap.values()) == 200
    assert sum(sum(p.position_retrievals.values()) for p in snap.values()) == 200


def _crashing_writer(path):
    lr = PositionLearner(path)
    for j in range(25):
        lr.record_retrieval("t", 10, [j % 10])
    os._exit(1)  # no close, no cleanup: a crash


def test_a_crash_loses_no_recorded_retrieval(tmp_path):
    path = str(tmp_path / "crash.sqlite")
    p = mp.get_context("spawn").Process(target=_crashing_writer, args=(path,))
    p.start()
    p.join(60)
    assert p.exitcode == 1
    assert PositionLearner(path).pattern("t").total_compressions == 25


def test_bad_input():
    lr = PositionLearner()
    with pytest.raises(ValueError, match="not a position"):
        lr.record_retrieval("t", 10, [10])
    with pytest.raises(ValueError, match="original_size"):
        lr.record_retrieval("t", 0, [])
    with pytest.raises(ValueError, match="tool_name"):
        lr.record_retrieval("", 10, [1])
    with pytest.raises(ValueError, match="min_samples"):
        PositionLearner(min_samples=0)
    assert lr.pattern("unknown").total_compressions == 0 and lr.weights("unknown") is None
    assert [classify_position(i, 10) for i in range(10)].count("middle") == 5 and len(BUCKETS) == 5
