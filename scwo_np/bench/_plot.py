"""The rows of quality_at_budget drawn: a measure against the budget, one line per method, one panel per set.

matplotlib (the ``notebooks`` extra) is imported when a figure is asked for, never before.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..validation import check_method

__all__ = ["plot_quality"]

_MEASURES = ("hit", "share", "parts", "fill")
_SUFFIXES = (".png", ".svg")
#: Up to this many methods the legend sits in the first panel; more go beside the panels.
_INSIDE = 6
_STYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D")


def _style(k: int) -> dict[str, Any]:
    """The k-th method's line: ten colours, then the next line style and marker (no two alike up to 40)."""
    return {"color": f"C{k % 10}", "linestyle": _STYLES[k // 10 % 4], "marker": _MARKERS[k // 10 % 4]}


def _figure_class():
    """matplotlib's Figure, with ``_repr_png_`` so a notebook shows it without pyplot (imported at each call)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plot_quality draws with matplotlib, which is not installed: "
            "pip install 'scwo_np[notebooks]' (the notebooks extra)"
        ) from None

    class QualityFigure(Figure):
        def _repr_png_(self) -> bytes:  # IPython shows it when pyplot's inline display is not set up
            buf = io.BytesIO()
            self.savefig(buf, format="png", bbox_inches="tight")
            return buf.getvalue()

    return QualityFigure


def plot_quality(
    rows: Sequence[Mapping[str, Any]], path: str | os.PathLike | None = None, *, measure: str = "hit"
) -> Any:
    """Draw the rows of :func:`quality_at_budget`: a measure against the budget, one line per method.

    One panel per set and split, the budget (tokens) on a log axis; for ``hit``, the set's
    retrieval ceiling (the rows' ``ceiling``) as a dashed line.  Uses matplotlib's
    object-oriented API only (no ``pyplot``, no global state), so it works without a display
    and leaves no figure open; a notebook shows the figure returned.

    Parameters
    ----------
    rows : sequence of dict
        What :func:`quality_at_budget` returned (or those rows read back from its JSON).
    path : str or path-like, optional
        Also write the figure there: a ``.png`` or ``.svg`` file.
    measure : {"hit", "share", "parts", "fill"}
        The measure on the vertical axis.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (show it in a notebook, or ``savefig`` it in another format).

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install 'scwo_np[notebooks]'``).
    ValueError
        No rows, a row without the fields the plot needs, an unknown measure, or a path that
        does not end in ``.png`` or ``.svg``.

    Examples
    --------
    >>> rows = [{"set": "mine", "split": "held_out", "method": m, "budget": b, "n": 10,
    ...          "hit": h, "ceiling": 0.9}
    ...         for m, hits in (("top-k", (0.5, 0.7)), ("sentences", (0.6, 0.8)))
    ...         for b, h in zip((200, 400), hits)]
    >>> fig = plot_quality(rows)
    >>> [ax.get_title() for ax in fig.axes]
    ['mine (held_out, 10 questions)']
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['top-k', 'sentences', 'retrieval ceiling']
    """
    check_method(measure, _MEASURES, name="measure")
    if path is not None:
        if isinstance(path, bool) or not isinstance(path, str | os.PathLike):
            raise TypeError(f"path must be a .png or .svg file name; got {type(path).__name__}")
        if not os.fspath(path).lower().endswith(_SUFFIXES):
            raise ValueError(f"path must end in .png or .svg; got {os.fspath(path)!r}")
    if isinstance(rows, Mapping) or not isinstance(rows, Sequence) or not rows:
        raise ValueError("rows must be the non-empty list quality_at_budget returned")
    for k, r in enumerate(rows):
        missing = [f for f in ("set", "split", "method", "budget", measure) if f not in r]
        if missing:
            raise ValueError(f"rows[{k}] has no {missing[0]!r}; pass the rows quality_at_budget returned")
    Figure = _figure_class()
    groups: dict[tuple[str, str], list] = {}
    for r in rows:
        groups.setdefault((r["set"], r["split"]), []).append(r)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    ncols = min(len(groups), 3)
    nrows = -(-len(groups) // ncols)
    beside = len(methods) > _INSIDE  # a legend that would cover the lines goes beside the panels
    fig = Figure(
        figsize=(4.4 * ncols + 2.4 * beside, max(3.4 * nrows, 0.2 * len(methods) + 0.8 * beside)),
        layout="constrained",
    )
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    budgets = sorted({r["budget"] for r in rows})
    style = {m: _style(k) for k, m in enumerate(methods)}  # the same in every panel
    handles: dict[str, Any] = {}
    for ax, ((name, split), rs) in zip(axes.flat, groups.items(), strict=False):
        for method in dict.fromkeys(r["method"] for r in rs):
            pts = sorted((r["budget"], r[measure]) for r in rs if r["method"] == method)
            (handles[method],) = ax.plot(
                [b for b, _ in pts], [v for _, v in pts], label=method, **style[method]
            )
        if measure == "hit" and "ceiling" in rs[0]:
            handles["retrieval ceiling"] = ax.axhline(
                rs[0]["ceiling"], color="0.5", linestyle="--", linewidth=1, label="retrieval ceiling"
            )
        n = f", {rs[0]['n']} questions" if "n" in rs[0] else ""
        ax.set_title(f"{name} ({split}{n})", fontsize=10)
        ax.set_xscale("log")
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.minorticks_off()
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("budget (tokens)")
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(groups) :]:
        ax.remove()
    for ax in axes[:, 0]:
        ax.set_ylabel(measure)
    if beside:
        fig.legend(list(handles.values()), list(handles), loc="outside right upper", fontsize=8)
    else:
        axes.flat[0].legend(fontsize=8, loc="lower right")
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
