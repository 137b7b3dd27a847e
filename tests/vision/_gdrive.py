"""A stand-in for Google Drive's download endpoint on 127.0.0.1, for the download tests.

Each file is served in one of Drive's ways: ``direct`` (the file), ``form`` (the newer
virus-scan-warning page, a form whose action and hidden fields lead to the file), ``cookie``
(the older page, with a ``download_warning_*`` cookie holding the ``confirm`` token),
``title`` (a warning page with neither, answered with ``confirm=t``), ``quota`` (the
quota-exceeded page) or ``page`` (some other page).
"""

from __future__ import annotations

import http.server
import threading
import urllib.parse

_PAGE = ("<!DOCTYPE html><html><head><title>Google Drive - {title}</title></head><body>"
         "{body}</body></html>")
_TOKEN = "Xy7_token"
_UUID = "0f1e2d3c"


class FakeDrive:
    """``files``: id -> (bytes, way); ``requests``: the (path, query) of each request."""

    def __init__(self):
        self.files = {}
        self.requests = []
        drive = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                parts = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(parts.query))
                drive.requests.append((parts.path, query))
                drive._answer(self, parts.path, query)

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _answer(self, handler, path, query):
        entry = self.files.get(query.get("id"))
        if entry is None:
            return self._send(handler, 404, b"no such file", "text/plain")
        data, way = entry
        if path == "/download":  # the form's action
            if way == "form" and query.get("confirm") == "t" and query.get("uuid") == _UUID:
                return self._send(handler, 200, data)
            return self._send(handler, 400, b"bad confirmation", "text/plain")
        if path != "/uc" or query.get("export") != "download":
            return self._send(handler, 404, b"not here", "text/plain")
        confirm = query.get("confirm")
        if way == "direct" or (way == "cookie" and confirm == _TOKEN) or (
                way == "title" and confirm == "t"):
            return self._send(handler, 200, data)
        if way == "form":
            body = (f'<form id="download-form" action="{self.base}/download" method="get">'
                    f'<input type="hidden" name="id" value="{query["id"]}">'
                    '<input type="hidden" name="export" value="download">'
                    '<input type="hidden" name="confirm" value="t">'
                    f'<input type="hidden" name="uuid" value="{_UUID}">'
                    '<input type="submit" value="Download anyway"></form>')
            return self._page(handler, "Virus scan warning", body)
        if way == "cookie":
            cookie = f"download_warning_13058876669334088843_{query['id']}={_TOKEN}; Path=/"
            return self._page(handler, "Virus scan warning", "too large to scan", cookie)
        if way == "title":
            return self._page(handler, "Virus scan warning", "too large to scan")
        if way == "quota":
            return self._page(handler, "Quota exceeded", "Too many users have viewed it")
        return self._page(handler, "Sign-in", "Sign in to continue")

    def _page(self, handler, title, body, cookie=None):
        page = _PAGE.format(title=title, body=body).encode()
        self._send(handler, 200, page, "text/html; charset=utf-8", cookie)

    @staticmethod
    def _send(handler, status, data, content_type="application/octet-stream", cookie=None):
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        if cookie is not None:
            handler.send_header("Set-Cookie", cookie)
        handler.end_headers()
        handler.wfile.write(data)
