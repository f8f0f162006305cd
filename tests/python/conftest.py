"""Shared fixtures: the generated-code cache the tests build into.

`cache_dir` is the test run's cache when $SPIKEFORGE_CACHE names one (tools/run-tests exports
the one the C++ tests filled, so a model they compiled is not compiled again), else a private
one per test. `private_cache_dir` is always a fresh, empty one: for tests of the cache itself."""

import os

import pytest


@pytest.fixture
def private_cache_dir(tmp_path):
    return str(tmp_path / "cache")


@pytest.fixture
def cache_dir(tmp_path):
    shared = os.environ.get("SPIKEFORGE_CACHE")
    return shared if shared else str(tmp_path / "cache")
