"""The README's first program runs as written, and its training reaches a useful accuracy."""

import re
import runpy
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _first_program() -> str:
    text = README.read_text()
    section = text.split("## A first program", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_first_program_runs(tmp_path, monkeypatch, capsys):
    script = tmp_path / "first_program.py"
    script.write_text(_first_program())
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    accuracy = float(re.search(r"training accuracy ([\d.]+)%", out).group(1))
    assert accuracy > 90.0
    assert (tmp_path / "model.pt").exists()
