"""The SQLite stores under real concurrency, their errors on bad paths, and damaged or foreign files.

Real processes, real files: several processes open the same new store file
at once (switching a new file to WAL takes a lock that SQLite's busy handler
does not cover), a reader reads a learner's counts while another process
writes them, and paths that cannot be a store give errors that name them.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import shutil
import sqlite3
import time

import pytest

from scwo_np._sqlite import APPLICATION_IDS, StoreError
from scwo_np.anchor import CrushStore, PositionLearner
from scwo_np.embed import EmbeddingCache
from scwo_np.hsca import HSCAEngine, SnapshotStore

STORES = {"learner": PositionLearner, "snapshots": SnapshotStore}


def _open_many(kind, folder, names, go):
    while not os.path.exists(go):
        time.sleep(0.001)
    cls = STORES[kind]
    for name in names:
        cls(os.path.join(folder, name)).close()


@pytest.mark.parametrize("kind", STORES)
def test_processes_opening_the_same_new_file_at_once_all_succeed(tmp_path, kind):
    ctx = mp.get_context("spawn")
    names = [f"s{k}.sqlite" for k in range(40)]
    go = str(tmp_path / "go")
    procs = [ctx.Process(target=_open_many, args=(kind, str(tmp_path), names, go)) for _ in range(4)]
    for p in procs:
        p.start()
    time.sleep(1.5)  # let every process import and wait at the line
    open(go, "w").close()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    for name in names:  # every file is a working store
        STORES[kind](tmp_path / name).close()


def _record(path, n):
    lr = PositionLearner(path)
    for _ in range(n):
        lr.record_retrieval("t", 100, [0])  # one compression and one front retrieval per transaction
    lr.close()


def test_pattern_reads_counts_from_one_moment(tmp_path):
    path = str(tmp_path / "p.sqlite")
    PositionLearner(path).close()
    p = mp.get_context("spawn").Process(target=_record, args=(path, 400))
    p.start()
    reader = PositionLearner(path)
    seen = mismatched = 0
    deadline = time.monotonic() + 120
    while p.is_alive() and time.monotonic() < deadline:
        pat = reader.pattern("t")
        seen += 1
        mismatched += pat.total_compressions != pat.position_retrievals["front_10%"]
    p.join(60)
    assert p.exitcode == 0
    assert mismatched == 0, f"{mismatched} of {seen} reads mixed two moments"
    assert reader.pattern("t").total_compressions == 400


@pytest.mark.parametrize("kind", STORES)
def test_paths_that_cannot_be_a_store_name_the_path(tmp_path, kind):
    cls = STORES[kind]
    missing = tmp_path / "no" / "such" / "dir" / "s.sqlite"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        cls(missing)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        cls(tmp_path)
    junk = tmp_path / "notes.txt"
    junk.write_text("these are my notes, not a database\n" * 10)
    with pytest.raises(ValueError, match="not a SQLite database") as info:
        cls(junk)
    assert str(junk) in str(info.value)
    assert junk.read_text().startswith("these are my notes")  # left as it was
    with pytest.raises(TypeError, match="path"):
        cls(42)


def test_text_sqlite_cannot_store_is_a_clear_error():
    from scwo_np.hsca import ContextSnapshot, WeightedChunk

    chunk = WeightedChunk("c1", "decoded badly \ud800 here", 0.5, ["legal"], 0.9, [], None, 1.0)
    store = SnapshotStore(":memory:")
    with pytest.raises(ValueError, match="chunk 'c1' text contains a lone surrogate"):
        store.save("a", [ContextSnapshot("s1", [chunk], 0.6, {"legal": 1.0}, 0, False, created_at=1.0)])
    assert store.sessions() == []  # nothing half-written
    with pytest.raises(ValueError, match="tool_name contains a lone surrogate"):
        PositionLearner().record_retrieval("tool\ud800", 10, [1])


# ---------------------------------------------------------------------------
# Damaged and foreign files (issue 32): real files, real damage.

ALL = {
    "learner": PositionLearner,
    "snapshots": SnapshotStore,
    "crush": lambda p: CrushStore(p),
    "embeddings": lambda p: EmbeddingCache(p),
}


def _session_store(path, saves=60):
    store = SnapshotStore(path)
    eng = HSCAEngine()
    texts = ["The court ruled that the contract was void.", "The patient was given insulin.", "A quick fox."]
    for k in range(saves):
        eng.ingest_turn(f"{texts[k % 3]} Turn {k}.")
        store.save(f"s{k % 6}", [eng.take_snapshot()])
    return store


def test_damaged_files_are_refused_never_partly_loaded(tmp_path):
    """512 random bytes overwritten, 40 times: each time the store opens intact or says it is damaged."""
    base = str(tmp_path / "base.sqlite")
    store = _session_store(base)
    want = {s: [x.to_dict() for x in store.load(s)] for s in store.sessions()}
    store.close()
    rng = random.Random(0)
    size = os.path.getsize(base)
    outcomes = {"intact": 0, "refused": 0}
    for trial in range(40):
        path = str(tmp_path / f"t{trial}.sqlite")
        shutil.copy(base, path)
        with open(path, "r+b") as fh:
            fh.seek(rng.randrange(0, size - 512))
            fh.write(bytes(rng.randrange(256) for _ in range(512)))
        try:
            got = SnapshotStore(path)
            loaded = {s: [x.to_dict() for x in got.load(s)] for s in want}
        except StoreError as exc:
            assert path in str(exc) and "damaged" in str(exc)
            outcomes["refused"] += 1
            continue
        assert loaded == want  # never a partial or altered load
        outcomes["intact"] += 1
    assert outcomes["refused"] > 0


def test_a_crush_store_row_whose_body_is_damaged_is_refused_by_its_checksum(tmp_path):
    """Damage inside a row leaves the file's pages well formed (quick_check passes); the body's
    own Adler-32 checksum (zlib) catches it when the row is read."""
    path = str(tmp_path / "c.sqlite")
    store = CrushStore(path)
    key = store.put([f'{{"id": {i}, "v": "{"x" * 40}"}}' for i in range(200)])
    other = store.put(['{"id": 1}'])
    body = bytearray(store._db.execute("SELECT body FROM arrays WHERE key = ?", (key,)).fetchone()[0])
    store.close()
    rng = random.Random(1)
    for i in rng.sample(range(2, len(body) - 4), 8):  # past zlib's 2-byte header
        body[i] ^= 0x5A
    with sqlite3.connect(path) as db:
        db.execute("UPDATE arrays SET body = ? WHERE key = ?", (bytes(body), key))
    db.close()
    store = CrushStore(path)
    with pytest.raises(StoreError, match="is damaged: the array under key") as exc:
        store.retrieve(key)
    assert path in str(exc.value)
    assert store.retrieve(other) == [{"id": 1}]  # the other rows still read
    store.close()


@pytest.mark.parametrize("kind", ALL)
def test_a_foreign_sqlite_file_with_a_table_of_the_same_name_is_refused(tmp_path, kind):
    path = str(tmp_path / "foreign.sqlite")
    ALL[kind](path)  # the store's own file, to learn its table names
    tables = [
        r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")
    ]
    os.remove(path)
    db = sqlite3.connect(path)
    db.execute(f'CREATE TABLE "{tables[0]}" (something_else TEXT)')  # the same name, another program's table
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="SQLite database of something else"):
        ALL[kind](path)


def test_a_store_refuses_another_kind_s_file_and_adopts_its_own_unmarked_file(tmp_path):
    path = str(tmp_path / "s.sqlite")
    _session_store(path, saves=3).close()
    assert (
        sqlite3.connect(path).execute("PRAGMA application_id").fetchone()[0]
        == APPLICATION_IDS["snapshot store"]
    )
    with pytest.raises(StoreError, match="is a snapshot store file, not an embedding cache"):
        EmbeddingCache(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 0")  # a file written before the marks existed
    db.commit()
    db.close()
    assert len(SnapshotStore(path).load("s0")) == 1
    assert (
        sqlite3.connect(path).execute("PRAGMA application_id").fetchone()[0]
        == APPLICATION_IDS["snapshot store"]
    )


READ_ONLY_PROBE = """
import sys
from scwo_np.hsca import HSCAEngine, SnapshotStore
folder = sys.argv[1]
eng = HSCAEngine()
eng.ingest_turn("The court ruled that the contract was void.")


def save():  # WAL mode: SQLite needs its -shm beside the file even to read, so a folder
    store = SnapshotStore(folder + "/s.sqlite")  # that is read-only may refuse the open itself
    store.save("s9", [eng.take_snapshot()])


for what, call in (("save", save), ("new", lambda: SnapshotStore(folder + "/new.sqlite"))):
    try:
        call()
        print(what, "no error")
    except PermissionError as exc:
        print(what, "PermissionError", exc)
"""


@pytest.mark.system
def test_a_read_only_store_is_named_as_a_permission_problem(tmp_path):
    """Issue 32: a read-only file gave a raw OperationalError on write, a read-only folder a message
    about the format. Real read-only files: a read-only bind mount (as root) or chmod (otherwise)."""
    import subprocess
    import sys

    folder = tmp_path / "ro"
    folder.mkdir()
    _session_store(str(folder / "s.sqlite"), saves=6).close()
    if os.geteuid() == 0:
        script = f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && exec "$0" -c "$1" "$2"'
        cmd = ["unshare", "-m", "sh", "-c", script, sys.executable, READ_ONLY_PROBE, str(folder)]
    else:
        for p in folder.iterdir():
            p.chmod(0o444)
        folder.chmod(0o555)
        cmd = [sys.executable, "-c", READ_ONLY_PROBE, str(folder)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if os.geteuid() != 0:
        folder.chmod(0o755)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    for what in ("save", "new"):
        assert lines[what].startswith("PermissionError"), r.stdout
        assert "read-only" in lines[what] and "snapshot store file" in lines[what]


FILE_READ_ONLY_PROBE = """
import sys
from scwo_np.hsca import HSCAEngine, SnapshotStore
store = SnapshotStore(sys.argv[1])
assert len(store.load("s0")) == 1  # the folder is writable: a read-only file still reads
eng = HSCAEngine()
eng.ingest_turn("The court ruled that the contract was void.")
try:
    store.save("s9", [eng.take_snapshot()])
    print("no error")
except PermissionError as exc:
    print("PermissionError", exc)
"""


@pytest.mark.system
def test_writing_a_read_only_store_file_is_a_permission_error(tmp_path):
    """The file alone read-only (a bind mount as root, chmod otherwise): reads work, a write is named."""
    import subprocess
    import sys

    path = str(tmp_path / "s.sqlite")
    _session_store(path, saves=6).close()
    for ext in ("-wal", "-shm"):
        if os.path.exists(path + ext):
            os.remove(path + ext)
    if os.geteuid() == 0:
        script = (
            f'mount --bind "{path}" "{path}" && mount -o remount,bind,ro "{path}" && exec "$0" -c "$1" "$2"'
        )
        cmd = ["unshare", "-m", "sh", "-c", script, sys.executable, FILE_READ_ONLY_PROBE, path]
    else:
        os.chmod(path, 0o444)
        cmd = [sys.executable, "-c", FILE_READ_ONLY_PROBE, path]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("PermissionError") and "cannot be written" in r.stdout, r.stdout


def test_another_process_closing_the_store_leaves_this_process_s_connections_working(tmp_path):
    """A LangChain middleware made per call on the store ``scwo crush --store`` also writes to: the
    fourth failed with "disk I/O error". Opening a store read the file's header with ``open()``, and
    closing that file dropped every POSIX lock this process's connections held on it; the other
    process, closing last as far as the locks said, deleted the WAL under them."""
    import subprocess
    import sys

    path = tmp_path / "s.sqlite"
    other = "import sys; from scwo_np.anchor import CrushStore; s = CrushStore(sys.argv[1]); s.put(['1', '2']); s.close()"
    held = []
    for i in range(6):
        subprocess.run([sys.executable, "-c", other, str(path)], check=True, timeout=120)
        store = CrushStore(path)
        held.append(store)
        key = store.put([str(i), str(i + 1), str(i + 2)])
        assert store.retrieve(key) == [i, i + 1, i + 2]
    for s in held:
        s.close()
