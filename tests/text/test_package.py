"""embertext installs beside ember alone, with ember's version."""

import subprocess
import sys

import ember
import embertext


def test_version_is_embers():
    assert embertext.__version__ == ember.__version__


def test_refuses_ember_of_another_minor_version(tmp_path):
    code = "import ember; ember.__version__ = '99.0.0'; import embertext"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True)
    assert result.returncode != 0
    assert "ImportError: embertext" in result.stderr
    assert "ember 99.0.0 is installed" in result.stderr
