"""benchmarks/targets.py: each of issue 20's targets judged from its measurements, at its
threshold and past it, and what was not measured said so."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import targets  # noqa: E402
from targets import BIG, SMALL, Runs  # noqa: E402


def _verdicts(whole, tf_seconds=None, cold=None) -> dict[str, bool | None]:
    return {row.target: row.met for row in targets.judge(whole, tf_seconds, cold)}


def _all_met() -> dict:
    """Each target at its threshold: tf1_train 10^5 a median of 1.5 s, 10^6 12 s and 1 KiB
    under 2 GiB for every kind, towers growing 1.2 x linear (1.0 s -> 12 s)."""
    whole = {}
    for kind in targets.KINDS:
        whole[kind, SMALL] = Runs(100_000, [1.0, 1.5, 1.6], [250_000])
        whole[kind, BIG] = Runs(1_000_000, [12.0], [2 * 1024 ** 2 - 1])
    whole["towers", SMALL] = Runs(100_000, [1.0], [250_000])
    return whole


def test_every_target_met_at_its_threshold():
    verdicts = _verdicts(_all_met(), tf_seconds=15.0, cold=Runs(0, [0.2, 0.4, 0.5], [90_000]))
    assert len(verdicts) == 2 + 3 * 3 + 1
    assert all(v is True for v in verdicts.values()), verdicts


def test_each_target_fails_past_its_threshold():
    whole = _all_met()
    whole["tf1_train", SMALL] = Runs(100_000, [1.4, 1.51, 1.6], [250_000])    # median 1.51
    whole["towers", BIG] = Runs(1_000_000, [12.01], [1000])
    whole["tf2_savedmodel", BIG] = Runs(1_000_000, [10.0], [2 * 1024 ** 2])    # 2 GiB exactly
    # tf1_train: 10^5 1.51 s, 10^6 18.2 s: 1.205 x linear
    whole["tf1_train", BIG] = Runs(1_000_000, [18.2], [1000])
    verdicts = _verdicts(whole, tf_seconds=15.0, cold=Runs(0, [0.41], [1]))
    failed = {target for target, met in verdicts.items() if met is False}
    assert failed == {
        "tf1_train 10^5: whole command <= 1.5 s",
        "tf1_train 10^5: <= 0.10 x TensorFlow",          # 1.51 / 15 = 0.1007
        "tf1_train 10^6: whole command <= 12 s",
        "tf1_train 10^5 -> 10^6: growth <= 1.2 x linear",
        "towers 10^6: whole command <= 12 s",
        "towers 10^5 -> 10^6: growth <= 1.2 x linear",      # 1.0 s -> 12.01 s
        "tf2_savedmodel 10^6: peak RSS < 2 GiB",
        "cold check of towers_gpu.pb <= 0.4 s",
    }, verdicts


def test_what_was_not_measured_is_said_so():
    whole = _all_met()
    del whole["tf2_savedmodel", BIG]
    rows = {row.target: row for row in targets.judge(whole, None, None)}
    missing = {t for t, row in rows.items() if row.met is None}
    assert missing == {"tf1_train 10^5: <= 0.10 x TensorFlow",
                       "tf2_savedmodel 10^6: whole command <= 12 s",
                       "tf2_savedmodel 10^6: peak RSS < 2 GiB",
                       "tf2_savedmodel 10^5 -> 10^6: growth <= 1.2 x linear",
                       "cold check of towers_gpu.pb <= 0.4 s"}
    assert all(rows[t].verdict == "not measured" and rows[t].measured == "-" for t in missing)
    assert "NOT MET" not in targets.table(list(rows.values()))


def test_measures_real_runs_of_this_checkout():
    sample = ROOT / "samples" / "towers_gpu.pb"
    said: list[str] = []
    whole, tf_seconds, cold = targets.measure({("tf1_train", SMALL): (sample, 20)}, runs=2,
                                              big_runs=1, tf_runs=0, cold_runs=2,
                                              say=said.append)
    runs = whole["tf1_train", SMALL]
    assert len(runs.walls) == 2 and all(0 < w < 30 for w in runs.walls)
    assert all(p > 10_000 for p in runs.peaks_kib)      # KiB: a Python process at least
    assert tf_seconds is None and len(cold.walls) == 2
    assert said[0].startswith("tf1_train 1e+05 (20 nodes): median")
    rows = {row.target: row for row in targets.judge(whole, tf_seconds, cold)}
    assert rows["tf1_train 10^5: whole command <= 1.5 s"].met is (runs.median <= 1.5)
