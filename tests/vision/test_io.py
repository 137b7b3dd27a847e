"""embervision.io against Pillow, which decodes the same files independently."""

import io

import numpy as np
import pytest
from PIL import Image

import ember
from embervision.io import (
    ImageReadMode,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    read_file,
    read_image,
    write_file,
    write_jpeg,
    write_png,
)


@pytest.fixture
def rgb():
    return np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)


def _png(arr, mode):
    buf = io.BytesIO()
    Image.fromarray(arr, mode).save(buf, format="PNG")
    return buf.getvalue()


def _tensor(raw):
    return ember.from_numpy(np.frombuffer(raw, np.uint8).copy())


def test_read_write_file_roundtrip(tmp_path):
    data = ember.from_numpy(np.arange(300, dtype=np.int64).astype(np.uint8))
    write_file(tmp_path / "x.bin", data)
    assert (tmp_path / "x.bin").read_bytes() == bytes(range(256)) + bytes(range(44))
    back = read_file(tmp_path / "x.bin")
    assert back.dtype == ember.uint8 and back.shape == (300,)
    np.testing.assert_array_equal(back.numpy(), data.numpy())


def test_decode_png_is_chw_uint8(rgb):
    out = decode_png(_tensor(_png(rgb, "RGB")))
    assert out.dtype == ember.uint8 and tuple(out.shape) == (3, 5, 7)
    np.testing.assert_array_equal(out.numpy(), rgb.transpose(2, 0, 1))


@pytest.mark.parametrize("mode, channels", [
    (ImageReadMode.GRAY, 1), (ImageReadMode.GRAY_ALPHA, 2), (ImageReadMode.RGB, 3),
    (ImageReadMode.RGB_ALPHA, 4), ("RGBA", 4), ("gray", 1),
])
def test_modes(rgb, mode, channels):
    out = decode_image(_tensor(_png(rgb, "RGB")), mode=mode)
    assert tuple(out.shape) == (channels, 5, 7)
    if channels == 1:
        expected = np.asarray(Image.fromarray(rgb).convert("L"))
        np.testing.assert_array_equal(out.numpy()[0], expected)
    if channels == 4:
        assert (out.numpy()[3] == 255).all()


def test_unchanged_keeps_gray_and_alpha(rgb):
    gray = rgb[:, :, 0]
    assert tuple(decode_png(_tensor(_png(gray, "L"))).shape) == (1, 5, 7)
    rgba = np.concatenate([rgb, rgb[:, :, :1]], axis=2)
    out = decode_png(_tensor(_png(rgba, "RGBA")))
    np.testing.assert_array_equal(out.numpy(), rgba.transpose(2, 0, 1))


def test_palette_png_expands_to_rgb(rgb):
    img = Image.fromarray(rgb).convert("P")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    out = decode_png(_tensor(buf.getvalue()))
    np.testing.assert_array_equal(out.numpy(), np.asarray(img.convert("RGB")).transpose(2, 0, 1))


def test_encode_png_roundtrip(rgb, tmp_path):
    t = ember.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1)))
    np.testing.assert_array_equal(decode_png(encode_png(t, compression_level=9)).numpy(), t.numpy())
    write_png(t, tmp_path / "a.png")
    np.testing.assert_array_equal(read_image(tmp_path / "a.png").numpy(), t.numpy())
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "a.png")), rgb)


def test_jpeg_matches_pillow(rgb, tmp_path):
    t = ember.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1)))
    data = encode_jpeg(t, quality=90)
    assert data.numpy()[:2].tobytes() == b"\xff\xd8"
    decoded = decode_jpeg(data)
    expected = np.asarray(Image.open(io.BytesIO(data.numpy().tobytes())))
    np.testing.assert_array_equal(decoded.numpy(), expected.transpose(2, 0, 1))
    write_jpeg(t, tmp_path / "a.jpg")
    assert tuple(read_image(str(tmp_path / "a.jpg")).shape) == (3, 5, 7)
    assert len(decode_jpeg([data, data])) == 2
    assert len(encode_jpeg([t, t])) == 2


def test_decode_image_from_path(rgb, tmp_path):
    Image.fromarray(rgb).save(tmp_path / "p.png")
    np.testing.assert_array_equal(decode_image(tmp_path / "p.png").numpy(),
                                  rgb.transpose(2, 0, 1))


def test_exif_orientation(tmp_path, rgb):
    img = Image.fromarray(rgb)
    exif = img.getexif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    img.save(tmp_path / "o.jpg", exif=exif, quality=95)
    plain = read_image(tmp_path / "o.jpg")
    turned = read_image(tmp_path / "o.jpg", apply_exif_orientation=True)
    assert tuple(plain.shape) == (3, 5, 7) and tuple(turned.shape) == (3, 7, 5)


def test_truncated_file_names_the_file(rgb, tmp_path):
    raw = _png(rgb, "RGB")
    path = tmp_path / "broken.png"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(RuntimeError, match="broken.png"):
        read_image(path)
    path.write_bytes(b"not an image at all")
    with pytest.raises(RuntimeError, match="broken.png"):
        decode_image(path)


def test_bad_inputs():
    with pytest.raises(ValueError, match="1-D uint8"):
        decode_png(ember.zeros(3, 3, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="empty"):
        decode_image(ember.zeros(0, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="PNG"):
        decode_png(ember.zeros(10, dtype=ember.uint8))
    with pytest.raises(ValueError, match="unknown image read mode"):
        decode_image(ember.zeros(4, dtype=ember.uint8), mode="CMYK")
    with pytest.raises(ValueError, match="quality"):
        encode_jpeg(ember.zeros(3, 2, 2, dtype=ember.uint8), quality=0)
    with pytest.raises(RuntimeError, match="uint8"):
        encode_png(ember.zeros(3, 2, 2))
    with pytest.raises(RuntimeError, match="channels"):
        encode_png(ember.zeros(2, 2, 2, dtype=ember.uint8))
    with pytest.raises(ValueError, match="Compression"):
        encode_png(ember.zeros(3, 2, 2, dtype=ember.uint8), compression_level=10)


def test_sixteen_bit_png(tmp_path):
    arr = np.array([[0, 1000], [40000, 65535]], dtype=np.uint16)
    Image.fromarray(arr).save(tmp_path / "d.png")
    out = read_image(tmp_path / "d.png")
    assert out.dtype == ember.int32
    np.testing.assert_array_equal(out.numpy()[0], arr.astype(np.int32))


def test_decode_gif_and_webp(rgb):
    from embervision.io import decode_gif, decode_webp

    frames = [Image.fromarray(rgb), Image.fromarray(255 - rgb)]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    out = decode_gif(_tensor(buf.getvalue()))
    assert out.dtype == ember.uint8 and tuple(out.shape) == (2, 3, 5, 7)
    reread = Image.open(io.BytesIO(buf.getvalue()))
    expected = []
    for k in range(2):
        reread.seek(k)
        expected.append(np.asarray(reread.convert("RGB")).transpose(2, 0, 1))
    np.testing.assert_array_equal(out.numpy(), np.stack(expected))
    one = io.BytesIO()
    frames[0].save(one, format="GIF")
    assert tuple(decode_gif(_tensor(one.getvalue())).shape) == (3, 5, 7)
    webp = io.BytesIO()
    Image.fromarray(rgb).save(webp, format="WEBP", lossless=True)
    np.testing.assert_array_equal(decode_webp(_tensor(webp.getvalue())).numpy(),
                                  rgb.transpose(2, 0, 1))
    np.testing.assert_array_equal(decode_image(_tensor(webp.getvalue())).numpy(),
                                  rgb.transpose(2, 0, 1))
    with pytest.raises(RuntimeError, match="GIF"):
        decode_gif(_tensor(webp.getvalue()))
