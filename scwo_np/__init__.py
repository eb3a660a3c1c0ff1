"""scwo_np: decide what goes into an LLM's context window, on NumPy arrays."""

from .selection import METHODS, mmr_select, mmr_select_multi

__all__ = ["METHODS", "mmr_select", "mmr_select_multi"]
__version__ = "0.1.0"
