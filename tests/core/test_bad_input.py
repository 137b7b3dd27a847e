"""Bad input to each op family: wrong shapes, dtypes, out-of-range indices and arguments.
Each case must raise an exception whose message names the problem, and nothing may crash
the interpreter: the cases run in a child process (the compiled kernels index with user
data), all in one child, and one by one only if that child dies."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# (id, code raising, exception type name, a piece of the message)
CASES = [
    ("embedding index", "F.embedding(ember.tensor([5]), ember.zeros(4, 2))", "IndexError",
     "out of range"),
    ("embedding negative", "F.embedding(ember.tensor([-1]), ember.zeros(4, 2))", "IndexError",
     "out of range"),
    ("embedding_bag offsets", "F.embedding_bag(ember.tensor([0, 1]), ember.zeros(4, 2), "
     "ember.tensor([1, 0]))", "RuntimeError", "offsets"),
    ("nll target", "F.nll_loss(ember.zeros(2, 3), ember.tensor([0, 3]))", "IndexError",
     "Target 3 is out of bounds"),
    ("cross_entropy target", "F.cross_entropy(ember.zeros(2, 3), ember.tensor([-2, 0]))",
     "IndexError", "out of bounds"),
    ("ctc target", "F.ctc_loss(F.log_softmax(ember.zeros(3, 1, 4), 2), ember.tensor([[1, 9]]),"
     " ember.tensor([3]), ember.tensor([2]))", "IndexError", "out of bounds"),
    ("ctc lengths", "F.ctc_loss(F.log_softmax(ember.zeros(3, 1, 4), 2), ember.tensor([[1, 2]]),"
     " ember.tensor([4]), ember.tensor([2]))", "RuntimeError", "input_lengths"),
    ("max_unpool index", "F.max_unpool1d(ember.ones(1, 1, 2), ember.tensor([[[9, 0]]]), 2)",
     "RuntimeError", "invalid max index"),
    ("gather index", "ember.zeros(3).gather(0, ember.tensor([3]))", "RuntimeError",
     "out of bounds"),
    ("scatter_add index", "ember.zeros(3).scatter_add(0, ember.tensor([-1]), ember.ones(1))",
     "RuntimeError", "out of bounds"),
    ("index_add index", "ember.zeros(3, 2).index_add(0, ember.tensor([7]), ember.ones(1, 2))",
     "RuntimeError", "out of bounds"),
    ("index_select negative", "ember.zeros(3).index_select(0, ember.tensor([-1]))",
     "IndexError", "out of bounds"),
    ("take", "ember.zeros(3).take(ember.tensor([3]))", "IndexError", "out of range"),
    ("put", "ember.zeros(3).put_(ember.tensor([-4]), ember.ones(1))", "IndexError",
     "out of range"),
    ("getitem", "ember.zeros(3)[ember.tensor([3])]", "IndexError", "out of bounds"),
    ("setitem", "ember.zeros(3).__setitem__(ember.tensor([5]), 1.0)", "IndexError",
     "out of bounds"),
    ("bincount negative", "ember.bincount(ember.tensor([-1]))", "RuntimeError",
     "non-negative"),
    ("one_hot classes", "F.one_hot(ember.tensor([5]), 3)", "RuntimeError", "num_classes"),
    ("conv channels", "F.conv2d(ember.zeros(1, 3, 5, 5), ember.zeros(2, 2, 3, 3))",
     "RuntimeError", "channels"),
    ("conv kernel too big", "F.conv2d(ember.zeros(1, 2, 2, 2), ember.zeros(2, 2, 3, 3))",
     "RuntimeError", "Kernel size can't be greater"),
    ("conv empty spatial", "F.conv2d(ember.zeros(1, 2, 0, 4), ember.zeros(2, 2, 1, 1), padding=1)",
     "RuntimeError", "Only zero batch or zero channel"),
    ("max_pool padding", "F.max_pool2d(ember.zeros(1, 1, 4, 4), 2, padding=2)",
     "RuntimeError", "pad should be"),
    ("linear shapes", "F.linear(ember.zeros(2, 3), ember.zeros(4, 5))", "RuntimeError",
     "cannot be multiplied"),
    ("matmul shapes", "ember.zeros(2, 3) @ ember.zeros(4, 5)", "RuntimeError",
     "cannot be multiplied"),
    ("batch_norm features", "F.batch_norm(ember.zeros(2, 3), ember.zeros(4), ember.ones(4))",
     "RuntimeError", "running_mean should contain 3 elements"),
    ("layer_norm shape", "F.layer_norm(ember.zeros(2, 3), [4])", "RuntimeError",
     "normalized_shape"),
    ("view shape", "ember.zeros(6).view(4, 2)", "RuntimeError", "shape '[4, 2]' is invalid"),
    ("as_strided offset", "ember.zeros(6).as_strided((2,), (1,), -1)", "RuntimeError",
     "invalid storage offset"),
    ("as_strided size", "ember.zeros(6).as_strided((4,), (2,), 0)", "RuntimeError",
     "out of bounds for storage"),
    ("expanded add_", "ember.zeros(1).expand(3).add_(1)", "RuntimeError",
     "more than one element of the written-to tensor"),
    ("overlap add_", "(lambda x: x[1:].add_(x[:-1]))(ember.arange(5.0))", "RuntimeError",
     "some elements of the input tensor"),
    ("hook size", "(lambda x: (x.register_hook(lambda g: ember.ones(4)), x.sum().backward()))"
     "(ember.ones(3, requires_grad=True))", "RuntimeError", "changed the size"),
    ("hook type", "(lambda x: (x.register_hook(lambda g: 1.0), x.sum().backward()))"
     "(ember.ones(3, requires_grad=True))", "TypeError", "hook returned 'float'"),
    ("dtype of index", "ember.zeros(3).index_select(0, ember.tensor([0.5]))", "RuntimeError",
     "Expected dtype"),
    ("softmax dim", "F.softmax(ember.zeros(2, 3), dim=2)", "IndexError",
     "Dimension out of range"),
    ("cat shapes", "ember.cat([ember.zeros(2, 3), ember.zeros(2, 4)])", "RuntimeError",
     "Sizes of tensors must match"),
    ("interpolate mode", "F.interpolate(ember.zeros(1, 1, 4), scale_factor=2, mode='bicubic')",
     "NotImplementedError", "bicubic"),
    ("grad of non-scalar", "ember.ones(2, requires_grad=True).mul(2).backward()",
     "RuntimeError", "grad can be implicitly created only for scalar outputs"),
]

_CHILD = r"""
import json, sys
import ember
import ember.nn.functional as F
results = {}
for name, code in json.loads(sys.argv[1]):
    try:
        eval(code)
        results[name] = [None, ""]
    except Exception as e:
        results[name] = [type(e).__name__, str(e)]
print(json.dumps(results))
"""


def _run(cases):
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([c[:2] for c in cases])],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return None, proc
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc


@pytest.fixture(scope="module")
def outcomes():
    got, proc = _run(CASES)
    if got is None:  # a crash: find the cases that crash, one child each
        got = {}
        for case in CASES:
            one, p = _run([case])
            got.update(one or {case[0]: ["crash", f"exit {p.returncode}: {p.stderr[-500:]}"]})
    return got


@pytest.mark.parametrize("name,code,exc,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_error(outcomes, name, code, exc, message):
    kind, text = outcomes[name]
    assert kind != "crash", f"{code} crashed the interpreter: {text}"
    assert kind is not None, f"{code} raised nothing"
    assert kind == exc or (exc == "RuntimeError" and kind == "IndexOutOfBoundsError"), \
        f"{code}: {kind}: {text}"
    assert message in text, f"{code}: {kind}: {text}"
