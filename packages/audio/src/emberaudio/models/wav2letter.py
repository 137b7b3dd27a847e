"""Wav2Letter: a fully convolutional acoustic model (Collobert et al., 2016)."""

from __future__ import annotations

import ember
from ember import nn

__all__ = ["Wav2Letter"]

# (in, out, kernel, stride, padding) of the acoustic layers after the front end; None is
# the number of input features, 0 the number of classes.
_ACOUSTIC = ([(None, 250, 48, 2, 23)] + [(250, 250, 7, 1, 3)] * 7
             + [(250, 2000, 32, 1, 16), (2000, 2000, 1, 1, 0), (2000, 0, 1, 1, 0)])


def _conv_relu_stack(layers, in_features: int, num_classes: int) -> nn.Sequential:
    modules = []
    for in_ch, out_ch, kernel, stride, padding in layers:
        modules.append(nn.Conv1d(in_features if in_ch is None else in_ch,
                                 out_ch or num_classes, kernel_size=kernel, stride=stride,
                                 padding=padding))
        modules.append(nn.ReLU(inplace=True))
    return nn.Sequential(*modules)


class Wav2Letter(nn.Module):
    r"""Wav2Letter model architecture from *Wav2Letter: an End-to-End ConvNet-based Speech
    Recognition System*.

    Args:
        num_classes (int, optional): number of classes to be classified. (Default: ``40``)
        input_type (str, optional): Wav2Letter can use as input: ``"waveform"``,
            ``"power_spectrum"`` or ``"mfcc"``. (Default: ``"waveform"``)
        num_features (int, optional): number of input features that the network will
            receive. (Default: ``1``)

    Shape:
        - Input: ``(batch, num_features, input_length)``
        - Output: ``(batch, num_classes, output_length)``, log-probabilities over classes.
    """

    def __init__(self, num_classes: int = 40, input_type: str = "waveform",
                 num_features: int = 1) -> None:
        super().__init__()
        if input_type not in ("waveform", "power_spectrum", "mfcc"):
            raise ValueError("input_type must be 'waveform', 'power_spectrum' or 'mfcc', got "
                             f"{input_type!r}")
        acoustic_features = 250 if input_type == "waveform" else num_features
        acoustic = _conv_relu_stack(_ACOUSTIC, acoustic_features, num_classes)
        if input_type == "waveform":
            front_end = _conv_relu_stack([(None, 250, 250, 160, 45)], num_features, num_classes)
            self.acoustic_model = nn.Sequential(front_end, acoustic)
        else:
            self.acoustic_model = acoustic

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        """
        Args:
            x (Tensor): tensor of dimension ``(batch_size, num_features, input_length)``.

        Returns:
            Tensor: predictor tensor of dimension ``(batch_size, number_of_classes,
            input_length)``.
        """
        return nn.functional.log_softmax(self.acoustic_model(x), dim=1)
