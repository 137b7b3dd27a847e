"""Streaming reads of long audio files in blocks: ``StreamReader``.

torchaudio's ``StreamReader`` decodes through FFmpeg; this one reads one audio stream through
soundfile, with the same names for what it shares: ``add_basic_audio_stream``,
``stream()``, ``seek``, ``get_src_stream_info``. A chunk is a ``(frames, channels)`` tensor,
as torchaudio's are; the last one may be shorter.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

import ember
from emberaudio._io import _SUBTYPE_TO_BITS_PER_SAMPLE, _open, _read

__all__ = ["SourceAudioStream", "StreamReader"]

# torchaudio's sample formats (FFmpeg's names; "p" is planar) and the dtype of each.
_SAMPLE_FORMATS = {
    "u8": "uint8", "u8p": "uint8", "s16": "int16", "s16p": "int16", "s32": "int32",
    "s32p": "int32", "flt": "float32", "fltp": "float32", "dbl": "float64",
    "dblp": "float64",
}


@dataclass
class SourceAudioStream:
    """What :meth:`StreamReader.get_src_stream_info` reports about the source audio.

    Attributes:
        media_type (str): ``"audio"``.
        codec (str): libsndfile's name of the encoding, lower case (``"pcm_16"``,
            ``"vorbis"``, ...).
        codec_long_name (str): libsndfile's description of the format and encoding.
        format (str): libsndfile's name of the container (``"WAV"``, ``"FLAC"``, ...).
        bit_rate (int): bits per second of the stored encoding; 0 where it is compressed.
        num_frames (int): the number of frames.
        bits_per_sample (int): 0 for compressed encodings.
        metadata (dict): the file's text tags (title, artist, ...) that are set.
        sample_rate (float): frames per second.
        num_channels (int): the number of channels.
    """

    media_type: str
    codec: str
    codec_long_name: str
    format: str
    bit_rate: int
    num_frames: int
    bits_per_sample: int
    metadata: dict
    sample_rate: float
    num_channels: int


class StreamReader:
    """Read an audio file chunk by chunk, without loading it whole.

    Args:
        src (path-like or file-like object): the audio file.
        format (str or None, optional): a hint kept for torchaudio's signature; the format
            is detected from the header.
        option (dict or None, optional): kept for torchaudio's signature; must be empty.
        buffer_size (int, optional): kept for torchaudio's signature.

    Examples::

        >>> reader = StreamReader("long.flac")
        >>> reader.add_basic_audio_stream(frames_per_chunk=16000)
        >>> for (chunk,) in reader.stream():
        ...     process(chunk)          # (16000, channels) float32
    """

    def __init__(self, src: str | os.PathLike | BinaryIO, format: str | None = None,
                 option: dict | None = None, buffer_size: int = 4096):
        if option:
            raise ValueError(f"StreamReader on soundfile takes no FFmpeg options, got {option}")
        self._src = src
        self._handle = _open(src, format)
        self._frames_per_chunk: int | None = None
        self._dtype = "float32"

    def __enter__(self) -> StreamReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    @property
    def num_src_streams(self) -> int:
        """The number of streams in the source: 1, its audio."""
        return 1

    @property
    def num_out_streams(self) -> int:
        """The number of output streams added: 0 or 1."""
        return 0 if self._frames_per_chunk is None else 1

    @property
    def default_audio_stream(self) -> int:
        """The index of the source's audio stream: 0."""
        return 0

    def get_src_stream_info(self, i: int) -> SourceAudioStream:
        """The properties of source stream ``i`` (0, the only one)."""
        if i != 0:
            raise IndexError(f"The source has one stream (index 0), got index {i}")
        handle = self._handle
        bits = _SUBTYPE_TO_BITS_PER_SAMPLE.get(handle.subtype, 0)
        tags = {key: value for key, value in handle.copy_metadata().items() if value}
        return SourceAudioStream(
            media_type="audio", codec=handle.subtype.lower(),
            codec_long_name=f"{handle.format_info}, {handle.subtype_info}",
            format=handle.format, bit_rate=bits * handle.samplerate * handle.channels,
            num_frames=handle.frames, bits_per_sample=bits, metadata=tags,
            sample_rate=float(handle.samplerate), num_channels=handle.channels)

    def add_basic_audio_stream(self, frames_per_chunk: int, buffer_chunk_size: int = 3, *,
                               stream_index: int | None = None, format: str | None = "fltp"
                               ) -> None:
        """Add the output stream: chunks of ``frames_per_chunk`` frames.

        Args:
            frames_per_chunk (int): frames per chunk (the last chunk may be shorter).
            buffer_chunk_size (int, optional): kept for torchaudio's signature; chunks are
                read on demand.
            stream_index (int or None, optional): the source stream, ``None`` or ``0``.
            format (str or None, optional): the sample format: ``"u8p"``, ``"s16p"``,
                ``"s32p"``, ``"fltp"``, ``"dblp"`` (or their interleaved forms without
                ``p``); ``None`` keeps float32. Default: ``"fltp"``.
        """
        if self._frames_per_chunk is not None:
            raise RuntimeError("This StreamReader already has its output stream; emberaudio's "
                               "reader decodes one output stream")
        if stream_index not in (None, 0):
            raise IndexError(f"The source has one stream (index 0), got stream_index "
                             f"{stream_index}")
        if (isinstance(frames_per_chunk, bool) or not isinstance(frames_per_chunk, int)
                or frames_per_chunk <= 0):
            raise ValueError(
                f"frames_per_chunk must be a positive integer, got {frames_per_chunk!r}")
        if format is not None and format not in _SAMPLE_FORMATS:
            raise ValueError(f"Unsupported sample format {format!r}; expected one of "
                             f"{sorted(_SAMPLE_FORMATS)}")
        self._dtype = _SAMPLE_FORMATS[format] if format is not None else "float32"
        self._frames_per_chunk = frames_per_chunk

    def seek(self, timestamp: float, mode: str = "precise") -> None:
        """Move to ``timestamp`` seconds from the start (the frame at or after it)."""
        if mode not in ("key", "any", "precise"):
            raise ValueError(f"mode must be 'key', 'any' or 'precise', got {mode!r}")
        if timestamp < 0:
            raise ValueError(f"timestamp must be non-negative, got {timestamp}")
        frame = min(int(np.ceil(timestamp * self._handle.samplerate - 1e-9)),
                    self._handle.frames)
        self._handle.seek(frame)

    def pop_chunks(self) -> tuple[ember.Tensor | None]:
        """Read the next chunk: a one-tuple of a ``(frames, channels)`` tensor, or
        ``(None,)`` at the end of the file."""
        if self._frames_per_chunk is None:
            raise RuntimeError("No output stream: call add_basic_audio_stream first")
        data = _read(self._handle, self._frames_per_chunk, self._dtype, self._src)
        if data.shape[0] == 0:
            return (None,)
        return (ember.from_numpy(np.ascontiguousarray(data)),)

    def stream(self, timeout: float | None = None, backoff: float = 10.0
               ) -> Iterator[tuple[ember.Tensor]]:
        """Iterate over the chunks, from the current position to the end of the file.

        Yields:
            tuple of one Tensor: the ``(frames, channels)`` chunk.
        """
        if self._frames_per_chunk is None:
            raise RuntimeError("No output stream: call add_basic_audio_stream first")
        while True:
            chunks = self.pop_chunks()
            if chunks[0] is None:
                return
            yield chunks
