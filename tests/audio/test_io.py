"""emberaudio.load / save / info and io.StreamReader on files the tests write with soundfile."""

import io

import numpy as np
import pytest
import soundfile

import ember
import emberaudio
from emberaudio.io import StreamReader

RATE = 8000


def _signal(frames=1000, channels=2, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-0.9, 0.9, (frames, channels))).astype(np.float32)


def _write(path, subtype="PCM_16", frames=1000, channels=2, fmt=None):
    data = _signal(frames, channels)
    soundfile.write(path, data, RATE, subtype=subtype, format=fmt)
    return soundfile.read(path, dtype="float64", always_2d=True)[0]


@pytest.mark.parametrize("subtype, dtype, scale", [
    ("PCM_16", ember.int16, 2 ** 15), ("PCM_32", ember.int32, 2 ** 31),
    ("PCM_24", ember.int32, 2 ** 31), ("FLOAT", ember.float32, 1.0),
    ("DOUBLE", ember.float64, 1.0),
])
def test_load_wav_native_dtypes(tmp_path, subtype, dtype, scale):
    path = tmp_path / "x.wav"
    expected = _write(path, subtype)
    waveform, rate = emberaudio.load(path)
    assert rate == RATE and waveform.dtype == ember.float32 and waveform.shape == (2, 1000)
    np.testing.assert_allclose(waveform.numpy(), expected.T, atol=1e-7)
    raw, _ = emberaudio.load(path, normalize=False)
    assert raw.dtype == dtype
    np.testing.assert_allclose(raw.numpy().astype(np.float64) / scale, expected.T, atol=1e-7)


def test_load_uint8_wav_without_normalize(tmp_path):
    path = tmp_path / "u8.wav"
    expected = _write(path, "PCM_U8")
    raw, _ = emberaudio.load(path, normalize=False)
    assert raw.dtype == ember.uint8
    np.testing.assert_array_equal(raw.numpy().astype(np.int64) - 128,
                                  np.round(expected.T * 128).astype(np.int64))
    emberaudio.save(tmp_path / "back.wav", raw, RATE)
    assert soundfile.info(tmp_path / "back.wav").subtype == "PCM_U8"
    again, _ = emberaudio.load(tmp_path / "back.wav", normalize=False)
    np.testing.assert_array_equal(again.numpy(), raw.numpy())


def test_normalize_false_has_no_effect_on_flac(tmp_path):
    path = tmp_path / "x.flac"
    expected = _write(path, "PCM_16")
    raw, _ = emberaudio.load(path, normalize=False)
    assert raw.dtype == ember.float32
    np.testing.assert_allclose(raw.numpy(), expected.T, atol=1e-7)


def test_frame_offset_num_frames_channels_first(tmp_path):
    path = tmp_path / "x.wav"
    expected = _write(path, "FLOAT")
    part, _ = emberaudio.load(path, frame_offset=100, num_frames=250, channels_first=False)
    assert part.shape == (250, 2)
    np.testing.assert_array_equal(part.numpy(), expected[100:350].astype(np.float32))
    tail, _ = emberaudio.load(path, frame_offset=900, num_frames=500)
    assert tail.shape == (2, 100)
    past, _ = emberaudio.load(path, frame_offset=5000)
    assert past.shape == (2, 0)
    none, _ = emberaudio.load(path, num_frames=0)
    assert none.shape == (2, 0)
    with pytest.raises(ValueError, match="frame_offset"):
        emberaudio.load(path, frame_offset=-1)
    with pytest.raises(ValueError, match="num_frames"):
        emberaudio.load(path, num_frames=-2)


def test_file_like_objects(tmp_path):
    buffer = io.BytesIO()
    waveform = ember.from_numpy(_signal().T.copy())
    emberaudio.save(buffer, waveform, RATE, format="wav", encoding="PCM_F")
    buffer.seek(0)
    loaded, rate = emberaudio.load(buffer)
    assert rate == RATE
    np.testing.assert_array_equal(loaded.numpy(), waveform.numpy())
    buffer.seek(0)
    meta = emberaudio.info(buffer)
    assert (meta.num_frames, meta.num_channels, meta.encoding) == (1000, 2, "PCM_F")
    with pytest.raises(RuntimeError, match="`format` is required"):
        emberaudio.save(io.BytesIO(), waveform, RATE)


@pytest.mark.parametrize("name, kwargs, subtype, bits, encoding", [
    ("a.wav", {}, "FLOAT", 32, "PCM_F"),
    ("a.wav", {"bits_per_sample": 16}, "PCM_16", 16, "PCM_S"),
    ("a.wav", {"encoding": "PCM_S"}, "PCM_32", 32, "PCM_S"),
    ("a.wav", {"encoding": "PCM_S", "bits_per_sample": 24}, "PCM_24", 24, "PCM_S"),
    ("a.wav", {"encoding": "PCM_U"}, "PCM_U8", 8, "PCM_U"),
    ("a.wav", {"encoding": "PCM_F", "bits_per_sample": 64}, "DOUBLE", 64, "PCM_F"),
    ("a.wav", {"encoding": "ULAW"}, "ULAW", 8, "ULAW"),
    ("a.wav", {"encoding": "ALAW"}, "ALAW", 8, "ALAW"),
    ("a.flac", {}, "PCM_16", 16, "FLAC"),
    ("a.flac", {"bits_per_sample": 24}, "PCM_24", 24, "FLAC"),
    ("a.ogg", {}, "VORBIS", 0, "VORBIS"),
    ("a.mp3", {}, "MPEG_LAYER_III", 0, "MP3"),
    ("a.sph", {}, "PCM_16", 16, "PCM_S"),
])
def test_save_subtypes_and_info(tmp_path, name, kwargs, subtype, bits, encoding):
    if name.endswith(".mp3") and "MP3" not in soundfile.available_formats():
        pytest.skip("this libsndfile has no MP3")
    waveform = ember.from_numpy(_signal(2000).T.copy() * 0.5)
    emberaudio.save(tmp_path / name, waveform, RATE, **kwargs)
    assert soundfile.info(tmp_path / name).subtype == subtype
    meta = emberaudio.info(tmp_path / name)
    assert meta == emberaudio.AudioMetaData(RATE, meta.num_frames, 2, bits, encoding)
    loaded, _ = emberaudio.load(tmp_path / name)
    assert loaded.dtype == ember.float32 and loaded.shape[0] == 2
    if subtype in ("FLOAT", "DOUBLE", "PCM_32", "PCM_24"):
        np.testing.assert_allclose(loaded.numpy(), waveform.numpy(), atol=1e-6)
    elif subtype == "PCM_16":
        np.testing.assert_allclose(loaded.numpy(), waveform.numpy(), atol=2 ** -15)
    assert meta.num_frames == 2000 or subtype in ("VORBIS", "MPEG_LAYER_III")


def test_save_integer_tensors_keep_their_values(tmp_path):
    samples = np.array([[-32768, -1, 0, 1, 32767]], dtype=np.int16)
    emberaudio.save(tmp_path / "i.wav", ember.from_numpy(samples), RATE)
    assert soundfile.info(tmp_path / "i.wav").subtype == "PCM_16"
    raw, _ = emberaudio.load(tmp_path / "i.wav", normalize=False)
    np.testing.assert_array_equal(raw.numpy(), samples)
    norm, _ = emberaudio.load(tmp_path / "i.wav")
    np.testing.assert_array_equal(norm.numpy(), samples / 32768.0)


def test_save_channels_last_and_non_contiguous(tmp_path):
    data = ember.from_numpy(_signal(300, 3))  # (frames, channels)
    emberaudio.save(tmp_path / "c.wav", data, RATE, channels_first=False)
    loaded, _ = emberaudio.load(tmp_path / "c.wav")
    np.testing.assert_array_equal(loaded.numpy(), data.numpy().T)
    emberaudio.save(tmp_path / "t.wav", data.t(), RATE)  # a transposed view
    again, _ = emberaudio.load(tmp_path / "t.wav")
    np.testing.assert_array_equal(again.numpy(), data.numpy().T)


@pytest.mark.parametrize("kwargs, message", [
    ({"format": "flac", "encoding": "PCM_S"}, "flac does not support encoding"),
    ({"format": "flac", "bits_per_sample": 32}, "bits_per_sample > 24"),
    ({"format": "wav", "encoding": "PCM_S", "bits_per_sample": 8}, "8-bit signed"),
    ({"format": "wav", "encoding": "PCM_U", "bits_per_sample": 16}, "8-bit unsigned"),
    ({"format": "wav", "encoding": "PCM_F", "bits_per_sample": 16}, "32/64-bit float"),
    ({"format": "ogg", "bits_per_sample": 16}, "does not support bits_per_sample"),
    ({"format": "wav", "bits_per_sample": 12}, "Invalid bits_per_sample"),
    ({"format": "xyz"}, "Unsupported format: xyz"),
    ({"format": "wav", "encoding": "GSM"}, "wav does not support GSM"),
])
def test_save_refuses_bad_options(tmp_path, kwargs, message):
    waveform = ember.zeros(1, 10)
    with pytest.raises(ValueError, match=message):
        emberaudio.save(tmp_path / "x.wav", waveform, RATE, **kwargs)


def test_save_refuses_bad_tensors(tmp_path):
    with pytest.raises(ValueError, match="Expected 2D Tensor, got 1D"):
        emberaudio.save(tmp_path / "x.wav", ember.zeros(10), RATE)
    with pytest.raises(ValueError, match="Unsupported dtype for wav: int64"):
        emberaudio.save(tmp_path / "x.wav", ember.zeros(1, 10, dtype=ember.int64), RATE)
    with pytest.raises(ValueError, match="sample_rate"):
        emberaudio.save(tmp_path / "x.wav", ember.zeros(1, 10), 0)
    with pytest.warns(UserWarning, match="compression"):
        emberaudio.save(tmp_path / "x.flac", ember.zeros(1, 10), RATE, compression=5)


def test_nan_and_zero_frames_round_trip(tmp_path):
    empty = ember.zeros(2, 0)
    emberaudio.save(tmp_path / "e.wav", empty, RATE)
    loaded, _ = emberaudio.load(tmp_path / "e.wav")
    assert loaded.shape == (2, 0)
    assert emberaudio.info(tmp_path / "e.wav").num_frames == 0
    special = ember.tensor([[float("nan"), float("inf"), -1.0]])
    emberaudio.save(tmp_path / "n.wav", special, RATE)
    back, _ = emberaudio.load(tmp_path / "n.wav")
    np.testing.assert_array_equal(back.numpy(), special.numpy())


def test_errors_name_the_file(tmp_path):
    missing = tmp_path / "missing.wav"
    with pytest.raises(FileNotFoundError, match="missing.wav"):
        emberaudio.load(missing)
    corrupt = tmp_path / "corrupt.wav"
    corrupt.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk" * 4)
    with pytest.raises(RuntimeError, match="corrupt.wav.*corrupt or in a format"):
        emberaudio.load(corrupt)
    with pytest.raises(RuntimeError, match="corrupt.wav"):
        emberaudio.info(corrupt)
    text = tmp_path / "notes.txt"
    text.write_text("not audio at all " * 20)
    with pytest.raises(RuntimeError, match="notes.txt"):
        emberaudio.load(text)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        emberaudio.load(tmp_path)
    with pytest.raises(TypeError, match="path or a file-like"):
        emberaudio.load(3)
    with pytest.raises(ValueError, match="backend"):
        emberaudio.load(missing, backend="sox")


def test_truncated_file_is_an_error(tmp_path):
    path = tmp_path / "full.wav"
    _write(path, "PCM_16", frames=4000)
    truncated = tmp_path / "cut.wav"
    truncated.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(RuntimeError, match="cut.wav.* is truncated"):
        emberaudio.load(truncated)
    with pytest.raises(RuntimeError, match="truncated"):
        emberaudio.info(truncated)


def test_normalize_false_refuses_encodings_without_a_sample_type(tmp_path):
    emberaudio.save(tmp_path / "u.wav", ember.zeros(1, 100), RATE, encoding="ULAW")
    with pytest.raises(ValueError, match="ULAW"):
        emberaudio.load(tmp_path / "u.wav", normalize=False)


def test_stream_reader_chunks_concatenate_to_load(tmp_path):
    path = tmp_path / "long.flac"
    _write(path, "PCM_16", frames=10_001, channels=2)
    full, _ = emberaudio.load(path, channels_first=False)
    with StreamReader(path) as reader:
        assert reader.num_out_streams == 0
        source = reader.get_src_stream_info(0)
        assert (source.sample_rate, source.num_channels, source.num_frames) == (RATE, 2, 10_001)
        assert source.format == "FLAC" and source.bits_per_sample == 16
        reader.add_basic_audio_stream(frames_per_chunk=4000)
        chunks = [chunk for (chunk,) in reader.stream()]
    assert [c.shape[0] for c in chunks] == [4000, 4000, 2001]
    assert all(c.shape[1] == 2 and c.dtype == ember.float32 for c in chunks)
    np.testing.assert_array_equal(np.concatenate([c.numpy() for c in chunks]), full.numpy())


def test_stream_reader_seek_and_formats(tmp_path):
    path = tmp_path / "x.wav"
    _write(path, "PCM_16", frames=RATE, channels=1)
    raw, _ = emberaudio.load(path, normalize=False, channels_first=False)
    reader = StreamReader(open(path, "rb"))
    reader.add_basic_audio_stream(1000, format="s16p")
    reader.seek(0.5)
    (chunk,) = next(iter(reader.stream()))
    assert chunk.dtype == ember.int16
    np.testing.assert_array_equal(chunk.numpy(), raw.numpy()[RATE // 2:RATE // 2 + 1000])
    with pytest.raises(RuntimeError, match="already has its output stream"):
        reader.add_basic_audio_stream(10)
    reader.close()
    fresh = StreamReader(path)
    with pytest.raises(ValueError, match="frames_per_chunk"):
        fresh.add_basic_audio_stream(0)
    with pytest.raises(ValueError, match="sample format"):
        fresh.add_basic_audio_stream(10, format="s24")
    with pytest.raises(RuntimeError, match="add_basic_audio_stream first"):
        next(fresh.stream())
    with pytest.raises(IndexError):
        fresh.get_src_stream_info(1)
