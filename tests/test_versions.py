"""The four distributions take their version from the repository's one VERSION file."""

import re
from importlib.metadata import requires, version
from pathlib import Path

import pytest

VERSION = (Path(__file__).resolve().parents[1] / "VERSION").read_text().strip()
DISTRIBUTIONS = ["ember", "embervision", "embertext", "emberaudio"]


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_installed_version_is_the_version_file(distribution):
    assert version(distribution) == VERSION


@pytest.mark.parametrize("distribution", DISTRIBUTIONS[1:])
def test_domain_package_requires_ember_of_the_same_minor_version(distribution):
    major_minor = ".".join(VERSION.split(".")[:2])
    names = {r: re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0] for r in requires(distribution)}
    ember_requirements = [r for r, name in names.items() if name == "ember"]
    assert ember_requirements == [f"ember=={major_minor}.*"]


def test_ember_version_attribute_is_the_version_file():
    import ember

    assert ember.__version__ == VERSION
