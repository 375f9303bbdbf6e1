"""Fuzzing the whole pipeline (loaders, graph building, every registered rule).

Structure-aware: hypothesis GraphDefs (tests/fuzz/strategies.py), as GraphDef, MetaGraphDef
or SavedModel, binary or text, against several device sets. Byte-level: mutated seeds
(tests/fuzz/seeds) and raw bytes. A pass is a report with only documented diagnostics: any
PL009 internal error, exception, hang or oversized message fails (tests/fuzz/harness.py).

CI runs a fixed, derandomized budget; ``pytest -m slow tests/test_fuzz.py`` runs a longer
randomized one, and ``tools/fuzz_loaders.py`` a timed mutational fuzzer.
"""

from __future__ import annotations

import pytest
from fuzz.harness import run_bytes, run_path
from fuzz.strategies import (graph_defs, hostile_bytes, models, mutated_graphs, seed_files,
                             seed_graphs)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from placelint.model.devices import DeviceSet
from placelint.settings import Settings

CI = dict(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LONG = dict(CI, max_examples=5000, derandomize=False)

DEVICE_SETS = ["CPU:0,GPU:0", "CPU:0", "CPU=2,GPU=2", "/job:worker/task:0/device:CPU:0,"
               "/job:worker/task:1/device:GPU:0"]


def _settings(devices: str, soft: bool, whole: bool) -> Settings:
    s = Settings()
    s.devices = DeviceSet.parse(devices)
    s.allow_soft_placement = soft
    s.load.whole_graph = whole
    return s


run_settings = st.builds(_settings, st.sampled_from(DEVICE_SETS), st.booleans(), st.booleans())


def _check_model(model, s):
    name, data = model
    assert run_bytes(name, data, s) == []


def _check_bytes(item):
    name, data = item
    assert run_bytes(name, data) == []


@settings(**CI)
@given(models(), run_settings)
def test_fuzz_structured_models(model, s):
    _check_model(model, s)


@settings(**CI)
@given(hostile_bytes())
def test_fuzz_bytes(item):
    _check_bytes(item)


@settings(**CI)
@given(mutated_graphs(), run_settings)
def test_fuzz_mutated_real_graphs(model, s):
    _check_model(model, s)


def test_seed_graphs_are_found():
    assert len(seed_graphs()) >= 6


@pytest.mark.parametrize("seed", seed_files(), ids=lambda p: p.name)
def test_seed_corpus_passes(seed):
    assert run_path(seed) == []


def test_strategies_reach_the_hostile_shapes():
    """The structure strategy does produce what it is for, not only valid graphs."""
    seen = set()

    @settings(max_examples=300, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(graph_defs())
    def collect(g):
        names = [n.name for n in g.node]
        inputs = [i for n in g.node for i in n.input]
        funcs = {f.signature.name for f in g.library.function}
        seen.update(k for k, hit in [
            ("control input", any(i.startswith("^") for i in inputs)),
            ("output index", any(":" in i and not i.startswith("^") for i in inputs)),
            ("dangling input", any(i.split(":")[0].lstrip("^") not in names for i in inputs)),
            ("duplicate name", len(set(names)) < len(names)),
            ("device", any(n.device for n in g.node)),
            ("function call", any(n.op in funcs for n in g.node)),
            ("library", bool(funcs)),
        ] if hit)

    collect()
    assert seen == {"control input", "output index", "dangling input", "duplicate name",
                    "device", "function call", "library"}


@pytest.mark.slow
@settings(**LONG)
@given(models(), run_settings)
def test_fuzz_structured_models_long(model, s):
    _check_model(model, s)


@pytest.mark.slow
@settings(**LONG)
@given(mutated_graphs(), run_settings)
def test_fuzz_mutated_real_graphs_long(model, s):
    _check_model(model, s)


@pytest.mark.slow
@settings(**LONG)
@given(hostile_bytes())
def test_fuzz_bytes_long(item):
    _check_bytes(item)


def test_harness_counts_an_internal_error_as_a_failure(monkeypatch):
    from placelint.checks import rule_by_code

    def boom(self, ctx):
        raise ZeroDivisionError("injected")
    monkeypatch.setattr(rule_by_code("PL102"), "check", boom)
    (found,) = run_path(seed_files()[0])
    assert found.startswith("PL009") and "ZeroDivisionError: injected" in found


def test_harness_counts_a_hang_as_a_failure(monkeypatch):
    from placelint.checks import rule_by_code

    def spin(self, ctx):
        while True:
            pass
    monkeypatch.setattr(rule_by_code("PL102"), "check", spin)
    assert run_path(seed_files()[0], seconds=1.0) == ["hang: no result after 1.0 s"]
