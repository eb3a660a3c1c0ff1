"""Numba compilation flags and the on-disk JIT cache, in one place.

Every kernel in the package is decorated with ``@njit(**JIT)`` or
``@njit(**PJIT)`` so that the flags can be audited and changed here.

``fastmath`` is deliberately off: selection results must be identical, to the
bit, across methods, machines and thread counts, and fast-math lets LLVM
reassociate floating-point sums differently on every target.

Where compiled kernels are cached
---------------------------------
Numba's default writes cache files into ``__pycache__`` beside the source,
that is into the installed package: pip does not know those files, so an
uninstall leaves ``site-packages/scwo_np/`` behind (a namespace package that
shadows a later editable install), and on a read-only install numba finds no
place at all and ``import scwo_np`` fails.  So scwo_np's kernels are cached in
a per-user directory instead, chosen in this order:

1. ``NUMBA_CACHE_DIR`` when set (numba's own setting; numba places the files);
2. ``SCWO_NP_CACHE_DIR`` when set;
3. the platform's user cache directory: ``$XDG_CACHE_HOME/scwo_np`` or
   ``~/.cache/scwo_np`` on Linux (``~/Library/Caches/scwo_np`` on macOS,
   ``%LOCALAPPDATA%\\scwo_np\\Cache`` on Windows).

Below it, one folder per scwo_np version, Python and numba version
(:func:`cache_dir` returns it; delete that folder to clear the cache).  When none of these can be
written, kernels are compiled in memory on first use in every process
(``cache=False``), which is slower to start but works anywhere.

A wheel built from source compiles the common entry points once at build
time (``scwo_np/_warmup.py``, called by ``setup.py``) and ships those cache
files as ``scwo_np/_jit_seed/``; the first use of a module copies its seed
into the user cache, so a fresh install does not compile them again.  Numba
checks every cached entry against the source's content hash, its own
version, the signature and the CPU, and recompiles whatever does not match,
so a stale or foreign seed costs only the compile time it would have saved.
Our locator adds the content of every module with kernels to that hash
(:func:`kernel_sources_stamp`): a kernel compiles in helpers from other
modules, and numba alone would keep running an edited helper's old code.
Under our folder, a kernel's code file is named by a hash of that stamp and
the signature, and written before the index that names it
(:func:`_install_safe_saves`): processes that compile at once (test workers,
Dask workers, an old process beside a new install) can lose each other's
index entries, which costs a recompile, but never load each other's code.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import tempfile

import numba

#: The package's own folder; only functions defined below it use our locator.
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
#: Cache files shipped in a wheel (made at build time; absent in a source tree).
SEED_DIR = os.path.join(_PKG_DIR, "_jit_seed")


def _version() -> str:
    from . import __version__

    return __version__


def _user_cache_root() -> str | None:
    """The scwo_np cache root before the per-version folder, or None if unknown."""
    env = os.environ.get("SCWO_NP_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    try:
        from numba.misc.appdirs import AppDirs

        return AppDirs(appname="scwo_np", appauthor=False).user_cache_dir
    except Exception:  # noqa: BLE001 - an unknown home is "no cache", not an error
        return None


def cache_dir() -> str | None:
    """The folder scwo_np's compiled kernels are cached in, or None when caching is off.

    With ``NUMBA_CACHE_DIR`` set this is numba's folder (numba arranges the
    files below it).  Delete the folder to clear the cache; it is rebuilt on
    first use.

    Examples
    --------
    >>> from scwo_np._config import cache_dir
    >>> cache_dir() is None or isinstance(cache_dir(), str)
    True
    """
    if not JIT["cache"]:
        return None
    if numba.config.CACHE_DIR:
        return numba.config.CACHE_DIR
    return _versioned_dir()


def _versioned_dir() -> str | None:
    root = _user_cache_root()
    if root is None:
        return None
    py = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(root, f"{_version()}-{py}-numba{numba.__version__}")


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


_seeded: set[str] = set()


def _copy_seed(module_rel: str, dest: str) -> None:
    """Copy the shipped cache files of one module's functions into ``dest``.

    A function's files are ``NAME.nbi`` (the index) and ``NAME.K.nbc`` (the
    code).  A function whose index is already in ``dest`` is left alone; for
    the others the code files are copied first and the index last, each to a
    temporary name and renamed, so a reader never sees an index without its
    code or a half-copied file.
    """
    if module_rel in _seeded:
        return
    _seeded.add(module_rel)
    src = os.path.join(SEED_DIR, module_rel)
    try:
        names = [n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n))]
    except OSError:
        return
    for index in (n for n in names if n.endswith(".nbi")):
        base = index[: -len(".nbi")]
        if os.path.exists(os.path.join(dest, index)):
            continue
        group = [n for n in names if n.startswith(base + ".") and n.endswith(".nbc")] + [index]
        try:
            for name in group:
                fd, tmp = tempfile.mkstemp(dir=dest, prefix=".seed-")
                os.close(fd)
                shutil.copyfile(os.path.join(src, name), tmp)
                os.replace(tmp, os.path.join(dest, name))
        except OSError:
            return


@functools.cache
def kernel_sources_stamp(pkg_dir: str = _PKG_DIR) -> str:
    """A hash of every module under ``pkg_dir`` that holds compiled code (``njit`` or
    ``intrinsic``), by relative path and content.

    Part of every cached kernel's source stamp (see :func:`_make_locator`):
    numba checks a cached kernel against its own file only, but the kernels
    call (and compile in) helpers from other modules, so after an edit of a
    helper a kernel loaded from the cache would run the old helper (wrong last
    bits, or a crash when an argument list changed).  With this stamp any edit
    of any kernel module recompiles every kernel on next use.  An installed
    package never changes, so its stamp (and the wheel's precompiled seed,
    built from the same files) stays valid.  Read once per process (~2 ms).
    """
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(pkg_dir):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if b"njit" in data or b"intrinsic" in data:
                h.update(os.path.relpath(path, pkg_dir).replace(os.sep, "/").encode())
                h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def _make_locator():
    """A numba cache locator for scwo_np's own functions (see the module docs)."""
    from numba.core import caching

    base = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    abstract = getattr(caching, "_CacheLocator", None)
    if base is None or abstract is None:  # a numba without this API: keep numba's default
        return None

    class ScwoCacheLocator(base, abstract):
        """Caches scwo_np's kernels in the per-user folder, never inside the package."""

        def __init__(self, py_func, py_file, path):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = path

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            """The function's own file (numba's stamp) and every kernel module's content."""
            return (super().get_source_stamp(), kernel_sources_stamp())

        @classmethod
        def from_function(cls, py_func, py_file):
            if numba.config.CACHE_DIR:  # the user's explicit setting wins
                return None
            path = os.path.abspath(py_file)
            if not path.startswith(_PKG_DIR + os.sep):
                return None
            root = _versioned_dir()
            if root is None:
                return None
            module_rel = os.path.relpath(os.path.dirname(path), _PKG_DIR)  # "." or "hsca"
            dest = os.path.normpath(os.path.join(root, module_rel))
            self = cls(py_func, path, dest)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            _copy_seed(module_rel, dest)
            return self

    return ScwoCacheLocator


def _install_locator() -> bool:
    """Put our locator first; return whether on-disk caching can work at all."""
    if numba.config.CACHE_DIR:
        return _writable(numba.config.CACHE_DIR)
    root = _versioned_dir()
    if root is None or not _writable(root):
        return False
    locator = _make_locator()
    if locator is None:
        # Old numba: its own locators (in-tree, then user-wide) decide.
        return os.access(os.path.join(_PKG_DIR, "__pycache__"), os.W_OK) or _writable(root)
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    classes = impl._locator_classes
    if not any(getattr(c, "__name__", "") == locator.__name__ for c in classes):
        classes.insert(0, locator)
    _install_safe_saves(caching, root)
    return True


def _install_safe_saves(caching, root: str) -> None:
    """Make numba's cache writes safe between processes, for the files under ``root`` only.

    Numba names a kernel's code files ``NAME.1.nbc``, ``NAME.2.nbc``... by their order in the
    index, and starts again at 1 when the index is stale.  Two processes that compile the same
    kernel at once (two pytest workers, two Dask workers, an old process beside a new install)
    can then write different code under one name, and an index can end up pointing at code
    compiled for another signature or another version of the source: a segmentation fault on
    the next load (seen in CI).  Under ``root`` the code file is instead named by a hash of the
    source stamp and the key, so a name only ever holds the code it names, and it is written
    before the index that points at it.  A lost index update costs a recompile, never wrong code.
    """
    cls = getattr(caching, "IndexDataCacheFile", None)
    if cls is None or hasattr(cls.save, "numbered"):
        return
    cls.save = _safe_save(cls.save, root)


def _safe_save(numbered, root: str):
    """``IndexDataCacheFile.save`` naming code files by hash under ``root`` (numba's ``numbered`` elsewhere)."""
    prefix = os.path.join(os.path.abspath(root), "")

    def save(self, key, data):
        if not os.path.join(os.path.abspath(self._cache_path), "").startswith(prefix):
            return numbered(self, key, data)
        digest = hashlib.sha256(self._dump((self._source_stamp, key))).hexdigest()[:24]
        name = f"{self._index_name[: -len('.nbi')]}.{digest}.nbc"
        self._save_data(name, data)
        overloads = self._load_index()
        overloads[key] = name
        self._save_index(overloads)

    save.numbered = numbered
    return save


_CACHE = _install_locator()

#: Flags for serial kernels.  ``cache`` is on whenever a writable cache folder
#: exists (see the module docs), so a fresh process does not recompile.
JIT: dict = {
    "cache": _CACHE,
    "fastmath": False,
    "boundscheck": False,
    "nogil": True,
    # IEEE semantics for x / 0 (inf/nan) instead of Python exceptions; inputs
    # are validated so it does not happen, and the kernels skip the checks.
    "error_model": "numpy",
}

#: Flags for kernels that use ``numba.prange`` across independent problems.
PJIT: dict = {**JIT, "parallel": True}

#: Flags for a serial kernel that its callers inline at Numba's IR level (one compiled function
#: less in their call tree: each level re-optimises what it links, and cold start pays for it);
#: it stays callable on its own.  ``select._driver._first_pass``: 0.5 s of a cold first call.
IJIT: dict = {**JIT, "inline": "always"}

#: Number of interleaved partial sums in every dot product, per precision
#: (see ``_dot``): one 64-byte vector of either type.  Part of the numerical
#: definition of a similarity: changing it changes the last bits of every
#: similarity, so it is a constant, not a setting.
LANES: dict = {"float32": 16, "float64": 8}
