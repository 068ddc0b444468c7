"""Two models compared paired by seed: per-seed differences of test perplexity (or of any measured value,
as the toy task compares its share solved) and a 95 % t-interval.

The same seed gives two models the same batches in the same order (and draws
their first weights from the same generator state), so a seed that is easy for
one tends to be easy for the other. Comparing them seed by seed removes that
shared luck; comparing two means against their standard deviations does not.

The rule, stated once on page 5 where it is first used: for every seed both
models have, take ``other - reference`` of the test perplexity; the 95 %
interval is ``mean ± t * sd / sqrt(n)``, with ``t`` the 97.5 % quantile of
Student's t with ``n - 1`` degrees of freedom (``scipy.stats.t``) and ``sd``
the differences' sample standard deviation. The other model is **behind**
when the whole interval lies above zero, **ahead** when it lies below, and
**not separated** when it contains zero (or with fewer than two seeds).
"""

from __future__ import annotations

import math
import statistics

LEVEL = 0.95
RULE = (
    "paired by seed: the difference of test perplexity for every seed both models have, its mean and "
    "a 95 % t-interval (mean ± t × sd / √n, t from Student's t with n − 1 degrees of freedom); "
    "a model is behind or ahead when the interval excludes zero, otherwise not separated"
)


def t_quantile(n: int, level: float = LEVEL) -> float:
    """The two-sided ``level`` quantile of Student's t with ``n - 1`` degrees of freedom."""
    # the pipeline's only use of scipy; the site reads the result
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, n - 1))


def outcome(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "not_separated"
    if low > 0:
        return "behind"
    if high < 0:
        return "ahead"
    return "not_separated"


def compare(
    other: dict[int, float], reference: dict[int, float], level: float = LEVEL
) -> dict:
    """``other`` against ``reference`` (each: seed -> test perplexity) over the seeds both have, in seed order."""
    seeds = sorted(set(other) & set(reference))
    diffs = [other[s] - reference[s] for s in seeds]
    n = len(diffs)
    out = {
        "seeds": seeds,
        "n": n,
        "differences": diffs,
        "mean": statistics.fmean(diffs) if diffs else None,
        "sd": None,
        "t": None,
        "half_width": None,
        "low": None,
        "high": None,
    }
    if n >= 2:
        sd = statistics.stdev(diffs)
        t = t_quantile(n, level)
        half = t * sd / math.sqrt(n)
        out.update(
            sd=sd, t=t, half_width=half, low=out["mean"] - half, high=out["mean"] + half
        )
    out["outcome"] = outcome(out["low"], out["high"])
    return out


def perplexities(results, name: str) -> dict[int, float]:
    """seed -> test perplexity of one model's runs (RunResults or their records)."""
    get = (lambda r, k: r[k]) if results and isinstance(results[0], dict) else getattr
    return {
        get(r, "seed"): get(r, "test_perplexity")
        for r in results
        if get(r, "model") == name
    }


def summary(results, name: str) -> dict:
    """Mean and sample sd of one model's test perplexity over every seed it has."""
    ppl = perplexities(results, name)
    values = [ppl[s] for s in sorted(ppl)]
    return {
        "seeds": sorted(ppl),
        "runs": len(values),
        "perplexity_mean": statistics.fmean(values) if values else None,
        "perplexity_sd": statistics.stdev(values) if len(values) > 1 else None,
    }


def comparisons(results, names: list[str], reference: str, seeds: list[int]) -> dict:
    """Every model of ``names`` but the reference against it, over ``seeds`` (where both have them)."""
    ref = {s: p for s, p in perplexities(results, reference).items() if s in seeds}
    return {
        name: compare(
            {s: p for s, p in perplexities(results, name).items() if s in seeds}, ref
        )
        for name in names
        if name != reference
    }


def section(
    source_results,
    extra_results,
    names: list[str],
    reference: str,
    source_seeds: list[int],
    declared_seeds: list[int],
) -> dict:
    """The paired comparisons of ``names`` against ``reference``: over the source seeds, and over every
    declared seed with a finished run (``extra_results`` hold those beyond the source's)."""
    from .models import get_spec

    everything = list(source_results) + list(extra_results)
    return {
        "rule": RULE,
        "level": LEVEL,
        "reference": reference,
        "labels": {name: get_spec(name).label for name in names},
        "source_seeds": list(source_seeds),
        "declared_seeds": list(declared_seeds),
        "all_seeds": {name: summary(everything, name) for name in names},
        "source": comparisons(source_results, names, reference, list(source_seeds)),
        "all": comparisons(everything, names, reference, list(declared_seeds)),
    }
