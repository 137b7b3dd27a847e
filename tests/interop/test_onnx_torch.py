"""ember.onnx.export against torch.onnx.export (its TorchScript exporter, dynamo=False,
which works offline): the same model with the same weights gives the same onnxruntime
outputs from both files."""

import io
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _ort(data, feeds):
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip([i.name for i in sess.get_inputs()], feeds)))


def _pair(build):
    """``build(nn)`` in ember and in torch, torch's weights copied from ember's."""
    em = build(ember.nn).eval()
    tm = build(torch.nn).eval()
    tm.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                        for k, v in em.state_dict().items()})
    return em, tm


def _compare(build, inputs, other, dynamic_axes, rtol=1e-4, atol=1e-5):
    em, tm = _pair(build)
    names = list(dynamic_axes)
    eb, tb = io.BytesIO(), io.BytesIO()
    ember.onnx.export(em, tuple(ember.tensor(a) for a in inputs), eb, input_names=names,
                      dynamic_axes=dynamic_axes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(tm, tuple(torch.from_numpy(a) for a in inputs), tb, dynamo=False,
                          input_names=names, dynamic_axes=dynamic_axes)
    for feeds in (inputs, other):
        for e, t in zip(_ort(eb.getvalue(), feeds), _ort(tb.getvalue(), feeds)):
            np.testing.assert_allclose(e, t, rtol=rtol, atol=atol)


def test_lenet_like_matches_torch_onnx_export():
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 7 * 7, 5),
                             nn.LogSoftmax(dim=1))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 1, 14, 14)).astype(np.float32)
    x2 = rng.standard_normal((5, 1, 14, 14)).astype(np.float32)
    _compare(build, [x], [x2], {"x": {0: "batch"}})


def test_lstm_matches_torch_onnx_export():
    def build(nn):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True)
                self.fc = nn.Linear(10, 2)

            def forward(self, x):
                out, _ = self.lstm(x)
                return self.fc(out)

        return M()

    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 3)).astype(np.float32)
    x2 = rng.standard_normal((3, 4, 3)).astype(np.float32)
    _compare(build, [x], [x2], {"x": {0: "batch", 1: "seq"}})
