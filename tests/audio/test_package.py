"""emberaudio installs beside ember alone, with ember's version, and soundfile works."""

import subprocess
import sys

import numpy as np

import ember
import emberaudio


def test_version_is_embers():
    assert emberaudio.__version__ == ember.__version__


def test_soundfile_round_trips_a_wav(tmp_path):
    import soundfile

    samples = np.linspace(-0.5, 0.5, 800, dtype=np.float32)
    soundfile.write(tmp_path / "ramp.wav", samples, 8000, subtype="FLOAT")
    read, rate = soundfile.read(tmp_path / "ramp.wav", dtype="float32")
    assert rate == 8000
    np.testing.assert_array_equal(read, samples)


def test_refuses_ember_of_another_minor_version(tmp_path):
    code = "import ember; ember.__version__ = '99.0.0'; import emberaudio"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True)
    assert result.returncode != 0
    assert "ImportError: emberaudio" in result.stderr
    assert "ember 99.0.0 is installed" in result.stderr
