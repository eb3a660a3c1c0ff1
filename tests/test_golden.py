"""Bit identity: the golden outputs made on x86-64 (tests/golden) are reproduced here, bit for bit.

Runs in the normal suite and, under emulation, on aarch64 (``.ci/aarch64``).  A change
that moves any bit of a selection, a gain, a similarity or a layer-1 weight fails here
on every platform; if the change is meant, rebuild the file with
``python -m tests.golden.cases`` on x86-64 and commit it, saying why in the commit.
"""

import numpy as np
import pytest

from tests.golden.cases import GOLDEN, bits, cases


@pytest.fixture(scope="module")
def now():
    return cases()


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN) as z:
        return {k: z[k] for k in z.files}


def test_the_golden_file_holds_every_case(now, golden):
    names = {k for k in golden if not k.endswith("__dtype")}
    assert names == set(now), "rebuild tests/golden/golden.npz: python -m tests.golden.cases"


def test_every_output_is_bit_identical(now, golden):
    moved = []
    for name, value in sorted(now.items()):
        want = golden[name]
        assert str(value.dtype) == str(golden[f"{name}__dtype"]), f"{name}: dtype {value.dtype}"
        got = bits(value)
        if got.shape != want.shape or not np.array_equal(got, want):
            moved.append(name)
    assert not moved, f"{len(moved)} output(s) moved a bit: {moved[:10]}"
