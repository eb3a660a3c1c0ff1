"""HSCA's lexicons and background statistics with the copyleft sources (optional; see README.md).

scwo_np uses these files instead of its bundled, permissively licensed ones when this
package is installed, unless ``SCWO_NP_HSCA_DATA=bundled``.
"""

from pathlib import Path

__version__ = "0.1.0"

#: The folder holding ``domain_lexicons.json`` and ``background.npz``.
DATA = Path(__file__).resolve().parent

#: What the files are counted from (``scwo_np.hsca.DATA_SOURCE`` names it).
SOURCES = (
    "GCIDE (GPL-3.0+), FOLDOC (GFDL-1.1+), OpenMedSpel (GPL-3+), WordNet, SCOWL, Jargon File, Python docs"
)
