"""examples/train_text_classifier.py runs end to end (briefly) and saves what it trained."""

import importlib.util
from pathlib import Path

import ember
from embertext.tokenizers import Tokenizer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_text_classifier.py"


def load_example():
    spec = importlib.util.spec_from_file_location("train_text_classifier", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_trains_and_saves(tmp_path, capsys):
    example = load_example()
    accuracy = example.main(["--epochs", "1", "--train-size", "96", "--test-size", "32",
                             "--batch-size", "16", "--vocab-size", "300", "--out",
                             str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert "test accuracy" in out and "tokens/s" in out
    assert 0.0 <= accuracy <= 1.0
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert tokenizer.token_to_id("<pad>") == 0
    state = ember.load(tmp_path / "model.pt")
    model = example.Classifier(tokenizer.get_vocab_size(), 2, max_len=64)
    model.load_state_dict(state)
    ids = ember.tensor([tokenizer.encode("The film was great and superb.").ids])
    assert model.eval()(ids).shape == (1, 2)


def test_synthetic_reviews_are_labelled_by_their_words():
    example = load_example()
    data = example.synthetic_reviews(50, seed=3)
    assert {label for label, _ in data} == {0, 1}
    for label, text in data:
        words = set(text.replace("!", " ").replace(".", " ").split())
        main = example.POSITIVE if label else example.NEGATIVE
        assert words & set(main)
