"""examples/finetune_imagefolder.py runs briefly end to end and saves a loadable model."""

import importlib.util
from pathlib import Path

import ember
import embervision.models as models

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "finetune_imagefolder.py"


def test_finetune_example_runs(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("finetune_imagefolder", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    accuracy = module.main(["--out", str(tmp_path), "--per-class", "4", "--size", "20",
                            "--crop", "16", "--epochs", "1", "--max-steps", "2",
                            "--batch-size", "4", "--workers", "1"])
    assert 0.0 <= accuracy <= 1.0
    out = capsys.readouterr().out
    assert "validation accuracy" in out and "model saved" in out
    assert len(list((tmp_path / "data" / "train" / "disc").glob("*.png"))) == 4
    model = models.resnet18(num_classes=3)
    model.load_state_dict(ember.load(tmp_path / "resnet18_finetuned.pt"), strict=True)
