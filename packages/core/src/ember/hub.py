"""``ember.hub``: models published as a ``hubconf.py`` in a repository, and checkpoints by
URL, as ``torch.hub``.

A hub repository is a directory (or a GitHub repository, downloaded once as a zip) with a
``hubconf.py`` whose public functions build models: ``ember.hub.load(repo_or_dir, name)``
imports it and calls ``name``. ``source="local"`` takes a directory on disk and needs no
network; a GitHub repository is looked for in the cache first (:func:`get_dir`) and
downloaded only when it is missing or ``force_reload=True``.

The cache is ``$EMBER_HOME/hub`` (``$XDG_CACHE_HOME/ember/hub``, ``~/.cache/ember/hub`` by
default); checkpoints go in its ``checkpoints`` folder, where embervision's weights go too
(``embervision.models`` has its own ``load_state_dict_from_url`` on the same folder).

Example::

    >>> model = ember.hub.load("path/to/repo", "resnet18", source="local", weights=None)
    >>> state = ember.hub.load_state_dict_from_url("https://example.org/resnet18-f37072fd.pth")
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import typing
import urllib.parse
import urllib.request
import warnings
import zipfile

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

ENV_EMBER_HOME = "EMBER_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
DEFAULT_CACHE_DIR = "~/.cache"
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")

_hub_dir: str | None = None
urlopen = urllib.request.urlopen   # tests replace it: ember.hub.urlopen


def get_dir() -> str:
    """The hub cache directory: the one :func:`set_dir` set, else ``$EMBER_HOME/hub``, else
    ``$XDG_CACHE_HOME/ember/hub``, else ``~/.cache/ember/hub``."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.environ.get(ENV_EMBER_HOME) or os.path.join(
        os.environ.get(ENV_XDG_CACHE_HOME, os.path.expanduser(DEFAULT_CACHE_DIR)), "ember")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use ``d`` as the hub cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# -- downloads ------------------------------------------------------------------------------

class _Progress:
    """A tqdm bar when tqdm is installed, else a line on stderr every 10%."""

    def __init__(self, total, enabled: bool):
        self.bar = None
        self.total, self.done, self.shown = total, 0, -1
        self.enabled = enabled
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)
            except ImportError:
                pass

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled and self.total:
            tenth = 10 * self.done // self.total
            if tenth != self.shown:
                self.shown = tenth
                sys.stderr.write(f"\r{100 * self.done // self.total:3d}% of "
                                 f"{self.total} bytes")
                if self.done >= self.total:
                    sys.stderr.write("\n")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download ``url`` to the file ``dst``: into a temporary file beside it, checked, then
    renamed, so ``dst`` never holds a partial download.

    Args:
        url (str): the URL (``http(s)://`` or ``file://``).
        dst (str): the file to write.
        hash_prefix (str, optional): the downloaded bytes' SHA-256 must start with it, else
            ``RuntimeError`` (and ``dst`` is not written).
        progress (bool): show a progress bar on stderr (tqdm when installed).
    """
    req = urllib.request.Request(url, headers={"User-Agent": "ember.hub"})
    u = urlopen(req)
    try:
        meta = u.info() if hasattr(u, "info") else {}
        length = meta.get("Content-Length") if hasattr(meta, "get") else None
        total = int(length) if length else None
        dst = os.path.expanduser(dst)
        folder = os.path.dirname(os.path.abspath(dst))
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(dst) + ".", suffix=".partial",
                                   dir=folder)
        sha = hashlib.sha256() if hash_prefix is not None else None
        bar = _Progress(total, progress)
        try:
            with os.fdopen(fd, "wb") as f:
                while True:
                    chunk = u.read(READ_DATA_CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    if sha is not None:
                        sha.update(chunk)
                    bar.update(len(chunk))
            bar.close()
            if sha is not None:
                digest = sha.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                       f'"{digest}")')
            os.replace(tmp, dst)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    finally:
        if hasattr(u, "close"):
            u.close()


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None,
                             weights_only: bool = False) -> dict[str, typing.Any]:
    """Load the checkpoint at ``url``, downloading it into ``model_dir`` the first time.

    Args:
        url (str): the checkpoint's URL.
        model_dir (str, optional): where it is kept (``get_dir()/checkpoints``).
        map_location: as in :func:`ember.load`.
        progress (bool): show a progress bar while downloading.
        check_hash (bool): check the file's SHA-256 against the hex digits after the last
            ``-`` of its name (``resnet18-f37072fd.pth``), PyTorch's convention.
        file_name (str, optional): the name to keep it under (the URL's file name).
        weights_only (bool): passed to :func:`ember.load` (as in PyTorch, False by default:
            only load checkpoints you trust, or pass True).

    Returns:
        the loaded object (a state dict).
    """
    from ember.serialization import load as _load

    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


# -- hub repositories -----------------------------------------------------------------------

def _parse_repo_info(github: str):
    if ":" in github:
        repo_info, ref = github.split(":", 1)
    else:
        repo_info, ref = github, None
    if "/" not in repo_info:
        raise ValueError(f'Invalid input: repo_or_dir should be of the form '
                         f'"repo_owner/repo_name[:ref]", got {github!r}')
    owner, name = repo_info.split("/", 1)
    return owner, name, ref or "main"


def _check_trust(owner: str, name: str, hub_dir: str, trust_repo) -> None:
    trusted = os.path.join(hub_dir, "trusted_list")
    known = set()
    if os.path.exists(trusted):
        with open(trusted) as f:
            known = {line.strip() for line in f}
    entry = f"{owner}_{name}"
    if trust_repo is True or entry in known or owner == "pytorch":
        pass
    elif trust_repo is None:
        warnings.warn("You are about to download and run code from an untrusted repository "
                      f"({owner}/{name}). In a future release, this won't be allowed. To add "
                      "the repository to your trusted list, pass trust_repo=False (you will be "
                      "asked) or trust_repo=True.", UserWarning, stacklevel=4)
    else:  # False or "check": ask, as PyTorch does
        answer = input(f"The repository {owner}/{name} does not belong to the list of trusted "
                       "repositories and as such cannot be downloaded. Do you trust this "
                       "repository and wish to add it to the trusted list of repositories "
                       "(y/N)?")
        if answer.lower() not in ("y", "yes"):
            raise RuntimeError("Untrusted repository.")
    os.makedirs(hub_dir, exist_ok=True)
    if entry not in known:
        with open(trusted, "a") as f:
            f.write(entry + "\n")


def _get_cache_or_reload(github: str, force_reload: bool, trust_repo, verbose: bool) -> str:
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    normalized_br = ref.replace("/", "_")
    repo_dir = os.path.join(hub_dir, f"{owner}_{name}_{normalized_br}")
    _check_trust(owner, name, hub_dir, trust_repo)
    if os.path.exists(repo_dir) and not force_reload:
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    cached_zip = os.path.join(hub_dir, normalized_br + ".zip")
    if verbose:
        sys.stderr.write(f'Downloading: "{url}" to {cached_zip}\n')
    download_url_to_file(url, cached_zip, progress=False)
    try:
        with zipfile.ZipFile(cached_zip) as z:
            root = z.namelist()[0].split("/")[0]
            extracted = os.path.join(hub_dir, root)
            if os.path.exists(extracted):
                shutil.rmtree(extracted)
            z.extractall(hub_dir)
        if os.path.exists(repo_dir):
            shutil.rmtree(repo_dir)
        shutil.move(extracted, repo_dir)
    finally:
        os.remove(cached_zip)
    return repo_dir


def _import_hubconf(repo_dir: str):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} does not exist: a hub repository needs a "
                                f"{MODULE_HUBCONF}")
    spec = importlib.util.spec_from_file_location(f"hubconf_{abs(hash(repo_dir))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    missing = [d for d in getattr(module, VAR_DEPENDENCY, []) if
               importlib.util.find_spec(d) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _repo_dir(repo_or_dir: str, source: str, force_reload: bool, trust_repo,
              verbose: bool) -> str:
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return os.path.expanduser(repo_or_dir)
    return _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose)


def _entry(module, model: str):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo="check", verbose: bool = True):
    """The entry points (public callables) of a hub repository's ``hubconf.py``.

    Args:
        github (str): ``"owner/name[:ref]"``, or a directory with ``source`` ... see
            :func:`load` (``list`` takes GitHub repositories, as PyTorch's; a local
            directory works too).
        force_reload (bool): download again even if cached.
        trust_repo: as in :func:`load`.
    """
    source = "local" if os.path.isdir(os.path.expanduser(github)) else "github"
    module = _import_hubconf(_repo_dir(github, source, force_reload, trust_repo, verbose))
    return [name for name, f in vars(module).items()
            if callable(f) and not name.startswith("_") and not isinstance(f, type(os))]


def help(github: str, model: str, force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo="check"):
    """The docstring of entry point ``model`` of a hub repository."""
    source = "local" if os.path.isdir(os.path.expanduser(github)) else "github"
    module = _import_hubconf(_repo_dir(github, source, force_reload, trust_repo, True))
    return _entry(module, model).__doc__


def load(repo_or_dir: str, model: str, *args, source: str = "github", trust_repo="check",
         force_reload: bool = False, verbose: bool = True, skip_validation: bool = False,
         **kwargs):
    """Build model ``model`` from a hub repository: ``hubconf.model(*args, **kwargs)``.

    Args:
        repo_or_dir (str): ``"owner/name[:ref]"`` with ``source="github"`` (downloaded once
            into :func:`get_dir`), or a directory with ``source="local"``.
        model (str): the entry point's name.
        source (str): ``"github"`` or ``"local"``.
        trust_repo: for GitHub: ``True``; ``False`` or ``"check"``: a repository not in the
            trusted list of the cache (PyTorch's own are trusted) is only used if you answer
            "y" to a prompt; None: warn and use it.
        force_reload (bool): download again even if cached.
        verbose (bool): say when the cache is used.

    Example::

        >>> model = ember.hub.load("./my_models", "tiny_net", source="local", width=8)
    """
    module = _import_hubconf(_repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose))
    return _entry(module, model)(*args, **kwargs)



# typing and __future__ names used by the annotations above: not part of the public namespace
del annotations
