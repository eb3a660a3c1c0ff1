"""Where HSCA's lexicons and background statistics come from: the wheel, or the optional GPL package.

The MIT wheel bundles files built from permissive sources only
(``scwo_np.bundled/hsca``).  The separately installable ``scwo-np-gpl-data``
package (``data-gpl/`` in the source tree) holds the same files counted with
the copyleft dictionaries too (GCIDE, FOLDOC, OpenMedSpel), which score HSCA's
evals higher; the core never needs it.  When it is installed its files are
used, unless ``SCWO_NP_HSCA_DATA=bundled``; ``SCWO_NP_HSCA_DATA=gpl`` makes its
absence an error.  The choice is made once, at import.
"""

from __future__ import annotations

import importlib.util
import os
from importlib import resources
from importlib.resources.abc import Traversable

__all__ = ["DATA_SOURCE", "data_file"]

_CHOICES = ("auto", "bundled", "gpl")


def _choose() -> tuple[Traversable, str]:
    choice = os.environ.get("SCWO_NP_HSCA_DATA", "auto") or "auto"
    if choice not in _CHOICES:
        raise ValueError(
            f"SCWO_NP_HSCA_DATA must be one of {', '.join(_CHOICES)}; got {choice!r}. Unset it to use "
            "the optional scwo-np-gpl-data package when it is installed."
        )
    if choice != "bundled" and importlib.util.find_spec("scwo_np_gpl_data") is not None:
        import scwo_np_gpl_data as gpl

        return resources.files("scwo_np_gpl_data"), f"scwo-np-gpl-data {gpl.__version__} ({gpl.SOURCES})"
    if choice == "gpl":
        raise ModuleNotFoundError(
            "SCWO_NP_HSCA_DATA=gpl but the scwo-np-gpl-data package is not installed: "
            "pip install ./data-gpl from a clone of scwo_np, or unset SCWO_NP_HSCA_DATA."
        )
    return (
        resources.files("scwo_np.bundled").joinpath("hsca"),
        "bundled (WordNet, SCOWL, Jargon File, Python docs; permissive)",
    )


_DIR, DATA_SOURCE = _choose()


def data_file(name: str) -> Traversable:
    """HSCA's data file ``name`` (``domain_lexicons.json``, ``background.npz``) from the chosen source."""
    return _DIR.joinpath(name)
