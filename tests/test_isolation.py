"""`import ember` stays light: no domain package and none of their dependencies."""

import importlib.util
import json
import subprocess
import sys

import pytest

FORBIDDEN = ["embervision", "embertext", "emberaudio", "PIL", "soundfile"]


def test_import_ember_imports_no_domain_package(tmp_path):
    # Where one of them is not installed, its absence from sys.modules would prove nothing.
    missing = [name for name in FORBIDDEN if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"not installed here: {missing}")
    code = (
        "import json, sys\n"
        "import ember\n"
        f"forbidden = {FORBIDDEN!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in forbidden)))\n"
    )
    # A fresh interpreter, started outside the repository, so nothing imported by the test
    # session or found in the working tree counts.
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout.splitlines()[-1]) == []
