"""emberaudio.functional: audio ops as functions on ember tensors, in torchaudio's names."""

from emberaudio.functional._alignment import TokenSpan, forced_align, merge_tokens
from emberaudio.functional._effects import apply_codec, dither, fade, vad
from emberaudio.functional._multichannel import (
    apply_beamforming,
    frechet_distance,
    mvdr_weights_rtf,
    mvdr_weights_souden,
    psd,
    rtf_evd,
    rtf_power,
)
from emberaudio.functional._resample import resample, speed
from emberaudio.functional._rnnt import rnnt_loss
from emberaudio.functional._spectral import (
    fftconvolve,
    griffinlim,
    inverse_spectrogram,
    phase_vocoder,
    pitch_shift,
    spectral_centroid,
    spectrogram,
)
from emberaudio.functional.filtering import (
    allpass_biquad,
    band_biquad,
    bandpass_biquad,
    bandreject_biquad,
    bass_biquad,
    biquad,
    contrast,
    dcshift,
    deemph_biquad,
    deemphasis,
    equalizer_biquad,
    filtfilt,
    flanger,
    gain,
    highpass_biquad,
    lfilter,
    loudness,
    lowpass_biquad,
    overdrive,
    phaser,
    preemphasis,
    riaa_biquad,
    treble_biquad,
)
from emberaudio.functional.functional import (
    DB_to_amplitude,
    add_noise,
    amplitude_to_DB,
    compute_deltas,
    convolve,
    create_dct,
    detect_pitch_frequency,
    edit_distance,
    linear_fbanks,
    mask_along_axis,
    mask_along_axis_iid,
    melscale_fbanks,
    mu_law_decoding,
    mu_law_encoding,
    sliding_window_cmn,
)

__all__ = [
    "TokenSpan", "forced_align", "merge_tokens",
    "DB_to_amplitude", "add_noise", "allpass_biquad", "amplitude_to_DB", "band_biquad",
    "bandpass_biquad", "bandreject_biquad", "bass_biquad", "biquad", "compute_deltas",
    "contrast", "convolve", "create_dct", "dcshift", "deemph_biquad", "deemphasis",
    "detect_pitch_frequency", "edit_distance", "equalizer_biquad", "filtfilt", "flanger",
    "gain", "highpass_biquad", "lfilter", "linear_fbanks", "loudness", "lowpass_biquad",
    "mask_along_axis", "mask_along_axis_iid", "melscale_fbanks", "mu_law_decoding",
    "mu_law_encoding", "overdrive", "phaser", "preemphasis", "resample", "riaa_biquad", "rnnt_loss",
    "sliding_window_cmn", "speed", "treble_biquad", "fade",
    "apply_beamforming", "apply_codec", "dither", "fftconvolve", "frechet_distance", "griffinlim",
    "inverse_spectrogram", "mvdr_weights_rtf", "mvdr_weights_souden", "phase_vocoder",
    "pitch_shift", "psd", "rtf_evd", "rtf_power", "spectral_centroid", "spectrogram", "vad",
]
