"""ember.hub, offline: a local hub repository, file:// downloads with the SHA-256 prefix check,
and a GitHub repository served by a replaced opener (never the network)."""

import hashlib
import io
import os
import textwrap
import zipfile

import numpy as np
import pytest

import ember
import ember.hub as hub

HUBCONF = textwrap.dedent('''
    """A tiny hub repository."""
    dependencies = ["numpy"]

    import ember.nn as nn


    def tiny(width=3):
        """A Linear layer of the given width."""
        return nn.Linear(2, width)


    def _private():
        return None
''')


@pytest.fixture
def hub_dir(tmp_path):
    saved = hub._hub_dir
    hub.set_dir(tmp_path / "hub")
    yield tmp_path / "hub"
    hub._hub_dir = saved


def _repo(path):
    path.mkdir()
    (path / "hubconf.py").write_text(HUBCONF)
    return path


def test_get_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("EMBER_HOME", str(tmp_path / "eh"))
    assert hub.get_dir() == str(tmp_path / "eh" / "hub")
    monkeypatch.delenv("EMBER_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "ember" / "hub")
    hub.set_dir(tmp_path / "mine")
    assert hub.get_dir() == str(tmp_path / "mine")


def test_local_repository(tmp_path, hub_dir):
    repo = _repo(tmp_path / "repo")
    model = hub.load(str(repo), "tiny", source="local", width=4)
    assert isinstance(model, ember.nn.Linear) and model.out_features == 4
    assert hub.list(str(repo)) == ["tiny"]
    assert "Linear layer" in hub.help(str(repo), "tiny")
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        hub.load(str(repo), "tiny", source="ftp")
    with pytest.raises(FileNotFoundError, match="hubconf.py"):
        hub.load(str(tmp_path), "tiny", source="local")


def test_download_with_hash_check(tmp_path):
    src = tmp_path / "weights.bin"
    src.write_bytes(b"ember" * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    dst = tmp_path / "out" / "w.bin"
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:8], progress=True)
    assert dst.read_bytes() == src.read_bytes()
    bad = tmp_path / "bad.bin"
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(src.as_uri(), str(bad), hash_prefix="0000", progress=False)
    assert not bad.exists() and not [p for p in os.listdir(tmp_path) if "partial" in p]


def test_load_state_dict_from_url_caches_and_checks(tmp_path, hub_dir):
    state = {"weight": ember.arange(6.0).reshape(2, 3)}
    tmp = tmp_path / "tmp.pt"
    ember.save(state, tmp)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()[:8]
    published = tmp_path / f"net-{digest}.pth"
    tmp.rename(published)
    got = hub.load_state_dict_from_url(published.as_uri(), check_hash=True, progress=False,
                                       weights_only=True)
    np.testing.assert_array_equal(got["weight"].numpy(), state["weight"].numpy())
    cached = hub_dir / "checkpoints" / published.name
    assert cached.exists()
    published.unlink()   # now only the cache has it
    again = hub.load_state_dict_from_url(published.as_uri(), progress=False)
    np.testing.assert_array_equal(again["weight"].numpy(), state["weight"].numpy())
    wrong = tmp_path / "net-deadbeef.pth"
    ember.save(state, wrong)
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(wrong.as_uri(), check_hash=True, progress=False)


class _Response(io.BytesIO):
    def info(self):
        return {"Content-Length": str(len(self.getvalue()))}


def test_github_repository_is_downloaded_once(monkeypatch, hub_dir):
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as z:
        z.writestr("owner-repo-abc123/hubconf.py", HUBCONF)
    asked = []

    def fake_urlopen(req):
        asked.append(req.full_url)
        return _Response(zbuf.getvalue())

    monkeypatch.setattr(hub, "urlopen", fake_urlopen)
    m = hub.load("owner/repo:v1", "tiny", trust_repo=True, width=2)
    assert m.out_features == 2
    assert asked == ["https://github.com/owner/repo/zipball/v1"]
    assert (hub_dir / "owner_repo_v1" / "hubconf.py").exists()
    assert "owner_repo" in (hub_dir / "trusted_list").read_text()
    hub.load("owner/repo:v1", "tiny", verbose=False)   # cached and trusted now: no download
    assert len(asked) == 1
    hub.load("owner/repo:v1", "tiny", force_reload=True)
    assert len(asked) == 2
    answers = iter(["n", "y"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    with pytest.raises(RuntimeError, match="Untrusted repository"):
        hub.load("someone/else", "tiny")          # "check": asked, answered no
    assert hub.load("someone/else", "tiny", trust_repo=False).out_features == 3  # yes
    assert "someone_else" in (hub_dir / "trusted_list").read_text()
    with pytest.warns(UserWarning, match="untrusted repository"):
        hub.load("third/repo", "tiny", trust_repo=None)
    with pytest.raises(ValueError, match="repo_owner/repo_name"):
        hub.load("norepo", "tiny", trust_repo=True)
