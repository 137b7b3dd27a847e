"""The installed version, from the distribution's metadata (one source: VERSION)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ember")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"
