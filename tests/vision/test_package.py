"""embervision installs beside ember alone, with ember's version, and Pillow works."""

import subprocess
import sys

import ember
import embervision


def test_version_is_embers():
    assert embervision.__version__ == ember.__version__


def test_pillow_is_installed():
    from PIL import Image

    assert Image.new("RGB", (4, 3)).size == (4, 3)


def test_refuses_ember_of_another_minor_version(tmp_path):
    code = "import ember; ember.__version__ = '99.0.0'; import embervision"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True)
    assert result.returncode != 0
    assert "ImportError: embervision" in result.stderr
    assert "ember 99.0.0 is installed" in result.stderr
