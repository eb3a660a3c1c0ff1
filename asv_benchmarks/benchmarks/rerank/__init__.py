"""Benchmarks for scwo_np.rerank (one module per module of the package)."""
