"""Comparing numbers computed now with numbers stored earlier or computed by another runtime.

PyTorch, onnxruntime and numpy choose their CPU kernels when they start (AVX2 or
AVX-512 paths, fused multiply-add or not), so a float computed here may differ in
its last bits from the same float computed on the machine that wrote an artefact.
Floats are therefore compared within a tolerance that follows from the arithmetic;
everything discrete (ids, tokens, shapes, flags, strings) must be equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable

# float32 keeps 24 bits (one unit in the last place is 6e-8 relative). The values
# compared here come out of a few hundred multiply-adds and one softmax, whose
# reordering moves them by some tens of units: 1e-5 relative leaves a margin of
# two orders of magnitude and is still far below any difference a lesson shows.
FLOAT32_REL = 1e-5
# Probabilities and weights near zero are compared absolutely: 1e-7 is what a
# float32 softmax resolves next to a winner of probability ~1.
FLOAT32_ABS = 1e-7
# float64 (numpy, Python floats): 53 bits; libm's exp/log may differ by an ulp
# between processors, a chain of a few hundred operations by far less than 1e-12.
FLOAT64_REL = 1e-12


def assert_close_tree(
    fresh,
    stored,
    *,
    rel: float = FLOAT32_REL,
    abs_: float = FLOAT32_ABS,
    abs_for: Callable[[str], float | None] = lambda path: None,
    path: str = "$",
) -> None:
    """Walk two JSON-like documents: floats within tolerance, everything else equal.

    ``abs_for(path)`` may return a larger absolute tolerance for a path (for
    values the writer rounded, where a fresh value can land on the other side of
    a rounding boundary).
    """
    if isinstance(stored, dict):
        assert isinstance(fresh, dict) and fresh.keys() == stored.keys(), (path, sorted(fresh), sorted(stored))
        for key in stored:
            assert_close_tree(fresh[key], stored[key], rel=rel, abs_=abs_, abs_for=abs_for, path=f"{path}.{key}")
    elif isinstance(stored, list):
        assert isinstance(fresh, list) and len(fresh) == len(stored), (path, fresh, stored)
        for i, (a, b) in enumerate(zip(fresh, stored)):
            assert_close_tree(a, b, rel=rel, abs_=abs_, abs_for=abs_for, path=f"{path}[{i}]")
    elif isinstance(stored, float) and not isinstance(fresh, bool) and isinstance(fresh, (int, float)):
        tol = abs_for(path)
        assert math.isclose(fresh, stored, rel_tol=rel, abs_tol=max(abs_, tol or 0.0)), (path, fresh, stored)
    else:
        assert type(fresh) is type(stored) and fresh == stored, (path, fresh, stored)


def assert_same_ranking(
    fresh: list[dict],
    stored: list[dict],
    *,
    rel: float = FLOAT32_REL,
    abs_: float = FLOAT32_ABS,
    key: str = "id",
    value: str = "p",
) -> None:
    """Top-k lists: values within tolerance; order exact wherever the stored gap exceeds the tolerance.

    Entries whose stored values lie within the tolerance of each other are a tie
    the arithmetic cannot order, so within such a run only the set of ids counts.
    """
    assert len(fresh) == len(stored), (fresh, stored)
    for a, b in zip(sorted(fresh, key=lambda e: e[key]), sorted(stored, key=lambda e: e[key])):
        assert a[key] == b[key], (fresh, stored)
        assert math.isclose(a[value], b[value], rel_tol=rel, abs_tol=abs_), (a, b)
    start = 0
    for i in range(1, len(stored) + 1):
        tied = i < len(stored) and math.isclose(stored[i][value], stored[i - 1][value], rel_tol=rel, abs_tol=abs_)
        if not tied:
            assert {e[key] for e in fresh[start:i]} == {e[key] for e in stored[start:i]}, (fresh, stored)
            start = i


def assert_close_array(
    fresh, stored, *, rel: float = FLOAT32_REL, abs_: float = FLOAT32_ABS, name: str = "array"
) -> None:
    """Whole float32 tensors: equal shapes and infinities, finite entries within ``rel`` of the tensor's scale.

    An entry of a tensor is a sum of products of that tensor's magnitudes, so its
    rounding error follows the tensor's largest entry, not its own size: an
    element that cancels to nearly 0 keeps the absolute error of its terms. Each
    finite entry may therefore differ by rel x max|stored| (+ abs_).
    """
    import numpy as np

    a, b = np.asarray(fresh, dtype=np.float64), np.asarray(stored, dtype=np.float64)
    assert a.shape == b.shape, (name, a.shape, b.shape)
    finite = np.isfinite(b)
    assert np.array_equal(finite, np.isfinite(a)) and np.array_equal(a[~finite], b[~finite]), (
        name,
        "infinities differ",
    )
    if finite.any():
        scale = float(np.abs(b[finite]).max())
        worst = float(np.abs(a[finite] - b[finite]).max())
        assert worst <= rel * scale + abs_, (name, worst, rel * scale + abs_)
