"""Session-wide differential corpus: generated cases and TensorFlow's verdict on each.

Built once per test session (and cached on disk in pytest's cache, keyed on the generator and
oracle sources and the TF version; see corpus.py), so reruns only read a JSON file.
"""

from __future__ import annotations

import pytest

from .corpus import DEFAULT_CACHE_DIR, Corpus, build_corpus


def _corpus(config: pytest.Config) -> Corpus:
    corpus = getattr(config, "_placelint_diff_corpus", None)
    if corpus is None:
        cache = getattr(config, "cache", None)
        cache_dir = cache.mkdir("placelint-differential") if cache is not None else DEFAULT_CACHE_DIR
        corpus = build_corpus(cache_dir=cache_dir)
        config._placelint_diff_corpus = corpus  # type: ignore[attr-defined]
    return corpus


@pytest.fixture(scope="session")
def corpus(request: pytest.FixtureRequest) -> Corpus:
    return _corpus(request.config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests taking `diff_case_name` run once per corpus case (ids are the case names)."""
    if "diff_case_name" in metafunc.fixturenames:
        names = [c.name for c in _corpus(metafunc.config).cases]
        metafunc.parametrize("diff_case_name", names)
