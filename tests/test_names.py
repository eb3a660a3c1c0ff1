"""One name per idea: the renamed-keyword helper, and the public vocabulary it serves.

``budget`` for every token budget or ceiling, ``token_counter`` for the token counter,
``query`` for the question (text or vector).  Old names keep working for one minor
version with a ``DeprecationWarning`` (``scwo_np.validation.renamed_keywords``).
"""

from __future__ import annotations

import inspect
import sys
import types
import warnings

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
