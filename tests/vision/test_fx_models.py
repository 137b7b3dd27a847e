"""embervision's models trace with ember.fx and the traced modules equal eager."""

import numpy as np
import pytest

import ember

models = pytest.importorskip("embervision.models")


@pytest.mark.parametrize("name", ["resnet18", "squeezenet1_0", "shufflenet_v2_x0_5"])
def test_traced_model_equals_eager(name):
    ember.manual_seed(0)
    model = getattr(models, name)().eval()
    gm = ember.fx.symbolic_trace(model)
    # torchvision's models are not leaves: their own blocks are traced through
    ops = {n.op for n in gm.graph.nodes}
    assert {"call_module", "call_function"} <= ops
    x = ember.randn(1, 3, 64, 64)
    with ember.no_grad():
        np.testing.assert_allclose(gm(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-5)
    assert set(gm.state_dict()) == set(model.state_dict())
