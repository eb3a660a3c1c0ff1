"""Names that moved to another module: the old path keeps working for one minor version.

A package whose public names moved elsewhere sets its module ``__getattr__`` (PEP 562) from
:func:`moved`; reading an old name then warns ``DeprecationWarning`` naming the new path and
returns the object from its new home, imported at that moment (so the old package never imports
the new one when it is itself imported, and the new one may import the old freely).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping


def moved(old: str, names: Mapping[str, str], *, since: str, removed: str) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``old``: each of ``names`` (name -> new module) warns and forwards.

    Examples
    --------
    >>> import warnings
    >>> get = moved("pkg", {"sqrt": "math"}, since="0.2", removed="0.3")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     get("sqrt")(4.0), str(w[0].message)
    (2.0, 'pkg.sqrt moved to math.sqrt in 0.2; the old path stops working in 0.3.')
    """

    def __getattr__(name: str) -> object:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old}.{name} moved to {new}.{name} in {since}; the old path stops working in {removed}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new), name)

    return __getattr__
