"""ember's stores give PyTorch's HashStore's results for the same operations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "distributed"))
from test_store import EXPECTED, _ops  # noqa: E402


def test_torch_hash_store_gives_the_expected_results():
    assert _ops(tdist.HashStore()) == EXPECTED

