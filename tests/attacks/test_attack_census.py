"""Census block reconstruction (Garfinkel, Abowd and Martindale 2019; the built-in 7-person block)."""

import pytest

from dpaudit.attacks.census import (
    SLIDES_BLOCK,
    SLIDES_MALES,
    GroupStatistic,
    census_noise_demo,
    census_solutions,
    noisy_statistics,
)
from dpaudit.exceptions import ParameterValueError


def test_male_rows_leave_thirty_tables():
    # The male rows: M2 = 30, M1 + M3 = 102, 1 <= M1 <= 30 -> exactly 30 choices.
    r = census_solutions(SLIDES_MALES)
    assert (r.n_solutions, r.complete) == (30, True)
    assert all(t[1] == (30,) and t[0][0] + t[2][0] == 102 for t in r.solutions)


def test_integer_program_agrees_with_enumeration_on_the_male_rows():
    ip = census_solutions(SLIDES_MALES, method="ip")
    assert ip.solutions == census_solutions(SLIDES_MALES, method="enumerate").solutions


@pytest.mark.slow  # several seconds; `make soundness` runs it, `make test` leaves it out
def test_full_block_is_reconstructed_uniquely():
    # The published table pins down the block (ages 1..125, married people >= 18); ~4 s with HiGHS.
    r = census_solutions(SLIDES_BLOCK, max_solutions=3)
    assert r.unique
    assert r.solutions[0] == (
        (8, "F", "B", "S"), (18, "M", "W", "M"), (24, "F", "W", "S"), (30, "M", "W", "S"),
        (36, "F", "B", "M"), (66, "F", "B", "M"), (84, "M", "B", "M"),
    )


def test_noise_destroys_uniqueness():
    # Slack s on the sum and the median: 30 -> 270 (s = 1, also found by the IP) -> 750 -> 2430.
    counts = [r.n_solutions for r in census_noise_demo(slacks=(0, 1, 2, 4))]
    assert counts == [30, 270, 750, 2430]


def test_noisy_statistics_keep_counts():
    s = noisy_statistics(SLIDES_BLOCK, noise_scale=3.0, rng=0)
    assert [x.count for x in s] == [x.count for x in SLIDES_BLOCK]
    assert s[0].median != 30 or s[0].mean != 38  # Laplace(3) leaves both unchanged w.p. < 0.05


def test_validation():
    with pytest.raises(ParameterValueError, match="whole population"):
        census_solutions([GroupStatistic("male", {"sex": "M"}, 3, 30, 44)])
    with pytest.raises(ParameterValueError, match="not in attributes"):
        census_solutions([GroupStatistic("all", {}, 2), GroupStatistic("x", {"hair": "red"}, 1)])
    with pytest.raises(ParameterValueError, match="method"):
        census_solutions(SLIDES_BLOCK, method="enumerate")
