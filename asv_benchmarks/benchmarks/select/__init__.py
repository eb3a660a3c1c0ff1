"""Benchmarks for scwo_np.select, one module per module of the package."""
