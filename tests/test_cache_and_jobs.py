"""The content-hash cache and the process pool of ``check``."""

from __future__ import annotations

import concurrent.futures
import shutil
import time
from pathlib import Path

import pytest
from checkrun import CPU1_SAMPLE, SAMPLES, invoke, write_graph

from placelint import cache as cache_mod
from placelint import runner
from placelint.cache import Cache
from placelint.diagnostics import Severity
from placelint.loaders import ModelRef, discover
from placelint.loaders.read import GRAPHDEF
from placelint.model.devices import DeviceSet
from placelint.settings import Settings


def _settings(**kw) -> Settings:
    return Settings(select=["PL0", "PL102"], **kw)


@pytest.fixture
def models(tmp_path: Path) -> Path:
    d = tmp_path / "models"
    d.mkdir()
    shutil.copy(CPU1_SAMPLE, d / "a_big.pbtxt")             # slowest first
    write_graph(d / "b.pbtxt", [("b1", "/gpu0"), ("b2", "/cpu:0")])
    write_graph(d / "c.pbtxt", [("c1", "gpu:1")])
    shutil.copytree(SAMPLES / "keras_cnn", d / "keras_cnn")
    (d / "d_broken.pb").write_bytes(b"\x00 not a model")
    return d


def dicts(results):
    return [r.to_dict() for r in results]


def test_second_run_is_served_from_the_cache(models, tmp_path, monkeypatch):
    refs = discover([models])
    c = Cache(tmp_path / "cache")
    t0 = time.perf_counter()
    first = runner.run_models(refs, _settings(), jobs=1, cache=c)
    t_first = time.perf_counter() - t0
    assert (c.hits, c.misses) == (0, 5) and not any(r.cached for r in first)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 5

    def no_analysis(ref, settings):
        raise AssertionError(f"{ref} analysed although cached")
    monkeypatch.setattr(runner, "analyze_one", no_analysis)
    c2 = Cache(tmp_path / "cache")
    t0 = time.perf_counter()
    second = runner.run_models(refs, _settings(), jobs=1, cache=c2)
    t_second = time.perf_counter() - t0
    assert (c2.hits, c2.misses) == (5, 0) and all(r.cached for r in second)
    assert dicts(second) == dicts(first)
    # keras_cnn, a_big, b, c, d_broken: SavedModel directories first, then files by name
    assert [(d.code, d.node) for r in second for d in r.diagnostics] == [
        ("PL102", "b1"), ("PL102", "c1"), ("PL001", None)]
    assert t_second < t_first / 2, (t_first, t_second)     # nearly free


def test_a_changed_model_or_setting_misses(models, tmp_path):
    refs = discover([models])
    runner.run_models(refs, _settings(), cache=Cache(tmp_path / "cache"), jobs=1)
    write_graph(models / "b.pbtxt", [("b1", "/gpu0"), ("b2", "/gpu7")])     # content changed
    c = Cache(tmp_path / "cache")
    results = runner.run_models(refs, _settings(), cache=c, jobs=1)
    assert (c.hits, c.misses) == (4, 1)
    assert [r.cached for r in results] == [True, True, False, True, True]
    assert [d.node for d in results[2].diagnostics] == ["b1", "b2"]

    c = Cache(tmp_path / "cache")
    runner.run_models(refs, _settings(devices=DeviceSet.parse("CPU=2")), cache=c, jobs=1)
    assert (c.hits, c.misses) == (0, 5)
    c = Cache(tmp_path / "cache")
    runner.run_models(refs, _settings(severity_overrides={"PL102": Severity.INFO}), cache=c, jobs=1)
    assert c.hits == 0
    # per-node ignores are applied after the cache: changing them keeps every entry valid
    c = Cache(tmp_path / "cache")
    runner.run_models(refs, _settings(per_node_ignores={"b*": ["PL102"]}), cache=c, jobs=1)
    assert (c.hits, c.misses) == (5, 0)


def test_key_covers_what_the_loader_reads(models, monkeypatch):
    [sm] = discover([models / "keras_cnn"])
    c, s = Cache(models.parent / "cache"), _settings()
    key = c.key(sm, s)
    (models / "keras_cnn" / "variables" / "variables.index").write_bytes(b"changed")
    assert c.key(sm, s) == key                      # variables are never read
    with open(models / "keras_cnn" / "saved_model.pb", "ab") as fh:
        fh.write(b"\x00")
    assert c.key(sm, s) != key
    key = c.key(sm, s)
    monkeypatch.setattr(cache_mod, "__version__", "999")
    cache_mod.code_fingerprint.cache_clear()
    try:
        assert c.key(sm, s) != key                  # another placelint version
    finally:
        monkeypatch.undo()
        cache_mod.code_fingerprint.cache_clear()
    missing = ModelRef(models / "nope.pb", GRAPHDEF)   # deleted since it was found
    assert c.key(missing, s) is None


def test_internal_errors_are_not_cached(models, tmp_path, monkeypatch):
    real = runner.analyze_one

    def crash_on_c(ref, settings):
        result = real(ref, settings)
        if ref.path.name == "c.pbtxt":
            from placelint.pipeline import internal_error
            result.diagnostics.append(internal_error("test", RuntimeError("boom")))
        return result
    monkeypatch.setattr(runner, "analyze_one", crash_on_c)
    refs = discover([models])
    runner.run_models(refs, _settings(), cache=Cache(tmp_path / "cache"), jobs=1)
    c = Cache(tmp_path / "cache")
    results = runner.run_models(refs, _settings(), cache=c, jobs=1)
    assert [r.cached for r in results] == [True, True, True, False, True]


def test_jobs_use_a_process_pool_and_keep_the_order(models, monkeypatch):
    pools = []

    class SpyPool(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers, **kwargs):
            pools.append(max_workers)
            super().__init__(max_workers=max_workers, **kwargs)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", SpyPool)
    refs = discover([models])
    serial = runner.run_models(refs, _settings(), jobs=1)
    assert pools == []
    parallel = runner.run_models(refs, _settings(), jobs=2)
    assert pools == [2]
    assert dicts(parallel) == dicts(serial)
    assert [r.path for r in parallel] == [str(r.path) for r in refs]
    runner.run_models(refs[:1], _settings(), jobs=4)    # one model: no pool
    assert pools == [2]


def test_cli_cache_switches(models, tmp_path):
    proj = models.parent
    r = invoke(["check", "--isolated", "--select", "PL102", "--no-cache", "models"], cwd=proj)
    assert r.exit_code == 1 and not (proj / ".placelint_cache").exists()
    (proj / "placelint.toml").write_text('select = ["PL102"]\ncache = false\n')
    invoke(["check", "models"], cwd=proj)
    assert not (proj / ".placelint_cache").exists()
    (proj / "placelint.toml").write_text('select = ["PL102"]\ncache-dir = "build/plc"\njobs = 2\n')
    first = invoke(["check", "models"], cwd=proj)
    entries = list((proj / "build" / "plc").rglob("*.json"))
    assert len(entries) == 5 and (proj / "build" / "plc" / ".gitignore").read_text().endswith("*\n")
    second = invoke(["check", "models"], cwd=proj)
    assert second.stdout == first.stdout and second.exit_code == first.exit_code == 1


def test_a_damaged_entry_is_analysed_again(models, tmp_path):
    refs = discover([models / "b.pbtxt"])
    c = Cache(tmp_path / "cache")
    runner.run_models(refs, _settings(), cache=c, jobs=1)
    [entry] = (tmp_path / "cache").rglob("*.json")
    entry.write_text('{"path": "b.pbtxt"}')           # valid JSON, wrong shape
    [r] = runner.run_models(refs, _settings(), cache=Cache(tmp_path / "cache"), jobs=1)
    assert not r.cached and [d.node for d in r.diagnostics] == ["b1"]
    entry.write_text("{truncated")
    [r] = runner.run_models(refs, _settings(), cache=Cache(tmp_path / "cache"), jobs=1)
    assert r.cached is False and [d.node for d in r.diagnostics] == ["b1"]
    [r] = runner.run_models(refs, _settings(), cache=Cache(tmp_path / "cache"), jobs=1)
    assert r.cached is True                            # rewritten


def test_a_file_over_the_protobuf_limit_is_not_hashed(tmp_path):
    """The loader refuses a >2 GiB file from its size; the cache must not read it first
    (a sparse file: no disk used, but hashing its zeros would take seconds)."""
    from placelint.loaders.read import PROTOBUF_LIMIT
    big = tmp_path / "huge.pb"
    with open(big, "wb") as fh:
        fh.truncate(PROTOBUF_LIMIT + 1)
    small = tmp_path / "small.pbtxt"
    write_graph(small, [("a", "/cpu:0")])
    c = Cache(tmp_path / "cache")
    assert c.key(discover([big])[0], _settings()) is None
    assert c.key(discover([small])[0], _settings()) is not None
