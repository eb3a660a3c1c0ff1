"""``scwo bench --quality``: the methods on the bundled question sets and the user's own (``--set``), ``--plot``.

Part of the ``bench`` command (``_select`` registers it and its flags); here because the user's
sets and the plot made it a module's worth of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..bench import QUALITY_METHODS, format_quality, plot_quality, quality_at_budget, read_questions
from ..bench._plot import _figure_class
from ..datasets import QUESTION_SETS
from ._io import _closest, _out, _output_file, _token_counter


def _names(value: str, choices, opt: str) -> list[str]:
    out = [v.strip() for v in value.split(",")]
    bad = [v for v in out if v not in choices]
    if bad:
        raise SystemExit(
            f"scwo bench: --{opt} takes a comma-separated list of {', '.join(choices)}; {bad[0]!r} is not "
            f"one of them{_closest(bad[0], choices)}; got {value!r}"
        )
    return out


def _budgets(value: str | None) -> list[int]:
    """``--budgets 200,400,800``: positive integers, comma-separated, each once."""
    try:
        budgets = [int(b) for b in ("200,400,800" if value is None else value).split(",")]
    except ValueError:
        budgets = []
    if not budgets or min(budgets) < 1:
        raise SystemExit(f"scwo bench: --budgets takes positive integers like 200,400,800; got {value!r}")
    return list(dict.fromkeys(budgets))


def _user_sets(files: list[str]) -> list:
    """Each ``--set FILE`` read and checked before any work: a bad line is one line on stderr, status 2."""
    out = []
    for path in files:
        try:
            out.append(read_questions(path))
        except OSError as exc:
            raise SystemExit(f"scwo: cannot read --set {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise SystemExit(f"scwo: {exc}") from None
    return out


def _check_plot(path: str | None) -> None:
    """``--plot FILE``: a .png or .svg in a folder that exists, and matplotlib, before the benchmark runs."""
    if path is None:
        return
    if not path.lower().endswith((".png", ".svg")):
        raise SystemExit(f"scwo bench: --plot writes a .png or .svg file; got {path!r}")
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise SystemExit(f"scwo bench: cannot write --plot {path}: no such folder")
    try:
        _figure_class()
    except ImportError as exc:
        raise SystemExit(f"scwo: --plot: {exc}") from None


def _write_plot(rows: list[dict], path: str) -> None:
    """The figure written under a temporary name beside ``path`` and renamed: whole or not at all."""
    with _output_file(path, suffix=os.path.splitext(path)[1]) as name:
        plot_quality(rows, name)


def _bench_quality(args: argparse.Namespace) -> int:
    """``scwo bench --quality``: every method on the question sets, at each budget."""
    given = getattr(args, "set_order", [])  # the sets in the order given, the bundled ones without any
    if args.sets is not None:
        _names(args.sets, QUESTION_SETS, "sets")  # checked before any file is read
    from ..bench._peers import PEERS, with_peers

    methods = None if args.methods is None else _names(args.methods, [*QUALITY_METHODS, *PEERS], "methods")
    try:  # --peers: the installed ones too, a line for each one that is not; one named and missing: an error
        methods, skipped = with_peers(methods, args.peers, list(QUALITY_METHODS))
    except ImportError as exc:
        raise SystemExit(f"scwo bench: {exc}") from None
    sys.stderr.writelines(f"scwo bench: {line}\n" for line in skipped)
    budgets = _budgets(args.budgets)
    split = None if args.split == "both" else (args.split or "held_out")
    _check_plot(args.plot)
    counter = None if args.token_counter is None else _token_counter(args.token_counter)
    sets: list = []
    for option, value in given:  # (a bad file: one line on stderr, before any work)
        sets += _names(value, QUESTION_SETS, "sets") if option == "sets" else _user_sets([value])
    sets = sets or list(QUESTION_SETS)
    # --cache FILE for any embedder; by default the user's embedding cache for minilm; --no-cache: none.
    cache = False if args.no_cache else (args.cache or None)
    if args.embedder == "minilm" and not sys.stderr.isatty():  # minutes of silence on a first run, else
        sys.stderr.write(
            "scwo bench: embedding the texts with minilm: minutes for texts not in the cache, no progress bar "
            "(standard error is not a terminal)\n"
        )
    try:
        rows = quality_at_budget(
            sets, embedder=args.embedder or "lsa", budgets=budgets, methods=methods, split=split, cache=cache,
            progress=sys.stderr.isatty(), token_counter=counter,
        )  # fmt: skip
    except ValueError as exc:
        if not str(exc).startswith("no question has split"):
            raise
        said = str(exc).split("; pass split=")[0]  # the CLI's own spelling of the fix
        raise SystemExit(
            f"scwo bench: --split {split}{'' if args.split else ' (the default)'}: {said}; use another --split, "
            "or --split both."
        ) from None
    _out(json.dumps(rows, indent=1) if args.json else format_quality(rows))
    if args.plot is not None:
        _write_plot(rows, args.plot)
    return 0
