"""DeepSpeech: fully connected layers around one bidirectional ReLU RNN (Hannun et al.)."""

from __future__ import annotations

import ember
from ember import nn

__all__ = ["DeepSpeech"]


class FullyConnected(nn.Module):
    """A linear layer, ReLU clipped at ``relu_max_clip``, and dropout.

    Args:
        n_feature (int): number of input features.
        n_hidden (int): internal hidden unit size.
        dropout (float): dropout probability (0 for none).
        relu_max_clip (int, optional): the clip of the ReLU. (Default: ``20``)
    """

    def __init__(self, n_feature: int, n_hidden: int, dropout: float,
                 relu_max_clip: int = 20) -> None:
        super().__init__()
        self.fc = nn.Linear(n_feature, n_hidden, bias=True)
        self.relu_max_clip = relu_max_clip
        self.dropout = dropout

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        x = nn.functional.hardtanh(nn.functional.relu(self.fc(x)), 0, self.relu_max_clip)
        if self.dropout:
            x = nn.functional.dropout(x, self.dropout, self.training)
        return x


class DeepSpeech(nn.Module):
    r"""DeepSpeech architecture from *Deep Speech: Scaling up end-to-end speech
    recognition*.

    Args:
        n_feature (int): number of input features.
        n_hidden (int, optional): internal hidden unit size. (Default: ``2048``)
        n_class (int, optional): number of output classes. (Default: ``40``)
        dropout (float, optional): dropout parameter. (Default: ``0.0``)

    Shape:
        - Input: ``(batch, channel=1, time, n_feature)``
        - Output: ``(batch, time, n_class)``, log-probabilities over classes.
    """

    def __init__(self, n_feature: int, n_hidden: int = 2048, n_class: int = 40,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.n_hidden = n_hidden
        self.fc1 = FullyConnected(n_feature, n_hidden, dropout)
        self.fc2 = FullyConnected(n_hidden, n_hidden, dropout)
        self.fc3 = FullyConnected(n_hidden, n_hidden, dropout)
        self.bi_rnn = nn.RNN(n_hidden, n_hidden, num_layers=1, nonlinearity="relu",
                             bidirectional=True)
        self.fc4 = FullyConnected(n_hidden, n_hidden, dropout)
        self.out = nn.Linear(n_hidden, n_class)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        """
        Args:
            x (Tensor): tensor of dimension ``(batch, channel, time, feature)``.

        Returns:
            Tensor: predictor tensor of dimension ``(batch, time, class)``.
        """
        x = self.fc3(self.fc2(self.fc1(x)))
        x = x.squeeze(1).transpose(0, 1)  # (time, batch, hidden)
        x, _ = self.bi_rnn(x)
        x = x[:, :, :self.n_hidden] + x[:, :, self.n_hidden:]  # forward + backward
        x = self.out(self.fc4(x)).permute(1, 0, 2)
        return nn.functional.log_softmax(x, dim=2)
