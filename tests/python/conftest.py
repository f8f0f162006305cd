"""Shared fixtures: every test builds into a private generated-code cache."""

import pytest


@pytest.fixture
def cache_dir(tmp_path):
    return str(tmp_path / "cache")
