"""The installed package is never written to, and works where it cannot be.

Numba's default cache writes into ``__pycache__`` beside the sources: pip does
not know those files, so they outlive an uninstall (and the leftover folder
shadows a later editable install), and on a read-only install numba finds no
cache location at all.  These tests run real processes against the package as
installed (``scwo_np.__file__``), once with the package folder made read-only
by a read-only bind mount in a private mount namespace (as root) or by
``chmod`` on a copy (as any other user).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import scwo_np

PKG = Path(scwo_np.__file__).resolve().parent

# Small and quick to compile (dedup's kernels; mmr_select's take longer, see SELECT).
WORK = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import scwo_np
    from scwo_np import truncate
    from scwo_np._config import JIT, cache_dir
    from scwo_np.dedup import deduplicate
    pkg = os.path.dirname(scwo_np.__file__)
    try:
        open(os.path.join(pkg, "probe.tmp"), "w").close()
        os.remove(os.path.join(pkg, "probe.tmp"))
        writable = True
    except OSError:
        writable = False
    assert truncate([3, 3, 3], 7).tolist() == [0, 1]
    assert deduplicate(["alpha beta gamma", "alpha beta gamma", "delta epsilon zeta"]).keep.tolist() == [0, 2]
    print(writable, JIT["cache"], cache_dir())
    """
)
SELECT = textwrap.dedent(
    """
    from scwo_np import mmr_select
    E = np.eye(4) + 0.1
    assert mmr_select(E, E[0], [1, 1, 1, 1], 2, lam=1.0).tolist() == [0, 1]
    """
)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "SCWO_NP_"))}
    env.update(extra)
    return env


def _nb_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.suffix in (".nbi", ".nbc") and "_jit_seed" not in p.parts]


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def _read_only_command(code: str) -> tuple[list[str], dict[str, str]] | None:
    """A command running ``code`` with ``PKG`` read-only, or None when that cannot be arranged."""
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            return None
        script = f'mount --bind "{PKG}" "{PKG}" && mount -o remount,bind,ro "{PKG}" && exec "$0" -c "$1"'
        probe = _run(["unshare", "-m", "sh", "-c", script, sys.executable, "pass"], _clean_env())
        if probe.returncode != 0:
            return None
        return ["unshare", "-m", "sh", "-c", script, sys.executable, code], {}
    return [sys.executable, "-c", code], {"_chmod": "1"}


def test_kernels_are_cached_outside_the_package(tmp_path):
    before = set(_nb_files(PKG))
    cache = tmp_path / "cache"
    r = _run([sys.executable, "-c", WORK], _clean_env(SCWO_NP_CACHE_DIR=str(cache)))
    assert r.returncode == 0, r.stderr
    writable, cached, where = r.stdout.split(None, 2)
    assert cached == "True"
    assert where.strip().startswith(str(cache))
    assert set(_nb_files(PKG)) == before, "a kernel was cached inside the installed package"
    assert list(cache.rglob("*.nbi")), "nothing was cached in the per-user folder"
    # A second process loads what the first one wrote.
    r2 = _run([sys.executable, "-c", WORK], _clean_env(SCWO_NP_CACHE_DIR=str(cache)))
    assert r2.returncode == 0, r2.stderr


def test_numba_cache_dir_wins(tmp_path):
    r = _run([sys.executable, "-c", WORK], _clean_env(NUMBA_CACHE_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split(None, 2)[2].strip() == str(tmp_path)
    assert list(tmp_path.rglob("*.nbi"))


@pytest.mark.parametrize("user_cache", ["writable", "read-only"])
def test_read_only_install(tmp_path, user_cache):
    arranged = _read_only_command(WORK + (SELECT if user_cache == "read-only" else ""))
    if arranged is None:
        pytest.skip("cannot make the package read-only here (no mount namespace for root)")
    cmd, how = arranged
    ro_cache = tmp_path / "ro-cache"
    ro_cache.mkdir()
    env = _clean_env(HOME=str(tmp_path / "home"))
    if user_cache == "writable":
        env["SCWO_NP_CACHE_DIR"] = str(tmp_path / "cache")
    else:
        # Nowhere to write: a cache folder inside the read-only package.
        env["SCWO_NP_CACHE_DIR"] = str(PKG / "no-such-cache")
        env["XDG_CACHE_HOME"] = str(PKG / "no-such-cache")
    if how.get("_chmod"):
        copy = tmp_path / "site" / "scwo_np"
        shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("__pycache__", "_jit_seed"))
        for p in [copy, *copy.rglob("*")]:
            p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        env["PYTHONPATH"] = str(copy.parent)
        if user_cache == "read-only":
            env["SCWO_NP_CACHE_DIR"] = env["XDG_CACHE_HOME"] = str(copy / "no-such-cache")
    before = set(_nb_files(PKG))
    r = _run(cmd, env)
    assert r.returncode == 0, r.stderr
    writable, cached, where = r.stdout.split(None, 2)
    assert writable == "False", "the package was not read-only in the test process"
    if user_cache == "writable":
        assert cached == "True" and list((tmp_path / "cache").rglob("*.nbi"))
    else:
        assert (cached, where.strip()) == ("False", "None")
    assert set(_nb_files(PKG)) == before


# A kernel in one module (_driver) whose code comes partly from another (_dot).
CACHE_PROBE = textwrap.dedent(
    """
    import numpy as np
    from scwo_np.select._driver import _row_norm
    assert _row_norm(np.ones((1, 4)), 0) == 2.0
    s = _row_norm.stats
    print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))
    """
)


def test_an_edit_of_any_kernel_module_recompiles_the_cached_kernels(tmp_path):
    """Numba checks a cached kernel against its own file only; ours also against every module
    with kernels, so an edited helper is never run from a stale cache (a crash or wrong bits)."""
    copy = tmp_path / "pkg" / "scwo_np"
    shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("__pycache__", "_jit_seed"))
    env = _clean_env(SCWO_NP_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(tmp_path / "pkg"))

    def hits_and_misses() -> tuple[int, int]:
        cmd = [sys.executable, "-c", CACHE_PROBE]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return tuple(int(x) for x in r.stdout.split())

    def append(path: Path, line: str) -> None:
        path.write_text(path.read_text() + line)

    assert hits_and_misses() == (0, 1)  # compiled
    assert hits_and_misses() == (1, 0)  # loaded from the cache
    append(copy / "cli" / "_main.py", "\n# a module without kernels\n")
    assert hits_and_misses() == (1, 0)
    append(copy / "_dot.py", "\n# an edit of the helpers' module\n")
    assert hits_and_misses() == (0, 1)  # recompiled, though _driver.py is unchanged
    assert hits_and_misses() == (1, 0)


def test_two_processes_saving_one_kernel_never_leave_an_index_pointing_at_other_code(tmp_path, monkeypatch):
    """Numba numbers a kernel's code files by index order and starts at 1 again on a stale index,
    so two processes compiling one kernel at once (another signature, or another source version)
    could each write ``NAME.1.nbc`` and one index end up naming the other's code: a segmentation
    fault on the next load (seen in CI).  Under our cache folder each code file is named by a hash
    of the source stamp and the key, and written before the index."""
    from numba.core import caching

    import scwo_np._config as config

    root = str(tmp_path / "cache")
    numbered = getattr(caching.IndexDataCacheFile.save, "numbered", caching.IndexDataCacheFile.save)
    monkeypatch.setattr(caching.IndexDataCacheFile, "save", config._safe_save(numbered, root))
    old = caching.IndexDataCacheFile(root, "f-1.py311", ("stamp", "old source"))
    new = caching.IndexDataCacheFile(root, "f-1.py311", ("stamp", "new source"))
    os.makedirs(root)
    key = ("sig", "magic")
    # Interleaved as two processes may: the old writer's index lands after the new writer's whole save.
    real_save_index = old._save_index

    def late_index(overloads):
        new.save(key, "new code")
        real_save_index(overloads)

    old._save_index = late_index
    old.save(key, "old code")
    assert old.load(key) == "old code" and new.load(key) is None  # a miss (a recompile), never other code
    # numba's own numbering, for contrast: the same interleaving leaves the old index on the new code
    monkeypatch.setattr(caching.IndexDataCacheFile, "save", numbered)
    root2 = str(tmp_path / "numbered")
    os.makedirs(root2)
    old = caching.IndexDataCacheFile(root2, "f-1.py311", ("stamp", "old source"))
    new = caching.IndexDataCacheFile(root2, "f-1.py311", ("stamp", "new source"))
    real_save_data = old._save_data

    def late_data(name, data):
        new.save(key, "new code")
        real_save_data(name, data)

    old._save_data = late_data
    old.save(key, "old code")
    assert new.load(key) == "old code"  # what _safe_save prevents
