"""Audio files on soundfile (libsndfile): ``load``, ``save`` and ``info``.

The semantics are torchaudio's (its soundfile backend, which is what torchaudio did before it
moved its I/O to torchcodec): ``load`` gives ``(waveform, sample_rate)`` with the waveform
``(channels, frames)``; ``normalize=True`` gives float32 in [-1, 1]; ``normalize=False`` keeps
an integer WAV file's own sample type (uint8, int16, int32; int32 for 24-bit, the samples in
its top 24 bits) and a float WAV file's float32/float64, and has no effect on other formats.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import soundfile

import ember

__all__ = ["AudioMetaData", "info", "load", "save"]

_SUBTYPE_TO_BITS_PER_SAMPLE = {
    "PCM_S8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32, "PCM_U8": 8, "FLOAT": 32,
    "DOUBLE": 64, "ULAW": 8, "ALAW": 8, "IMA_ADPCM": 0, "MS_ADPCM": 0, "GSM610": 0,
    "VOX_ADPCM": 0, "G721_32": 0, "G723_24": 0, "G723_40": 0, "DWVW_12": 12, "DWVW_16": 16,
    "DWVW_24": 24, "DWVW_N": 0, "DPCM_8": 8, "DPCM_16": 16, "VORBIS": 0, "OPUS": 0,
    "ALAC_16": 16, "ALAC_20": 20, "ALAC_24": 24, "ALAC_32": 32, "MPEG_LAYER_I": 0,
    "MPEG_LAYER_II": 0, "MPEG_LAYER_III": 0,
}
_SUBTYPE_TO_ENCODING = {
    "PCM_S8": "PCM_S", "PCM_16": "PCM_S", "PCM_24": "PCM_S", "PCM_32": "PCM_S",
    "PCM_U8": "PCM_U", "FLOAT": "PCM_F", "DOUBLE": "PCM_F", "ULAW": "ULAW", "ALAW": "ALAW",
    "VORBIS": "VORBIS", "OPUS": "OPUS", "MPEG_LAYER_I": "MP3", "MPEG_LAYER_II": "MP3",
    "MPEG_LAYER_III": "MP3",
}
# The sample type ``load(normalize=False)`` keeps for a WAV file of each subtype.
_WAV_NATIVE_DTYPE = {
    "PCM_U8": "uint8", "PCM_S8": "int8", "PCM_16": "int16", "PCM_24": "int32",
    "PCM_32": "int32", "FLOAT": "float32", "DOUBLE": "float64",
}
_FORMAT_NAMES = {
    "wav": "WAV", "flac": "FLAC", "ogg": "OGG", "vorbis": "OGG", "opus": "OGG", "mp3": "MP3",
    "aiff": "AIFF", "aif": "AIFF", "au": "AU", "caf": "CAF", "w64": "W64", "rf64": "RF64",
    "sph": "NIST", "nis": "NIST", "nist": "NIST", "raw": "RAW",
}
# "data : 64000 (should be 19956)": the header promises more bytes than the file holds.
_SHORT_CHUNK = re.compile(r"^\s*data\s*:\s*(\d+)\s*\(should be (\d+)\)", re.MULTILINE)
# Sizes that streaming writers put in a header they cannot go back to fill in.
_UNKNOWN_SIZES = {0, 0x7FFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF - 8}


@dataclass
class AudioMetaData:
    """What :func:`info` reports about an audio file.

    Attributes:
        sample_rate (int): frames per second.
        num_frames (int): the number of frames (samples per channel).
        num_channels (int): the number of channels.
        bits_per_sample (int): bits per sample of the stored encoding; 0 for compressed
            encodings that have none (Vorbis, Opus, MP3, ADPCM).
        encoding (str): ``"PCM_S"``, ``"PCM_U"``, ``"PCM_F"``, ``"FLAC"``, ``"ULAW"``,
            ``"ALAW"``, ``"VORBIS"``, ``"OPUS"``, ``"MP3"`` or ``"UNKNOWN"``.
    """

    sample_rate: int
    num_frames: int
    num_channels: int
    bits_per_sample: int
    encoding: str


def _name(uri) -> str:
    if isinstance(uri, (str, os.PathLike)):
        return os.fspath(uri)
    name = getattr(uri, "name", None)
    return name if isinstance(name, str) else f"<{type(uri).__name__} object>"


def _check_source(uri) -> None:
    if isinstance(uri, (str, os.PathLike)):
        path = os.fspath(uri)
        if not os.path.exists(path):
            raise FileNotFoundError(f"Audio file not found: {path!r}")
        if os.path.isdir(path):
            raise IsADirectoryError(f"Expected an audio file, but {path!r} is a directory")
    elif not hasattr(uri, "read"):
        raise TypeError(
            f"Expected a path or a file-like object with read(), got {type(uri).__name__}")


def _open(uri, format: str | None = None) -> soundfile.SoundFile:
    """Opens ``uri`` for reading, turning libsndfile's failures into errors naming it."""
    _check_source(uri)
    if format is not None and _FORMAT_NAMES.get(format.lower()) == "RAW":
        raise ValueError("Headerless (raw) audio cannot be loaded: its sample rate, channels "
                         "and sample type are unknown")
    try:
        handle = soundfile.SoundFile(uri, "r")
    except (soundfile.LibsndfileError, RuntimeError) as error:
        raise RuntimeError(
            f"Failed to open the audio file {_name(uri)!r}: it is corrupt or in a format "
            f"libsndfile cannot read ({error})") from error
    _check_not_truncated(handle, uri)
    return handle


def _check_not_truncated(handle: soundfile.SoundFile, uri) -> None:
    found = _SHORT_CHUNK.search(handle.extra_info or "")
    if found is None:
        return
    declared, present = int(found.group(1)), int(found.group(2))
    if declared not in _UNKNOWN_SIZES and present < declared:
        handle.close()
        raise RuntimeError(
            f"The audio file {_name(uri)!r} is truncated: its header declares {declared} "
            f"bytes of samples but only {present} are present")


def _check_frames(frame_offset: int, num_frames: int) -> None:
    if not isinstance(frame_offset, int) or isinstance(frame_offset, bool) or frame_offset < 0:
        raise ValueError(f"frame_offset must be a non-negative integer, got {frame_offset!r}")
    if (not isinstance(num_frames, int) or isinstance(num_frames, bool)
            or (num_frames < 0 and num_frames != -1)):
        raise ValueError(
            f"num_frames must be a non-negative integer or -1 (to the end), got {num_frames!r}")


def _read_dtype(handle: soundfile.SoundFile, normalize: bool) -> str:
    if normalize or handle.format != "WAV":
        return "float32"
    if handle.subtype not in _WAV_NATIVE_DTYPE:
        raise ValueError(
            f"normalize=False cannot keep the samples of {handle.name!r} in their own type: "
            f"its encoding {handle.subtype} has no integer or float sample type; "
            "use normalize=True")
    return _WAV_NATIVE_DTYPE[handle.subtype]


def _read(handle: soundfile.SoundFile, frames: int, dtype: str, uri) -> np.ndarray:
    """Reads ``frames`` frames (-1: to the end) as a (frames, channels) array of ``dtype``."""
    # libsndfile reads 8-bit PCM as 16-bit (the byte in the high half): convert it back.
    read_as = "int16" if dtype in ("uint8", "int8") else dtype
    try:
        data = handle.read(frames, dtype=read_as, always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError) as error:
        raise RuntimeError(f"Failed to decode the audio file {_name(uri)!r} ({error})") from error
    if dtype == "uint8":
        data = ((data.astype(np.int32) >> 8) + 128).astype(np.uint8)
    elif dtype == "int8":
        data = (data >> 8).astype(np.int8)
    return data


def _to_tensor(data: np.ndarray, channels_first: bool) -> ember.Tensor:
    if channels_first:
        data = data.T
    return ember.from_numpy(np.ascontiguousarray(data))


def info(uri: str | os.PathLike | BinaryIO, format: str | None = None,
         buffer_size: int = 4096, backend: str | None = None) -> AudioMetaData:
    """Get the metadata of an audio file.

    Args:
        uri (path-like or file-like object): the audio file.
        format (str or None, optional): kept for torchaudio's signature; the format is
            detected from the file's header.
        buffer_size (int, optional): kept for torchaudio's signature (soundfile buffers
            file-like objects itself).
        backend (str or None, optional): ``None`` or ``"soundfile"``, the only backend.

    Returns:
        AudioMetaData

    Examples::

        >>> meta = emberaudio.info("speech.wav")
        >>> meta.sample_rate, meta.num_frames
    """
    _check_backend(backend)
    with _open(uri, format) as handle:
        encoding = ("FLAC" if handle.format == "FLAC"
                    else _SUBTYPE_TO_ENCODING.get(handle.subtype, "UNKNOWN"))
        return AudioMetaData(
            sample_rate=handle.samplerate, num_frames=handle.frames,
            num_channels=handle.channels,
            bits_per_sample=_SUBTYPE_TO_BITS_PER_SAMPLE.get(handle.subtype, 0),
            encoding=encoding)


def load(uri: str | os.PathLike | BinaryIO, frame_offset: int = 0, num_frames: int = -1,
         normalize: bool = True, channels_first: bool = True, format: str | None = None,
         buffer_size: int = 4096, backend: str | None = None) -> tuple[ember.Tensor, int]:
    """Load audio data from a file or a file-like object.

    Args:
        uri (path-like or file-like object): the audio file (WAV, FLAC, OGG/Vorbis, Opus,
            MP3, AIFF, ... whatever libsndfile reads).
        frame_offset (int, optional): frames to skip before reading. Default: ``0``.
        num_frames (int, optional): the most frames to read; ``-1`` reads to the end. Fewer
            come back where the file ends earlier. Default: ``-1``.
        normalize (bool, optional): ``True`` gives float32 samples in [-1, 1]. ``False``
            keeps an integer WAV file's own type (uint8 for 8-bit, int16, int32 for 24 and
            32 bits) and a float WAV file's float32 or float64; it has no effect on other
            formats. Default: ``True``.
        channels_first (bool, optional): ``True`` gives ``(channels, frames)``, ``False``
            gives ``(frames, channels)``. Default: ``True``.
        format (str or None, optional): a hint kept for torchaudio's signature; the format
            is detected from the header. ``"raw"`` (headerless) is refused.
        buffer_size (int, optional): kept for torchaudio's signature.
        backend (str or None, optional): ``None`` or ``"soundfile"``.

    Returns:
        (Tensor, int): the waveform and its sample rate.

    Examples::

        >>> waveform, sample_rate = emberaudio.load("speech.wav")
        >>> waveform.shape
        ember.Size([1, 16000])
    """
    _check_backend(backend)
    _check_frames(frame_offset, num_frames)
    with _open(uri, format) as handle:
        dtype = _read_dtype(handle, normalize)
        if frame_offset >= handle.frames > 0 or handle.frames == 0:
            data = np.zeros((0, handle.channels), dtype=dtype)
        else:
            if frame_offset:
                handle.seek(frame_offset)
            data = _read(handle, num_frames, dtype, uri)
    return _to_tensor(data, channels_first), handle.samplerate


def _check_backend(backend: str | None) -> None:
    if backend not in (None, "soundfile"):
        raise ValueError(f"emberaudio has one backend, 'soundfile'; got backend={backend!r}")


def _wav_subtype(dtype: str, encoding: str | None, bits_per_sample: int | None) -> str:
    if not encoding:
        if not bits_per_sample:
            subtype = {"uint8": "PCM_U8", "int16": "PCM_16", "int32": "PCM_32",
                       "float32": "FLOAT", "float64": "DOUBLE"}.get(dtype)
            if subtype is None:
                raise ValueError(f"Unsupported dtype for wav: {dtype}")
            return subtype
        if bits_per_sample == 8:
            return "PCM_U8"
        if bits_per_sample == 64:
            return "DOUBLE"
        return f"PCM_{bits_per_sample}"
    if encoding == "PCM_S":
        if not bits_per_sample:
            return "PCM_32"
        if bits_per_sample == 8:
            raise ValueError("wav does not support 8-bit signed PCM encoding.")
        if bits_per_sample == 64:
            raise ValueError("wav does not support 64-bit signed PCM encoding.")
        return f"PCM_{bits_per_sample}"
    if encoding == "PCM_U":
        if bits_per_sample in (None, 8):
            return "PCM_U8"
        raise ValueError("wav only supports 8-bit unsigned PCM encoding.")
    if encoding == "PCM_F":
        if bits_per_sample in (None, 32):
            return "FLOAT"
        if bits_per_sample == 64:
            return "DOUBLE"
        raise ValueError("wav only supports 32/64-bit float PCM encoding.")
    if encoding in ("ULAW", "ALAW"):
        if bits_per_sample in (None, 8):
            return encoding
        raise ValueError(f"wav only supports 8-bit {encoding.lower()} encoding.")
    raise ValueError(f"wav does not support {encoding}.")


def _subtype(dtype: str, ext: str, encoding: str | None, bits_per_sample: int | None) -> str:
    if ext == "wav":
        return _wav_subtype(dtype, encoding, bits_per_sample)
    if ext == "flac":
        if encoding:
            raise ValueError("flac does not support encoding.")
        if not bits_per_sample:
            return "PCM_16"
        if bits_per_sample > 24:
            raise ValueError("flac does not support bits_per_sample > 24.")
        return "PCM_S8" if bits_per_sample == 8 else f"PCM_{bits_per_sample}"
    if ext in ("ogg", "vorbis", "opus"):
        if bits_per_sample:
            raise ValueError("ogg/vorbis does not support bits_per_sample.")
        if encoding is None:
            return "OPUS" if ext == "opus" else "VORBIS"
        if encoding.lower() in ("vorbis", "opus"):
            return encoding.upper()
        raise ValueError(f"Unexpected encoding for ogg: {encoding}")
    if ext == "mp3":
        if "MP3" not in soundfile.available_formats():
            raise ValueError("mp3 is not supported by this build of libsndfile")
        if bits_per_sample or encoding not in (None, "MP3"):
            raise ValueError("mp3 does not support encoding or bits_per_sample.")
        return "MPEG_LAYER_III"
    if ext in ("sph", "nis", "nist"):
        if encoding in (None, "PCM_S"):
            return f"PCM_{bits_per_sample or 16}" if bits_per_sample != 8 else "PCM_S8"
        if encoding in ("ULAW", "ALAW"):
            return encoding
        raise ValueError(f"sph does not support {encoding}.")
    raise ValueError(f"Unsupported format: {ext}")


def save(uri: str | os.PathLike | BinaryIO, src: ember.Tensor, sample_rate: int,
         channels_first: bool = True, format: str | None = None, encoding: str | None = None,
         bits_per_sample: int | None = None, buffer_size: int = 4096,
         backend: str | None = None, compression: float | int | None = None) -> None:
    """Save audio data to a file or a file-like object.

    Args:
        uri (path-like or file-like object): where to write. The format comes from the
            extension, or from ``format`` (required for file-like objects).
        src (Tensor): the waveform, 2D: ``(channels, frames)`` or, with
            ``channels_first=False``, ``(frames, channels)``. Float samples are taken to be
            in [-1, 1]; integer ones are full-scale for their type.
        sample_rate (int): frames per second.
        channels_first (bool, optional): the layout of ``src``. Default: ``True``.
        format (str or None, optional): ``"wav"``, ``"flac"``, ``"ogg"``/``"vorbis"``,
            ``"opus"``, ``"mp3"``, ``"sph"``; overrides the extension.
        encoding (str or None, optional): for WAV, ``"PCM_S"``, ``"PCM_U"``, ``"PCM_F"``,
            ``"ULAW"`` or ``"ALAW"``; for OGG, ``"vorbis"`` or ``"opus"``. Default: the
            encoding of ``src``'s dtype (WAV), 16-bit (FLAC), Vorbis (OGG).
        bits_per_sample (int or None, optional): 8, 16, 24, 32 or 64.
        buffer_size (int, optional): kept for torchaudio's signature.
        backend (str or None, optional): ``None`` or ``"soundfile"``.
        compression (float, int or None, optional): not supported by libsndfile's writer
            here; a value is ignored with a warning, as torchaudio's soundfile backend did.

    Examples::

        >>> emberaudio.save("tone.flac", waveform, 16000, bits_per_sample=24)
    """
    _check_backend(backend)
    if not isinstance(src, ember.Tensor):
        raise TypeError(f"src must be a Tensor, got {type(src).__name__}")
    if src.ndim != 2:
        raise ValueError(f"Expected 2D Tensor, got {src.ndim}D.")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int) or sample_rate <= 0:
        raise ValueError(f"sample_rate must be a positive integer, got {sample_rate!r}")
    if compression is not None:
        warnings.warn("The soundfile backend does not support compression; it is ignored.",
                      stacklevel=2)
    if hasattr(uri, "write"):
        if format is None:
            raise RuntimeError("`format` is required when saving to file object.")
        ext = format.lower()
    elif format is not None:
        ext = format.lower()
    else:
        ext = os.fspath(uri).rsplit(".", 1)[-1].lower()
    if bits_per_sample not in (None, 8, 16, 24, 32, 64):
        raise ValueError(f"Invalid bits_per_sample: {bits_per_sample!r}; "
                         "expected 8, 16, 24, 32 or 64")
    dtype = str(src.dtype).removeprefix("ember.")
    subtype = _subtype(dtype, ext, encoding, bits_per_sample)
    data = src.detach().cpu().numpy()
    if channels_first:
        data = data.T
    # libsndfile writes int16/int32/float32/float64 samples: 8-bit ones are widened to 16 bits
    # (the byte in the high half), which it writes back as the same 8-bit values.
    if data.dtype == np.uint8:
        data = (data.astype(np.int16) - 128) << 8
    elif data.dtype == np.int8:
        data = data.astype(np.int16) << 8
    elif data.dtype == np.int64:
        raise ValueError("Unsupported dtype int64: save int16 or int32 samples, or floats in "
                         "[-1, 1]")
    elif data.dtype == np.float16:
        data = data.astype(np.float32)
    elif data.dtype == np.bool_ or not (np.issubdtype(data.dtype, np.integer)
                                        or np.issubdtype(data.dtype, np.floating)):
        raise ValueError(f"Unsupported dtype for audio samples: {src.dtype}")
    try:
        soundfile.write(uri, np.ascontiguousarray(data), sample_rate, subtype=subtype,
                        format=_FORMAT_NAMES.get(ext, ext.upper()))
    except (soundfile.LibsndfileError, RuntimeError, ValueError) as error:
        raise RuntimeError(f"Failed to save the audio file {_name(uri)!r} as {ext} "
                           f"({subtype}): {error}") from error
