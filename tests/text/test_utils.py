"""embertext.utils: downloads (from file:// URLs), hashes and archive extraction."""

import gzip
import hashlib
import io
import os
import tarfile
import zipfile

import pytest

from embertext.utils import download_from_url, extract_archive, get_asset_local_path, validate_file


def test_download_from_url_and_hashes(tmp_path):
    source = tmp_path / "data.bin"
    source.write_bytes(b"x" * 100_000)
    sha = hashlib.sha256(source.read_bytes()).hexdigest()
    path = download_from_url(source.as_uri(), root=str(tmp_path / "out"), hash_value=sha)
    assert path == str(tmp_path / "out" / "data.bin")
    assert open(path, "rb").read() == source.read_bytes()
    # There already: not downloaded again, but checked.
    source.write_bytes(b"changed")
    assert download_from_url(source.as_uri(), root=str(tmp_path / "out"), hash_value=sha) == path
    with pytest.raises(RuntimeError, match="does not match"):
        download_from_url(source.as_uri(), path=path, hash_value="0" * 64)
    md5 = hashlib.md5(b"changed").hexdigest()
    other = download_from_url(source.as_uri(), path=str(tmp_path / "o2" / "f"),
                              hash_value=md5, hash_type="md5")
    assert open(other, "rb").read() == b"changed"
    with open(other, "rb") as f:
        assert validate_file(f, md5, "md5")
    with pytest.raises(ValueError, match="hash_type"):
        validate_file(io.BytesIO(b""), "x", "sha1")


def test_extract_archives(tmp_path):
    tar_path = tmp_path / "a.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        for name, data in {"d/one.txt": b"1", "d/sub/two.txt": b"22"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    files = extract_archive(str(tar_path), str(tmp_path / "t"))
    assert sorted(os.path.relpath(f, tmp_path / "t") for f in files) == [
        os.path.join("d", "one.txt"), os.path.join("d", "sub", "two.txt")]
    assert (tmp_path / "t" / "d" / "sub" / "two.txt").read_bytes() == b"22"

    zip_path = tmp_path / "a.zip"
    with zipfile.ZipFile(zip_path, "w") as z:
        z.writestr("z/x.txt", "x")
    assert extract_archive(str(zip_path)) == [str(tmp_path / "z" / "x.txt")]

    gz_path = tmp_path / "f.txt.gz"
    with gzip.open(gz_path, "wb") as f:
        f.write(b"gzipped")
    # as torchtext: a .gz file is extracted beside itself, whatever to_path says
    (out,) = extract_archive(str(gz_path), str(tmp_path / "g"))
    assert out == str(tmp_path / "f.txt")
    assert open(out, "rb").read() == b"gzipped"
    with pytest.raises(NotImplementedError, match="supported"):  # torchtext's error type
        extract_archive(str(tmp_path / "f.rar"))


def test_unsafe_members_are_refused(tmp_path):
    tar_path = tmp_path / "evil.tar"
    with tarfile.open(tar_path, "w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"!"))
    with pytest.raises(RuntimeError, match="unsafe member"):
        extract_archive(str(tar_path), str(tmp_path / "x"))
    assert not (tmp_path / "escape.txt").exists()
    zip_path = tmp_path / "evil.zip"
    with zipfile.ZipFile(zip_path, "w") as z:
        z.writestr("/abs/evil.txt", "!")
        z.writestr("../evil.txt", "!")
    with pytest.raises(RuntimeError, match="unsafe member"):
        extract_archive(str(zip_path), str(tmp_path / "x"))


def test_get_asset_local_path(tmp_path):
    local = tmp_path / "vocab.txt"
    local.write_text("a\n")
    assert get_asset_local_path(str(local)) == str(local)
    with pytest.raises(FileNotFoundError):
        get_asset_local_path(str(tmp_path / "missing.txt"))
