"""The one registry pattern: a read-only, ordered mapping from a name to what it stands for.

Every keyword argument that takes a name (``method=``, ``strategy=``,
``embedder=``, ``token_counter=``, ``order=``, ``pattern=``) has one
:class:`Registry`, exported by its package in capitals (``MMR_METHODS``,
``STRATEGIES``, ...).  Iterating gives the names in order, ``name in R``
tests one, ``R[name]`` is its entry (the function, the default threshold,
the keyword arguments, the weights, or a one-line description), and
:meth:`Registry.lookup` checks a user's name and gives its entry, with the
error every registry shares.  Tests and the CLI's ``choices=`` iterate the
registry, so a new name is tested and offered as soon as it is registered.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from .validation import check_method

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Names accepted by one keyword argument, and the entry each stands for.

    Parameters
    ----------
    argument : str
        The keyword argument the names are given to (it is named in errors).
    entries : Mapping[str, T]
        Name -> entry, in the order the names are listed.

    Examples
    --------
    >>> orders = Registry("order", {"pick": "pick order", "original": "input order"})
    >>> list(orders), "pick" in orders, orders["original"]
    (['pick', 'original'], True, 'input order')
    >>> orders.lookup("edges")
    Traceback (most recent call last):
    ...
    ValueError: order must be one of 'pick', 'original'; got 'edges'.
    """

    __slots__ = ("_argument", "_entries")

    def __init__(self, argument: str, entries: Mapping[str, T]) -> None:
        self._argument = argument
        self._entries = dict(entries)

    @property
    def argument(self) -> str:
        """The keyword argument these names are given to."""
        return self._argument

    def lookup(self, name: object, *, hint: str = "") -> T:
        """The entry of ``name``; an error naming the argument and the choices otherwise.

        A ``ValueError`` for an unknown name, a ``TypeError`` for one that is not a str.
        ``hint`` (a sentence) is added to the error, for arguments that take more than names.
        """
        try:
            check_method(name, tuple(self._entries), name=self._argument)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"{exc} {hint}".rstrip()) from None
        return self._entries[name]  # type: ignore[index]

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self._argument!r}: {', '.join(map(repr, self._entries))})"
