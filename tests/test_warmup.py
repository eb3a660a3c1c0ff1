"""The warm-up that compiles the common kernels into the wheel's JIT seed (``setup.py``).

A failing step is skipped on purpose (the seed only saves time), so a broken step would
silently ship a wheel without its kernels: every step must run here.
"""

from scwo_np import _warmup


def test_every_warm_up_step_runs():
    times = _warmup.run()
    assert set(times) == set(_warmup.STEPS)
