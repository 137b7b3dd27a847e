"""Variable._execution_engine.queue_callback: callbacks run when backward has finished."""

import pytest

import ember
from ember.autograd import Variable


def test_callback_runs_after_all_gradients_in_order():
    x = ember.ones(3, requires_grad=True)
    y = ember.full((3,), 2.0, requires_grad=True)
    seen = []

    def queue(_):
        if not seen:
            engine = Variable._execution_engine
            engine.queue_callback(lambda: seen.append(("first", x.grad.tolist(),
                                                       y.grad.tolist())))
            engine.queue_callback(lambda: seen.append(("second",)))
        seen.append("hook")

    x.register_post_accumulate_grad_hook(queue)
    (x * y).sum().backward()
    assert seen[0] == "hook"
    # both leaves' gradients are in place when the first callback runs
    assert seen[1] == ("first", [2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    assert seen[2] == ("second",)


def test_callback_may_queue_more_and_runs_once_per_backward():
    x = ember.ones(2, requires_grad=True)
    calls = []

    def later():
        calls.append("later")

    def cb():
        calls.append("cb")
        Variable._execution_engine.queue_callback(later)

    h = x.register_post_accumulate_grad_hook(
        lambda _: Variable._execution_engine.queue_callback(cb))
    (x * 3).sum().backward()
    assert calls == ["cb", "later"]
    h.remove()
    (x * 3).sum().backward()
    assert calls == ["cb", "later"]


def test_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                           "backward pass"):
        Variable._execution_engine.queue_callback(lambda: None)


def test_callback_not_run_when_backward_raises():
    x = ember.ones(2, requires_grad=True)
    calls = []

    def bad(_):
        Variable._execution_engine.queue_callback(lambda: calls.append("cb"))
        raise ValueError("boom")

    x.register_post_accumulate_grad_hook(bad)
    with pytest.raises(ValueError, match="boom"):
        (x * 2).sum().backward()
    assert calls == []
    assert Variable._execution_engine.is_checkpoint_valid()
