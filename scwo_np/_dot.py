"""Canonical dot products: one numerical definition, fast everywhere.

Every similarity in scwo_np is computed by the same recipe, so that every
selection method (NumPy, Numba, batched, the pure-Python reference) sees the
*same bits* and therefore breaks ties the same way.  All arithmetic is done
in the precision of the embeddings, float32 or float64 (a query is rounded
to that precision first):

1. element ``k`` is added into partial sum ``k % L`` in increasing ``k``, as
   ``acc[l] = acc[l] + x[k] * y[k]`` (two roundings, no fused multiply-add),
   with ``L = 16`` lanes for float32 and ``L = 8`` for float64;
2. the ``L`` partial sums are folded by halving:
   ``acc[l] = acc[l] + acc[l + w]`` for ``w = L/2, ..., 2, 1``;
3. the result is widened to float64, where norms (``sqrt``), cosines and
   scores are computed.

A plain left-to-right sum is not used because it cannot be vectorised without
reassociation; the recipe above is exactly what one 64-byte SIMD register
computes, so it runs at memory speed while staying deterministic on x86-64
and aarch64 alike.  float32 input is summed in float32, like BLAS ``sgemv``:
a cosine is then good to about ``1e-7`` (float32 embeddings carry no more),
and a pass costs one read of the matrix (converting every element to
float64 made the fused first pass of selection compute-bound, 1.6x slower).
``tests/naive.py`` implements the recipe in plain Python and the tests
compare to the bit.

Numba's SLP vectoriser is off by default and the loop vectoriser keeps the
partial sums in memory, so the loop is emitted directly as LLVM IR with
generic vectors (no target intrinsics) through ``numba.extending.intrinsic``.
Rows are streamed one at a time with a software prefetch ahead, and large
passes are split across threads with ``prange``; each row's value does not
depend on the split.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from ._config import JIT, LANES, PJIT

#: Passes over fewer elements than this (``n * d``) run on one thread: 2**27 (134 million, a
#: 512 MB float32 matrix).  A pass on threads waits for every thread at its end, and a thread
#: that finds its core taken waits for the scheduler's next slice (milliseconds).  Right after
#: any NumPy product, OpenBLAS's threads spin on the cores for a while, so on the 2-core VM an
#: ``mmr_select`` at n = 10,000, d = 384 took 4.5-6.5 ms on threads after ``E @ q`` against
#: 0.56 ms alone, and 0.71-0.73 ms on one thread either way; at n = 200,000 on threads 12.7 ms
#: alone and 21.9 ms after a product, on one thread 16 ms either way (2**21 until 2026-11-29).
PARALLEL_MIN_ELEMENTS = 1 << 27

#: How far ahead of the current element a streaming pass prefetches.
PREFETCH_BYTES = 4096

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F64 = ir.DoubleType()


def _fold(builder: ir.IRBuilder, vec: ir.Value, width: int) -> ir.Value:
    """Halving fold of a ``<width x double>`` vector to a scalar."""
    while width > 1:
        width //= 2
        lo = builder.shuffle_vector(vec, vec, ir.Constant(ir.VectorType(_I32, width), list(range(width))))
        hi = builder.shuffle_vector(
            vec,
            vec,
            ir.Constant(ir.VectorType(_I32, width), list(range(width, 2 * width))),
        )
        vec = builder.fadd(lo, hi)
    return builder.extract_element(vec, ir.Constant(_I32, 0))


def _prefetch(builder: ir.IRBuilder, ptr: ir.Value) -> None:
    """``llvm.prefetch`` (read, keep in all levels): a hint, never a fault."""
    i8p = ir.IntType(8).as_pointer()
    try:
        fn = builder.module.get_global("llvm.prefetch.p0")
    except KeyError:
        fn = ir.Function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, _I32, _I32, _I32]), "llvm.prefetch.p0"
        )
    builder.call(
        fn, [builder.bitcast(ptr, i8p), ir.Constant(_I32, 0), ir.Constant(_I32, 3), ir.Constant(_I32, 1)]
    )


def _make_dot_rows(
    nrows: int,
    with_norms: bool,
    many_vectors: bool = False,
    stream: bool = False,
    tile_cols: int = 0,
    widen: bool = False,
):
    """Build an intrinsic computing ``nrows`` canonical dot products at once.

    ``many_vectors=False``: ``f(E, row0, v) -> tuple`` returns
    ``E[row0 + r] . v`` for ``r < nrows`` as a ``UniTuple(float64, nrows)``;
    with ``with_norms`` also the squared norms ``E[row0 + r] . E[row0 + r]``
    as a second tuple.  ``nrows > 1`` interleaves rows in one loop; for a
    pass over a matrix it measured slower than streaming single rows.

    ``many_vectors=True``: ``f(E, i, V, j0) -> tuple`` returns
    ``E[i] . V[j0 + r]`` for ``r < nrows`` (``V`` a C-contiguous 2-D array of
    ``E``'s type with ``E.shape[1]`` columns).  One row against several vectors keeps
    ``nrows`` independent accumulators in flight, which is what re-scoring a
    candidate against several picks needs (a single dot is add-latency bound).

    With ``with_norms`` it also returns ``(E[i] . E[i],)``, so one read of a
    row gives its dot products with a query, a candidate and itself (the
    fused first pass of selection).

    ``tile_cols=c`` (with ``many_vectors``): ``f(E, i0, V, j0) -> tuple``
    returns the ``nrows x c`` tile ``E[i0 + a] . V[j0 + b]`` in row-major
    order, ``nrows * c`` independent accumulators fed by ``nrows + c`` loads
    per block: the register-tiled kernel of a Gram matrix, where one row
    against one vector would be add-latency bound.

    ``widen=True`` (one row against one vector): ``f(E, i, u)`` with ``u``
    float64 computes ``E[i] . u`` in float64, each element of ``E`` widened
    first, in 8 lanes (element ``k`` into lane ``k % 8``) folded in halves:
    the float64 recipe of ``select/_common._dot_row64``, in vector registers
    (numba's own loop keeps eight scalar sums).

    ``stream=True`` adds a software prefetch :data:`PREFETCH_BYTES` ahead of
    the row being read, for passes that walk ``E`` row after row: the dot
    loop is add-latency bound, so the hardware prefetcher alone falls behind
    (measured: a pass went from 1.3x to 1.0x the time of ``E @ q``).  Leave it
    off for rows read in random order.

    ``E`` is a C-contiguous 2-D float32/float64 array, ``v`` a C-contiguous
    vector of the same type and length ``E.shape[1]``; results are float64.
    Nothing is checked (the typing refuses a ``v`` of another type).
    """
    tup = types.UniTuple(types.float64, nrows * tile_cols if tile_cols else nrows)
    ntup = types.UniTuple(types.float64, 1 if many_vectors else nrows)
    ret = types.Tuple((tup, ntup)) if with_norms else tup

    def codegen(context, builder, signature, args):
        e_ty, v_ty = signature.args[0], signature.args[2]
        e_arr = context.make_array(e_ty)(context, builder, args[0])
        v_arr = context.make_array(v_ty)(context, builder, args[2])
        row0 = args[1]
        # Everything is computed in the precision of E (float32 or float64):
        # ``L`` lanes of that type, one 64-byte vector; results widen to float64.
        # (``widen``: E's elements widen to float64 as they are loaded; 8 lanes.)
        x_elt = context.get_data_type(e_ty.dtype)
        x_align = 4 if e_ty.dtype == types.float32 else 8
        elt = _F64 if widen else x_elt
        L = 8 if widen else LANES[str(e_ty.dtype)]
        vec_d = ir.VectorType(elt, L)
        vec_x = ir.VectorType(x_elt, L)
        d = builder.extract_value(e_arr.shape, 1)
        nblk = builder.sdiv(d, ir.Constant(_I64, L))
        tail0 = builder.mul(nblk, ir.Constant(_I64, L))
        rem = builder.sub(d, tail0)

        def row_ptr(data, row):
            return builder.gep(data, [builder.mul(row, d)])

        if tile_cols:
            x_bases = [row_ptr(e_arr.data, builder.add(row0, ir.Constant(_I64, a))) for a in range(nrows)]
            y_bases = [
                row_ptr(v_arr.data, builder.add(args[3], ir.Constant(_I64, b))) for b in range(tile_cols)
            ]
            pairs = [(a, b) for a in range(nrows) for b in range(tile_cols)]
        elif many_vectors:
            x_bases = [row_ptr(e_arr.data, row0)]
            y_bases = [row_ptr(v_arr.data, builder.add(args[3], ir.Constant(_I64, r))) for r in range(nrows)]
            pairs = [(0, r) for r in range(nrows)]
        else:
            x_bases = [row_ptr(e_arr.data, builder.add(row0, ir.Constant(_I64, r))) for r in range(nrows)]
            y_bases = [v_arr.data]
            pairs = [(r, 0) for r in range(nrows)]
        if with_norms:  # squared norms: x against itself
            pairs += [(r, None) for r in range(len(x_bases))]
        nacc = len(pairs)
        zero = ir.Constant(vec_d, [0.0] * L)

        def load(base, k, vector, x=True):
            vt, et, align = (vec_x, x_elt, x_align) if x else (vec_d, elt, 8 if widen else x_align)
            if vector:
                val = builder.load(builder.bitcast(builder.gep(base, [k]), vt.as_pointer()), align=align)
            else:
                val = builder.load(builder.gep(base, [k]), align=align)
            if widen and x and x_elt != elt:
                val = builder.fpext(val, vec_d if vector else elt)
            return val

        def loads(k, vector):
            """Load block/element ``k`` of every x and y operand."""
            xs = [load(base, k, vector) for base in x_bases]
            ys = [load(base, k, vector, x=False) for base in y_bases]
            return [(xs[a], xs[a] if b is None else ys[b]) for a, b in pairs]

        fn = builder.function
        pre = builder.block
        head = fn.append_basic_block("dot.head")
        body = fn.append_basic_block("dot.body")
        builder.branch(head)

        builder.position_at_end(head)
        blk = builder.phi(_I64)
        accs = [builder.phi(vec_d) for _ in range(nacc)]
        blk.add_incoming(ir.Constant(_I64, 0), pre)
        for a in accs:
            a.add_incoming(zero, pre)
        tail_blocks = [fn.append_basic_block(f"dot.tail{j}") for j in range(L)]
        builder.cbranch(builder.icmp_signed("<", blk, nblk), body, tail_blocks[0])

        builder.position_at_end(body)
        off = builder.mul(blk, ir.Constant(_I64, L))
        if stream:
            ahead = ir.Constant(_I64, PREFETCH_BYTES // x_align)
            for base in x_bases:
                _prefetch(builder, builder.gep(base, [builder.add(off, ahead)]))
        new = [
            builder.fadd(acc, builder.fmul(x, y)) for acc, (x, y) in zip(accs, loads(off, True), strict=True)
        ]
        blk.add_incoming(builder.add(blk, ir.Constant(_I64, 1)), builder.block)
        for a, n in zip(accs, new, strict=True):
            a.add_incoming(n, builder.block)
        builder.branch(head)

        # Tail: element ``tail0 + j`` goes into lane ``j`` for ``j < rem``.
        # Blocks tail0 .. tail{L-2} each add one element or jump to the
        # fold block tail{L-1}, which merges every path with phi nodes.
        to_fold = []
        incoming = [(head, list(accs))]
        for j in range(L - 1):
            builder.position_at_end(tail_blocks[j])
            cur = [builder.phi(vec_d) for _ in range(nacc)]
            for src, vals in incoming:
                for p, val in zip(cur, vals, strict=True):
                    p.add_incoming(val, src)
            do = fn.append_basic_block(f"dot.tail{j}.do")
            builder.cbranch(
                builder.icmp_signed("<", ir.Constant(_I64, j), rem),
                do,
                tail_blocks[L - 1],
            )
            to_fold.append((tail_blocks[j], cur))
            builder.position_at_end(do)
            lane = ir.Constant(_I32, j)
            upd = []
            for acc, (x, y) in zip(cur, loads(builder.add(tail0, ir.Constant(_I64, j)), False), strict=True):
                part = builder.extract_element(acc, lane)
                upd.append(builder.insert_element(acc, builder.fadd(part, builder.fmul(x, y)), lane))
            builder.branch(tail_blocks[j + 1])
            incoming = [(builder.block, upd)]

        builder.position_at_end(tail_blocks[L - 1])
        final = [builder.phi(vec_d) for _ in range(nacc)]
        for src, vals in to_fold + incoming:
            for p, val in zip(final, vals, strict=True):
                p.add_incoming(val, src)

        outs = [_fold(builder, final[a], L) for a in range(nacc)]
        if elt != _F64:
            outs = [builder.fpext(o, _F64) for o in outs]

        def pack(vals, ty):
            t = ir.Constant(context.get_value_type(ty), ir.Undefined)
            for idx, val in enumerate(vals):
                t = builder.insert_value(t, val, idx)
            return t

        if not with_norms:  # (always so with ``tile_cols``)
            return pack(outs, tup)
        res = ir.Constant(context.get_value_type(ret), ir.Undefined)
        res = builder.insert_value(res, pack(outs[:nrows], tup), 0)
        return builder.insert_value(res, pack(outs[nrows:], ntup), 1)

    def is_matrix(E):
        return isinstance(E, types.Array) and E.ndim == 2 and E.dtype in (types.float32, types.float64)

    if many_vectors:

        @intrinsic
        def dot_vectors(typingctx, E, i, V, j0):
            if not (is_matrix(E) and is_matrix(V) and V.dtype == E.dtype):
                return None
            return ret(E, types.intp, V, types.intp), codegen

        return dot_vectors

    @intrinsic
    def dot_rows(typingctx, E, row0, v):
        want = types.float64 if widen else getattr(E, "dtype", None)
        if not (is_matrix(E) and isinstance(v, types.Array) and v.dtype == want):
            return None
        return ret(E, types.intp, v), codegen

    return dot_rows


_dot1 = _make_dot_rows(1, False)
_dotnorm1 = _make_dot_rows(1, True)
#: The same recipes with a prefetch ahead, for passes over consecutive rows.
_dot1s = _make_dot_rows(1, False, stream=True)
_dotnorm1s = _make_dot_rows(1, True, stream=True)
#: One row against 2 or 4 consecutive rows of a matrix (re-scoring a
#: candidate against several picks): 2-4 independent accumulator chains
#: instead of one, ~1.5-2x faster per dot than ``_dot1`` in cache.
_dotv2 = _make_dot_rows(2, False, many_vectors=True)
_dotv4 = _make_dot_rows(4, False, many_vectors=True)
#: Four consecutive rows against one vector: four independent chains (a pass whose
#: rows are in cache, where one row at a time is add-latency bound).
_dot4r = _make_dot_rows(4, False)
_dot4rs = _make_dot_rows(4, False, stream=True)
#: ``E[i] . u`` in float64 (``u`` float64, ``E``'s elements widened), 8 lanes.
_dotw1 = _make_dot_rows(1, False, widen=True)
#: A 4 x 4 tile of rows against rows (16 accumulators: a Gram matrix's block).
_dot4x4 = _make_dot_rows(4, False, many_vectors=True, tile_cols=4)
#: One row against two vectors (query, candidate) plus its own squared norm.
_dotv2norm = _make_dot_rows(2, True, many_vectors=True, stream=True)


@intrinsic
def _prefetch_row(typingctx, E, i):
    """Prefetch every cache line of row ``i`` of ``E`` (a hint: never a fault, no result).

    For a row that will be read soon at a random place (the lazy heap's next
    candidate), so its loads find it in L1 instead of waiting on L2/L3.
    """
    if not (isinstance(E, types.Array) and E.ndim == 2 and E.dtype in (types.float32, types.float64)):
        return None

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        d = builder.extract_value(arr.shape, 1)
        size = 4 if signature.args[0].dtype == types.float32 else 8
        row = builder.gep(arr.data, [builder.mul(args[1], d)])
        step = ir.Constant(_I64, 64 // size)
        fn = builder.function
        pre = builder.block
        head = fn.append_basic_block("pf.head")
        body = fn.append_basic_block("pf.body")
        done = fn.append_basic_block("pf.done")
        builder.branch(head)
        builder.position_at_end(head)
        k = builder.phi(_I64)
        k.add_incoming(ir.Constant(_I64, 0), pre)
        builder.cbranch(builder.icmp_signed("<", k, d), body, done)
        builder.position_at_end(body)
        _prefetch(builder, builder.gep(row, [k]))
        k.add_incoming(builder.add(k, step), body)
        builder.branch(head)
        builder.position_at_end(done)
        return context.get_dummy_value()

    return types.none(E, types.intp), codegen


if numba.config.DISABLE_JIT:  # pragma: no cover - coverage mode only
    # Intrinsics cannot run in the interpreter; the same recipe with NumPy
    # scalars of E's type (their arithmetic rounds like the vector code).
    def _lanes(E, i, v, with_norms):
        L = LANES[E.dtype.name]
        zero = E.dtype.type(0)
        acc = [zero] * L
        nacc = [zero] * L
        for k in range(E.shape[1]):
            x = E[i, k]
            acc[k % L] = acc[k % L] + x * v[k]
            nacc[k % L] = nacc[k % L] + x * x
        w = L
        while w > 1:
            w //= 2
            for lane in range(w):
                acc[lane] = acc[lane] + acc[lane + w]
                nacc[lane] = nacc[lane] + nacc[lane + w]
        return ((float(acc[0]),), (float(nacc[0]),)) if with_norms else (float(acc[0]),)

    def _dot1(E, i, v):  # noqa: F811
        return _lanes(E, i, v, False)

    def _dotnorm1(E, i, v):  # noqa: F811
        return _lanes(E, i, v, True)

    def _dotv2(E, i, V, j0):  # noqa: F811
        return tuple(_lanes(E, i, V[j0 + r], False)[0] for r in range(2))

    def _dotv4(E, i, V, j0):  # noqa: F811
        return tuple(_lanes(E, i, V[j0 + r], False)[0] for r in range(4))

    def _dot4r(E, i, v):  # noqa: F811
        return tuple(_lanes(E, i + r, v, False)[0] for r in range(4))

    _dot4rs = _dot4r

    def _dotw1(E, i, u):  # noqa: F811
        acc = [0.0] * 8
        for k in range(E.shape[1]):
            acc[k % 8] = acc[k % 8] + float(E[i, k]) * float(u[k])
        w = 8
        while w > 1:
            w //= 2
            for lane in range(w):
                acc[lane] = acc[lane] + acc[lane + w]
        return (acc[0],)

    def _dot4x4(E, i0, V, j0):  # noqa: F811
        return tuple(_lanes(E, i0 + a, V[j0 + b], False)[0] for a in range(4) for b in range(4))

    _dot1s = _dot1
    _dotnorm1s = _dotnorm1

    def _prefetch_row(E, i):  # noqa: F811
        return None

    def _dotv2norm(E, i, V, j0):  # noqa: F811
        a, (nn,) = _lanes(E, i, V[j0], True)
        return (a[0], _lanes(E, i, V[j0 + 1], False)[0]), (nn,)


@njit(**JIT)
def _dot_row(E, i, v):
    """Canonical ``E[i] . v`` (``v`` of ``E``'s type, same length as a row)."""
    return _dot1(E, i, v)[0]


@njit(**JIT)
def _dots_range(E, v, out, start, stop):
    for i in range(start, stop):
        out[i] = _dot1s(E, i, v)[0]


@njit(**JIT)
def _dots_norms_range(E, v, dots, norms, start, stop):
    for i in range(start, stop):
        t = _dotnorm1s(E, i, v)
        dots[i] = t[0][0]
        norms[i] = np.sqrt(t[1][0])


@njit(**JIT)
def _dots_serial(E, v, out):
    """``out[i] = E[i] . v`` for every row, canonical order, one thread."""
    _dots_range(E, v, out, 0, E.shape[0])


@njit(**JIT)
def _dots_norms_serial(E, v, dots, norms):
    """``dots[i] = E[i] . v`` and ``norms[i] = sqrt(E[i] . E[i])``, one pass."""
    _dots_norms_range(E, v, dots, norms, 0, E.shape[0])


@njit(**PJIT)
def _dots_parallel(E, v, out, nchunks):
    n = E.shape[0]
    for c in prange(nchunks):
        _dots_range(E, v, out, c * n // nchunks, (c + 1) * n // nchunks)


@njit(**PJIT)
def _dots_norms_parallel(E, v, dots, norms, nchunks):
    n = E.shape[0]
    for c in prange(nchunks):
        _dots_norms_range(E, v, dots, norms, c * n // nchunks, (c + 1) * n // nchunks)


@njit(**JIT)
def _cosines_range(E, v, nrm, vnorm, out, start, stop):
    for i in range(start, stop):
        out[i] = _dot1s(E, i, v)[0] / (nrm[i] * vnorm)


@njit(**JIT)
def _cosines_range4(E, v, nrm, vnorm, out, start, stop):
    """:func:`_cosines_range`, four rows at a time (four independent sums, the same bits): for
    short runs of rows, where one row at a time is add-latency bound."""
    i = start
    while i + 4 <= stop:
        t = _dot4rs(E, i, v)
        for r in range(4):
            out[i + r] = t[r] / (nrm[i + r] * vnorm)
        i += 4
    _cosines_range(E, v, nrm, vnorm, out, i, stop)


@njit(**PJIT)
def _cosines_parallel(E, v, nrm, vnorm, out, nchunks):
    n = E.shape[0]
    for c in prange(nchunks):
        _cosines_range(E, v, nrm, vnorm, out, c * n // nchunks, (c + 1) * n // nchunks)


def _nchunks(E: np.ndarray) -> int:
    """Chunks for a parallel pass, or 0 for a serial one."""
    if E.shape[0] * E.shape[1] < PARALLEL_MIN_ELEMENTS or numba.get_num_threads() < 2:
        return 0
    return 8 * numba.get_num_threads()


def dots(E: np.ndarray, v: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Canonical ``E @ v`` (float64), threaded for large ``E``. Unvalidated."""
    out = np.empty(E.shape[0]) if out is None else out
    nch = _nchunks(E)
    if nch:
        _dots_parallel(E, v, out, nch)
    else:
        _dots_serial(E, v, out)
    return out


def dots_norms(E: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonical ``E @ v`` and row norms in one pass. Unvalidated."""
    d = np.empty(E.shape[0])
    nr = np.empty(E.shape[0])
    nch = _nchunks(E)
    if nch:
        _dots_norms_parallel(E, v, d, nr, nch)
    else:
        _dots_norms_serial(E, v, d, nr)
    return d, nr


def cosines(E: np.ndarray, v: np.ndarray, nrm: np.ndarray, vnorm: float) -> np.ndarray:
    """``(E @ v) / (nrm * vnorm)`` element by element, canonical, one pass. Unvalidated."""
    out = np.empty(E.shape[0])
    nch = _nchunks(E)
    if nch:
        _cosines_parallel(E, v, nrm, vnorm, out, nch)
    else:
        _cosines_range(E, v, nrm, vnorm, out, 0, E.shape[0])
    return out


def dots_numpy(E: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The canonical dot products ``E @ v`` with plain NumPy (no BLAS).

    Bit-identical to the Numba kernels: the canonical order written in NumPy, which
    ``tests/test_dot.py`` holds the kernels to.
    ``E`` is ``(n, d)`` float32/float64, ``v`` a vector of the same type.
    Returns float64.
    """
    n, d = E.shape
    L = LANES[E.dtype.name]
    acc = np.zeros((n, L), dtype=E.dtype)
    nblk = d // L
    for b in range(nblk):
        acc += E[:, b * L : (b + 1) * L] * v[b * L : (b + 1) * L]
    rem = d - nblk * L
    if rem:
        acc[:, :rem] += E[:, nblk * L :] * v[nblk * L :]
    w = L
    while w > 1:
        w //= 2
        acc = acc[:, :w] + acc[:, w : 2 * w]
    return acc[:, 0].astype(np.float64)


def query_cosines(E: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row's cosine with ``q`` and its norm, bit for bit as selection computes relevance.

    ``q`` is rounded to ``E``'s type; one canonical pass gives each row's dot with it and
    its norm, the query's norm is the canonical one, and the cosine is
    ``dot / (norm * qnorm)`` in float64: the relevance ``mmr_select`` ranks by (its gains
    at ``lam=1``), so a similarity reported beside a selection is the one it used.
    Unvalidated: ``E`` is a 2-D float32/float64 array, ``q`` a vector of its width; a
    zero row gives a NaN cosine and a zero norm.
    """
    E = np.ascontiguousarray(E)
    q = np.ascontiguousarray(q, dtype=E.dtype)
    d, nrm = dots_norms(E, q)
    qn = dots_norms(q.reshape(1, -1), q)[1][0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return d / (nrm * qn), nrm
