"""SavedModel loading against TensorFlow (see savedmodels.py): TF1 models with GPU- or
CPU:1-pinned savers, tables, variables, init ops and compute loaded with
``tf.compat.v1.saved_model.loader.load`` in strict and soft sessions of 1-3 CPUs; TF2 models
with ``tf.device`` scopes inside nested ``tf.function``s (in five, one function compiled by
XLA) served from a strict TF1 session.
``python -m tests.differential.savedmodels -v`` prints the figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .savedmodels import aggregate, compare_all, format_report

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def comparisons(request: pytest.FixtureRequest):
    cache = getattr(request.config, "cache", None)
    cache_dir = Path(cache.mkdir("placelint-differential")) if cache is not None else None
    return compare_all(cache_dir)


def test_tf1_loads_fail_exactly_where_tensorflow_fails(comparisons) -> None:
    f = aggregate(comparisons, "tf1")
    report = format_report([f], comparisons)
    assert f.tf_failed >= 10 and f.tf_ok >= 10, report   # both outcomes are exercised
    assert f.crashes == 0 and f.false_errors == 0, report
    assert f.caught == f.tf_failed, report
    assert f.nodes > 100 and f.nodes_agree == f.nodes, report


def test_tf2_function_device_scopes_run_and_land_where_tensorflow_puts_them(comparisons) -> None:
    f = aggregate(comparisons, "tf2")
    report = format_report([f], comparisons)
    # (the only steps TF fails: an XLA-compiled call reading a variable on another device)
    assert f.loads >= 60 and f.tf_failed >= 3 and f.caught == f.tf_failed, report
    assert f.crashes == 0 and f.false_errors == 0, report
    assert f.nodes >= 10 * f.tf_ok and f.nodes_agree == f.nodes, report


def test_xla_compiled_calls_stay_whole_where_tensorflow_keeps_them(comparisons) -> None:
    f = aggregate(comparisons, "tf2")
    assert f.compiled >= 20 and f.compiled_agree == f.compiled, format_report([f], comparisons)
