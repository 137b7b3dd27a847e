"""ember.testing.assert_close's failure messages against torch.testing's."""

import pytest

import ember
from ember.testing import assert_close

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("actual, expected", [
    ([NAN, 1.0], [INF, 1.0]),        # NaN against inf: NaN is the greatest difference
    ([1.0, 2.0, 3.0], [1.0, 2.5, 0.0]),  # a zero expected value: relative difference inf
    ([INF], [-INF]),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.5]]),
    ([1.0, NAN], [1.0, 2.0]),
])
def test_mismatch_message_matches_torch(actual, expected):
    with pytest.raises(AssertionError) as ours:
        assert_close(ember.tensor(actual), ember.tensor(expected))
    with pytest.raises(AssertionError) as theirs:
        torch.testing.assert_close(torch.tensor(actual), torch.tensor(expected))
    assert str(ours.value) == str(theirs.value)


def test_equal_nan_and_infinities_pass_as_in_torch():
    assert_close(ember.tensor([NAN, INF]), ember.tensor([NAN, INF]), equal_nan=True)
    torch.testing.assert_close(torch.tensor([NAN, INF]), torch.tensor([NAN, INF]),
                               equal_nan=True)
