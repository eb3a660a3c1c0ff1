"""scwo_np inside LangChain and LlamaIndex.

- :mod:`scwo_np.integrations.langchain` — :class:`ScwoCompressor` (a
  ``BaseDocumentCompressor``: budgeted MMR over retrieved ``Document``\\ s, for a
  ``ContextualCompressionRetriever``) and :class:`ScwoDedupTransformer` (a
  ``BaseDocumentTransformer`` that drops near-duplicates); the ``langchain`` extra.
- :mod:`scwo_np.integrations.llamaindex` — :class:`ScwoNodePostprocessor` (a
  ``BaseNodePostprocessor`` doing the same for ``NodeWithScore`` lists); the
  ``llamaindex`` extra.

Import the module you need; this package imports neither framework.
"""
