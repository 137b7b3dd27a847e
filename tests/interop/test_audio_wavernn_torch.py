"""emberaudio.models.WaveRNN's forward pass against the same computation in plain torch,
from the model's state dict."""

import numpy as np
import pytest

import ember
from emberaudio.models import WaveRNN

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _bn(h, s, p):
    return F.batch_norm(h, s[p + "running_mean"], s[p + "running_var"], s[p + "weight"],
                        s[p + "bias"])


def _torch_forward(s, wave, spec, scales, n_res_block, n_aux, kernel_size):
    r = "upsample.resnet.melresnet_model."
    h = F.relu(_bn(F.conv1d(spec, s[r + "0.weight"]), s, r + "1."))
    for i in range(3, 3 + n_res_block):
        q = f"{r}{i}.resblock_model."
        y = F.relu(_bn(F.conv1d(h, s[q + "0.weight"]), s, q + "1."))
        h = h + _bn(F.conv1d(y, s[q + "3.weight"]), s, q + "4.")
    aux = F.conv1d(h, s[f"{r}{3 + n_res_block}.weight"], s[f"{r}{3 + n_res_block}.bias"])
    total = int(np.prod(scales))
    aux = aux.repeat_interleave(total, -1)
    up = spec[:, None]
    for i, scale in enumerate(scales):
        up = F.conv2d(up.repeat_interleave(scale, -1), s[f"upsample.upsample_layers.{2 * i + 1}"
                                                          ".weight"], padding=(0, scale))
    indent = (kernel_size - 1) // 2 * total
    up = up[:, 0, :, indent:-indent].transpose(1, 2)
    aux = aux.transpose(1, 2)
    a = [aux[..., n_aux * i:n_aux * (i + 1)] for i in range(4)]

    def gru(x, p):
        weight = s[p + "weight_ih_l0"]
        layer = torch.nn.GRU(weight.shape[1], weight.shape[0] // 3, batch_first=True)
        layer.load_state_dict({k + "_l0": s[p + k + "_l0"]
                               for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})
        return layer(x)[0]

    x = F.linear(torch.cat([wave[:, 0, :, None], up, a[0]], -1), s["fc.weight"], s["fc.bias"])
    x = gru(x, "rnn1.") + x
    x = gru(torch.cat([x, a[1]], -1), "rnn2.") + x
    x = F.relu(F.linear(torch.cat([x, a[2]], -1), s["fc1.weight"], s["fc1.bias"]))
    x = F.relu(F.linear(torch.cat([x, a[3]], -1), s["fc2.weight"], s["fc2.bias"]))
    return F.linear(x, s["fc3.weight"], s["fc3.bias"])[:, None]


def test_wavernn_forward_matches_plain_torch():
    ember.manual_seed(0)
    model = WaveRNN([2, 3], 16, 6, n_res_block=2, n_rnn=8, n_fc=10, kernel_size=5, n_freq=4,
                    n_hidden=6, n_output=8)
    model(ember.rand(3, 1, 36), ember.rand(3, 1, 4, 10))   # batch-norm statistics
    model.eval()
    rng = np.random.default_rng(0)
    wave = rng.uniform(-1, 1, (2, 1, 36)).astype(np.float32)
    spec = rng.random((2, 1, 4, 10)).astype(np.float32)
    with ember.no_grad():
        got = model(ember.from_numpy(wave), ember.from_numpy(spec)).numpy()
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()}
    with torch.no_grad():
        expected = _torch_forward(state, torch.from_numpy(wave), torch.from_numpy(spec)[:, 0],
                                  [2, 3], 2, 2, 5).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
