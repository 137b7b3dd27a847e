"""emberaudio.models.decoder: CTC beam-search decoding in torchaudio's API
(``ctc_decoder``, ``CTCDecoder``, ``CTCHypothesis``, ``CTCDecoderLM``,
``CTCDecoderLMState``), written in pure Python (no flashlight-text)."""

from emberaudio.models.decoder._ctc_decoder import (
    CTCDecoder,
    CTCDecoderLM,
    CTCDecoderLMState,
    CTCHypothesis,
    ctc_decoder,
)

__all__ = ["CTCDecoder", "CTCDecoderLM", "CTCDecoderLMState", "CTCHypothesis", "ctc_decoder"]
