"""Downloading files with a progress bar and a hash check, shared by datasets and weights.

A file is fetched to ``<name>.partial`` next to its destination and renamed only after its
hash has been checked, so that an interrupted or corrupt download is never taken for the
file: the next call fetches it again.
"""

from __future__ import annotations

import hashlib
import html.parser
import http.cookiejar
import os
import urllib.parse
import urllib.request

__all__ = ["calculate_hash", "download_file", "download_google_drive_file"]

USER_AGENT = "embervision"
_CHUNK = 1024 * 1024


def calculate_hash(path, algorithm: str = "md5", chunk_size: int = _CHUNK) -> str:
    """The hex digest of a file's contents with ``hashlib``'s ``algorithm``."""
    h = hashlib.new(algorithm) if algorithm != "md5" else hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def _progress(total, desc, enabled):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc)


def download_file(url: str, path, *, hash_value: str | None = None, algorithm: str = "md5",
                  hash_prefix: bool = False, progress: bool = True) -> str:
    """Downloads ``url`` to ``path`` and checks its hash.

    Args:
        url (str): the address (``http(s)://``, ``ftp://`` or ``file://``).
        path (str): where the file goes.
        hash_value (str, optional): the expected hex digest (or its start, with
            ``hash_prefix``).
        algorithm (str): ``"md5"`` or ``"sha256"``. Default: ``"md5"``.
        hash_prefix (bool): ``hash_value`` is only the digest's first characters.
        progress (bool): show a tqdm progress bar. Default: True.

    Raises:
        RuntimeError: the downloaded file does not have the expected hash (it is deleted).
    """
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request) as response:
        return _save_response(response, path, url, hash_value=hash_value, algorithm=algorithm,
                              hash_prefix=hash_prefix, progress=progress)


def _save_response(response, path, url: str, *, head: bytes = b"", hash_value=None,
                   algorithm="md5", hash_prefix=False, progress=True) -> str:
    # ``head``: bytes already read from ``response`` (to look at what it is) that start it.
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = path + ".partial"
    try:
        with open(partial, "wb") as out:
            length = response.headers.get("Content-Length")
            bar = _progress(int(length) if length else None, os.path.basename(path), progress)
            try:
                chunk = head or response.read(_CHUNK)
                while chunk:
                    out.write(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
                    chunk = response.read(_CHUNK)
            finally:
                if bar is not None:
                    bar.close()
        if hash_value is not None:
            digest = calculate_hash(partial, algorithm)
            ok = digest.startswith(hash_value) if hash_prefix else digest == hash_value
            if not ok:
                raise RuntimeError(
                    f"The file downloaded from {url} has {algorithm} {digest}, expected "
                    f"{hash_value}{'...' if hash_prefix else ''}: it is corrupt or incomplete "
                    "and was deleted. Try again."
                )
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return path


# -- Google Drive ---------------------------------------------------------------------------

# NOTE [ Google Drive's confirmation page ]
# Google Drive answers a download link of a file too large for its virus scan with an HTML
# page ("Google Drive - Virus scan warning") instead of the file. Older pages set a
# ``download_warning_*`` cookie whose value is the token to send back as ``confirm=``; newer
# ones hold a form (``id="download-form"``) whose action and hidden fields make the address
# of the file. A page titled "Quota exceeded" means the file cannot be had until later. So
# the first answer is looked at before it is saved: an HTML page is parsed and followed (once,
# for the confirmation), and any other page from Drive is an error rather than a saved file.
GOOGLE_DRIVE_URL = "https://drive.google.com/uc"


class _DrivePage(html.parser.HTMLParser):
    """The title and the forms (action, hidden fields) of an HTML page."""

    def __init__(self):
        super().__init__()
        self.title = ""
        self.forms = []
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "title":
            self._in_title = True
        elif tag == "form":
            self.forms.append((attrs.get("id"), attrs.get("action") or "", {}))
        elif tag == "input" and self.forms and attrs.get("name"):
            self.forms[-1][2][attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def _drive_page(response, head: bytes):
    """The parsed page if ``response`` is an HTML page, else None."""
    if "text/html" not in (response.headers.get("Content-Type") or "").lower():
        return None
    page = _DrivePage()
    page.feed((head + response.read()).decode("utf-8", errors="replace"))
    page.close()
    return page


def _confirmed_url(url: str, page: _DrivePage, cookies) -> str | None:
    """Where the file is, from a virus-scan-warning page; None for another page."""
    for cookie in cookies:
        if cookie.name.startswith("download_warning"):
            return _with_query(url, confirm=cookie.value)
    for form_id, action, fields in page.forms:
        if form_id == "download-form" and action:
            return _with_query(urllib.parse.urljoin(url, action), **fields)
    if "virus scan warning" in page.title.lower():
        return _with_query(url, confirm="t")
    return None


def _with_query(url: str, **params) -> str:
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query))
    query.update(params)
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def download_google_drive_file(file_id: str, path, *, hash_value: str | None = None,
                               progress: bool = True) -> str:
    """Downloads the Google Drive file ``file_id`` to ``path``, through the confirmation
    page that Drive puts before large files, and checks its md5.

    Raises:
        RuntimeError: Drive answered with a page instead of the file (its daily quota for
            the file is exceeded, or another page), or the file has the wrong md5 (it is
            deleted).
    """
    cookies = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
    name = os.path.basename(os.fspath(path))

    def fetch(url):
        # The saved path, or the page Drive answered with instead of the file.
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        with opener.open(request) as response:
            head = response.read(_CHUNK)
            page = _drive_page(response, head)
            if page is None:
                return _save_response(response, path, url, head=head, hash_value=hash_value,
                                      progress=progress), None
        return None, page

    url = _with_query(GOOGLE_DRIVE_URL, id=file_id, export="download")
    saved, page = fetch(url)
    if page is not None:
        confirmed = None if _quota_exceeded(page) else _confirmed_url(url, page, cookies)
        if confirmed is None:
            raise _page_error(page, name, file_id)
        saved, page = fetch(confirmed)
        if page is not None:
            raise _page_error(page, name, file_id)
    return saved


def _quota_exceeded(page: _DrivePage) -> bool:
    return "quota exceeded" in page.title.lower()


def _page_error(page: _DrivePage, name: str, file_id: str) -> RuntimeError:
    if _quota_exceeded(page):
        return RuntimeError(
            f"The daily quota of the file {name} is exceeded and it can't be downloaded. This "
            "is a limitation of Google Drive and can only be overcome by trying again later.")
    title = " ".join(page.title.split()) or "untitled"
    return RuntimeError(f"Google Drive answered the download of {name} (id {file_id}) with a "
                        f"page ({title!r}) instead of the file.")
