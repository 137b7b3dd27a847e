"""Reading MATLAB .mat files, through SciPy (an optional dependency, as for torchvision)."""

from __future__ import annotations


def loadmat(path, **kwargs):
    """``scipy.io.loadmat(path, **kwargs)``, with a clear error when SciPy is missing or the
    file is not a MATLAB file."""
    try:
        from scipy import io as sio
    except ImportError as error:
        raise ImportError("Reading this dataset's .mat files needs SciPy: "
                          "pip install 'embervision[scipy]' (or pip install scipy)") from error
    try:
        return sio.loadmat(path, **kwargs)
    except (ValueError, TypeError, OSError, sio.matlab.MatReadError) as error:
        raise RuntimeError(f"could not read the MATLAB file {path}: {error}") from error
