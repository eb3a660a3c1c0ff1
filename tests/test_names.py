"""One name per idea: the renamed-keyword helper, and the public vocabulary it serves.

``budget`` for every token budget or ceiling, ``token_counter`` for the token counter,
``query`` for the question (text or vector).  Old names keep working for one minor
version with a ``DeprecationWarning`` (``scwo_np.validation.renamed_keywords``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import sys
import types
import warnings
from pathlib import Path

import pytest

from scwo_np.validation import DEPRECATED_SINCE, REMOVAL_IN, renamed_attributes, renamed_keywords


@renamed_keywords(max_tokens="budget", counter="token_counter")
def _fit(texts, budget=100, *, token_counter=None):
    """Fit ``texts`` into ``budget`` tokens."""
    return budget, token_counter


class _Thing:
    @renamed_keywords(question="query")
    def __init__(self, query="q", *, budget=1):
        self.query = query


def test_new_names_work_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _fit([], 5, token_counter=len) == (5, len)
        assert _fit([], budget=7) == (7, None)
        assert _Thing(query="x").query == "x"


def test_old_name_works_and_warns_at_the_callers_line():
    with pytest.warns(DeprecationWarning, match=r"'max_tokens' was renamed to 'budget' in ") as caught:
        line = inspect.currentframe().f_lineno + 1
        assert _fit([], max_tokens=50) == (50, None)
    (w,) = caught.list
    assert w.filename == __file__ and w.lineno == line
    assert DEPRECATED_SINCE in str(w.message) and REMOVAL_IN in str(w.message)
    assert "_fit()" in str(w.message)


def test_every_old_name_of_a_call_warns():
    with pytest.warns(DeprecationWarning) as caught:
        assert _fit([], max_tokens=3, counter=len) == (3, len)
    assert sorted("token_counter" in str(w.message) for w in caught.list) == [False, True]


def test_methods_and_constructors():
    with pytest.warns(DeprecationWarning, match="'question' was renamed to 'query'"):
        assert _Thing(question="why").query == "why"


def test_both_names_is_a_type_error_naming_both():
    with pytest.raises(TypeError, match=r"got both 'budget' and its old name 'max_tokens'"):
        _fit([], budget=1, max_tokens=2)
    with pytest.raises(TypeError, match=r"got both 'budget' and its old name 'max_tokens'"):
        _fit([], 1, max_tokens=2)  # the new one given by position
    with pytest.raises(TypeError, match=r"got both 'query' and its old name 'question'"):
        _Thing("q", question="why")  # self counts


def test_signature_and_docs_show_only_the_new_names():
    params = list(inspect.signature(_fit).parameters)
    assert params == ["texts", "budget", "token_counter"]
    assert _fit.__name__ == "_fit" and _fit.__doc__.startswith("Fit")
    assert _fit.__renamed_keywords__ == {"max_tokens": "budget", "counter": "token_counter"}
    assert list(inspect.signature(_Thing).parameters) == ["query", "budget"]


def test_a_mistaken_rename_fails_at_import_time():
    with pytest.raises(TypeError, match="no parameter 'budgett'"):
        renamed_keywords(max_tokens="budgett")(lambda budget: budget)
    with pytest.raises(TypeError, match="still has the old parameter"):
        renamed_keywords(max_tokens="budget")(lambda budget, max_tokens: budget)
    with pytest.raises(TypeError, match="at least one"):
        renamed_keywords()


def test_renamed_attributes():
    mod = types.ModuleType("scwo_np._test_renamed_module")
    mod.NEW = 42
    mod.__getattr__ = renamed_attributes(mod.__name__, {"OLD": "NEW"})
    sys.modules[mod.__name__] = mod
    try:
        with pytest.warns(
            DeprecationWarning, match=r"_test_renamed_module\.OLD' was renamed to .*\.NEW'"
        ) as caught:
            line = inspect.currentframe().f_lineno + 1
            assert mod.OLD == 42
        assert caught.list[0].filename == __file__ and caught.list[0].lineno == line
        with pytest.warns(DeprecationWarning):
            from scwo_np._test_renamed_module import OLD  # noqa: F401
        mod.__getattr__ = renamed_attributes(mod.__name__, {"OLD": "NEW", "JOIN": "os.path:join"})
        import os.path

        with pytest.warns(DeprecationWarning, match=r"_test_renamed_module\.JOIN' moved to 'os\.path\.join'"):
            assert mod.JOIN is os.path.join
        with pytest.raises(AttributeError, match="has no attribute 'MISSING'"):
            mod.MISSING  # noqa: B018
    finally:
        del sys.modules[mod.__name__]


# -- the public vocabulary -------------------------------------------------------------------

#: A parameter name that says one of the three ideas with another word -> the word to use.
SYNONYMS = {
    "max_tokens": "budget",
    "token_budget": "budget",
    "tokens_budget": "budget",
    "max_budget": "budget",
    "token_limit": "budget",
    "ceiling": "budget",
    "counter": "token_counter",
    "tokens_counter": "token_counter",
    "tokenizer": "token_counter",
    "question": "query",
    "query_text": "query",
    "query_vector": "query",
}

#: Public modules of the core and every package (their ``__all__``), and the extras' modules.
CORE_MODULES = [
    "scwo_np",
    "scwo_np.validation",
    "scwo_np.text",
    "scwo_np.tokens",
    "scwo_np.datasets",
    "scwo_np.select",
    "scwo_np.dedup",
    "scwo_np.anchor",
    "scwo_np.hsca",
    "scwo_np.optimize",
    "scwo_np.embed",
]
EXTRA_MODULES = [
    "scwo_np.rerank",
    "scwo_np.mcp_server",
    "scwo_np.integrations.langchain",
    "scwo_np.integrations.llamaindex",
    "scwo_np.integrations.haystack",
]
MODULES = CORE_MODULES + [pytest.param(m, marks=pytest.mark.integration) for m in EXTRA_MODULES]


def _import(name):
    if name in EXTRA_MODULES:
        return pytest.importorskip(name)
    return importlib.import_module(name)


def _signatures(mod):
    """``(qualified name, parameter names)`` of every public callable of ``mod``: functions, classes
    (their constructor) and the public methods of the classes."""
    for name in getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")]):
        obj = getattr(mod, name)
        if not callable(obj):
            continue
        targets = [(f"{mod.__name__}.{name}", obj)]
        if inspect.isclass(obj):
            targets += [
                (f"{mod.__name__}.{name}.{m}", getattr(obj, m))
                for m, v in vars(obj).items()
                if not m.startswith("_") and callable(getattr(obj, m, None)) and not isinstance(v, property)
            ]
        for qual, f in targets:
            try:
                yield qual, list(inspect.signature(f).parameters)
            except (TypeError, ValueError):  # builtins without a signature
                continue


@pytest.mark.parametrize("module", MODULES)
def test_public_signatures_use_one_word_per_idea(module):
    """``budget`` for a token budget, ``token_counter`` for the counter, ``query`` for the query; snake_case."""
    bad = []
    for qual, params in _signatures(_import(module)):
        for p in params:
            if p in SYNONYMS:
                bad.append(f"{qual}({p}=): call it {SYNONYMS[p]!r}")
            elif p != p.lower():
                bad.append(f"{qual}({p}=): snake_case")
    assert not bad, "\n".join(bad)


def test_the_walk_sees_the_renamed_functions():
    seen = dict(s for m in CORE_MODULES for s in _signatures(importlib.import_module(m)))
    assert "budget" in seen["scwo_np.anchor.crush_json"]
    assert "budget" in seen["scwo_np.optimize.MoragContextOptimizer"]
    assert seen["scwo_np.tokens.as_token_counter"] == ["token_counter"]
    assert "query" in seen["scwo_np.select.auto_lam"] and seen["scwo_np.select.query_kind"] == ["query"]
    assert "query" in seen["scwo_np.optimize.KBContextOptimizer.optimize"]


def test_kb_options_are_snake_case():
    from scwo_np.optimize import KB_CAMEL_CASE, KB_DEFAULTS

    assert all(k == k.lower() for k in KB_DEFAULTS)
    assert set(KB_CAMEL_CASE.values()) <= set(KB_DEFAULTS)


@pytest.mark.parametrize(
    "module", CORE_MODULES[1:] + [pytest.param(m, marks=pytest.mark.integration) for m in EXTRA_MODULES]
)
def test_no_module_exports_a_function_of_its_own_name(module):
    """``scwo_np.dedup(texts)`` failed with "'module' object is not callable": no package does that again."""
    mod = _import(module)
    short = module.rsplit(".", 1)[1]
    assert short not in getattr(mod, "__all__", ()), f"{module} exports {short}: name the function otherwise"


# -- every old name still works, warns, and gives what the new one gives ----------------------


def _logs(n=300):
    return json.dumps(
        [{"i": i, "level": "ERROR" if i == 77 else "INFO", "msg": f"GET /o/{i * 31 % 997}"} for i in range(n)]
    )


def test_old_keywords_give_what_the_new_ones_give():
    import numpy as np

    from scwo_np import anchor, optimize, select, tokens

    rel = np.linspace(0.6, 0.4, 50)
    cases = [
        (
            lambda: anchor.crush_json(_logs(), max_tokens=200),
            lambda: anchor.crush_json(_logs(), budget=200),
            "max_tokens",
        ),
        (
            lambda: tokens.as_token_counter(counter="estimate").name,
            lambda: tokens.as_token_counter(token_counter="estimate").name,
            "counter",
        ),
        (
            lambda: select.auto_lam(rel, question="Compare a and b"),
            lambda: select.auto_lam(rel, query="Compare a and b"),
            "question",
        ),
        (
            lambda: select.query_kind(question="List the ways"),
            lambda: select.query_kind(query="List the ways"),
            "question",
        ),
        (
            lambda: optimize.MoragContextOptimizer(max_tokens=900).budget,
            lambda: optimize.MoragContextOptimizer(budget=900).budget,
            "max_tokens",
        ),
    ]
    for old, new, name in cases:
        with pytest.warns(DeprecationWarning, match=f"'{name}' was renamed to"):
            got = old()
        assert got == new()


def test_old_attributes_and_registries():
    import scwo_np
    from scwo_np import dedup, optimize, select

    pairs = [
        (scwo_np, "METHODS", scwo_np.MMR_METHODS),
        (select, "METHODS", select.MMR_METHODS),
        (select, "question_kind", select.query_kind),
        (optimize, "STRATEGIES", optimize.MORAG_LAYOUTS),
        (dedup, "dedup", dedup.deduplicate),
    ]
    for mod, old, new in pairs:
        with pytest.warns(DeprecationWarning, match=f"{mod.__name__}.{old}' was renamed to"):
            assert getattr(mod, old) is new
        assert old not in mod.__all__ and old not in dir(mod)
    assert scwo_np.deduplicate is dedup.deduplicate
    assert "STRATEGIES" in select.__all__ and select.STRATEGIES is scwo_np.STRATEGIES  # selection's: kept
    m = optimize.MoragContextOptimizer(budget=900)
    with pytest.warns(DeprecationWarning, match="'max_tokens' was renamed to 'budget'"):
        assert m.max_tokens == 900


def test_calling_the_dedup_package_works_and_points_to_deduplicate():
    import scwo_np

    texts = ["the cat sat on the mat", "the cat sat on the mat", "a dog ran"]
    with pytest.warns(DeprecationWarning, match=r"call scwo_np\.deduplicate"):
        got = scwo_np.dedup(texts)
    assert got.keep.tolist() == scwo_np.deduplicate(texts).keep.tolist() == [0, 2]
    import types

    assert isinstance(scwo_np.dedup, types.ModuleType)


def test_kb_camel_case_options_still_work():
    from scwo_np.optimize import KBContextOptimizer

    matches = [
        {"id": i, "text": f"word{i} " * 40, "score": 1 - i / 10, "path": f"f{i % 2}.py"} for i in range(8)
    ]
    new = {"budget": 130, "adaptive_selection": True, "max_chunks": 5, "max_per_source": 2, "lam": 0.5}
    old = {
        "tokenBudget": 130,
        "adaptiveSelection": True,
        "maxChunks": 5,
        "maxChunksPerFile": 2,
        "lambda": 0.5,
    }
    want = KBContextOptimizer().optimize(matches, new)
    with pytest.warns(
        DeprecationWarning, match=r"snake_case in 0\.2 \(tokenBudget -> budget, adaptiveSelection"
    ):
        got = KBContextOptimizer().optimize(matches, old)
    assert got.indices.tolist() == want.indices.tolist() and got.options == want.options
    adr = {"knowledge": {"engines": [{"options": {"search": {"optimization": old}}}]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the ADR's own document: read as it is, no warning
        assert KBContextOptimizer().optimize(matches, adr).indices.tolist() == want.indices.tolist()
    with pytest.raises(ValueError, match="option budget is given twice, also as its old name tokenBudget"):
        KBContextOptimizer().optimize(matches, {"budget": 1, "tokenBudget": 2})


def test_the_project_itself_uses_no_old_name():
    """pyproject's filterwarnings turns a RenamedWarning into an error in every test."""
    from scwo_np.validation import RenamedWarning

    with pytest.raises(RenamedWarning):
        import scwo_np

        scwo_np.METHODS  # noqa: B018


# -- every keyword that takes a name goes through a registry -----------------------------------

#: Files whose literal name lists another part of issue 41 replaces (tell the lead when they go).
NOT_KEYWORD_NAMES: dict[str, str] = {}


def _literal_names(node):
    return (
        isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and len(node.elts) > 1
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
    )


def _ad_hoc_name_checks(path):
    """Lines that check a name against a literal list: ``check_method(x, ["a", "b"])`` or
    ``if x not in ("a", "b"): raise ...``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check_method":
            if len(node.args) > 1 and _literal_names(node.args[1]):
                yield node.lineno
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            ops, right = node.test.ops, node.test.comparators
            if any(isinstance(o, ast.NotIn) for o in ops) and any(_literal_names(r) for r in right):
                if any(isinstance(b, ast.Raise) for b in node.body):
                    yield node.lineno


def test_name_arguments_are_checked_by_a_registry():
    pkg = Path(scwo_np_path()).parent
    bad = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg.parent).as_posix()
        if any(rel.startswith(k) for k in NOT_KEYWORD_NAMES):
            continue
        bad += [f"{rel}:{line}" for line in _ad_hoc_name_checks(path)]
    assert not bad, (
        "names checked against a literal list; give them a Registry (scwo_np/_registry.py):\n"
        + "\n".join(bad)
    )


def scwo_np_path():
    import scwo_np

    return scwo_np.__file__
