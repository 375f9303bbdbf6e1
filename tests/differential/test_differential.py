"""placelint against TensorFlow on the generated corpus (see corpus.py, oracle.py).

Per case: no crash; on graphs TF places, no error and a device for every node; on graphs TF
refuses, an error naming TF's node or a member of its colocation group. In aggregate, the bars
of report.py: node-level agreement >= 99.5%, every refusal caught, zero false errors, transfer
sets equal on >= 95% of graphs. `python -m tests.differential.report -v` lists disagreements.
"""

from __future__ import annotations

from typing import Any

import pytest

from placelint.api import place_graphdef

from .generate import Case
from .report import (
    NODE_AGREEMENT_MIN_PCT,
    TRANSFER_AGREEMENT_MIN_PCT,
    CaseComparison,
    Figures,
    aggregate,
    compare_corpus,
    format_report,
)

pytestmark = pytest.mark.tf


def _place(case: Case) -> Any:
    return place_graphdef(
        case.graph_def_bytes,
        devices=f"CPU={case.n_cpus}",
        allow_soft_placement=case.allow_soft_placement,
    )


@pytest.fixture(scope="session")
def comparisons(corpus: Any) -> dict[str, CaseComparison]:
    return {c.name: c for c in compare_corpus(corpus.pairs(), _place)}


@pytest.fixture(scope="session")
def figures(comparisons: dict[str, CaseComparison]) -> Figures:
    return aggregate(list(comparisons.values()))


@pytest.fixture(scope="session")
def report_text(figures: Figures, comparisons: dict[str, CaseComparison]) -> str:
    return format_report(figures, list(comparisons.values()))


def test_case(diff_case_name: str, corpus: Any, comparisons: dict[str, CaseComparison]) -> None:
    case, tf = corpus.by_name()[diff_case_name]
    c = comparisons[diff_case_name]
    assert c.crash is None, c.crash
    assert tf.status in ("placed", "refused"), f"TF could not run the case: {tf.unrunnable_reason}"
    if tf.status == "placed":
        assert not c.false_error, f"placelint reports errors on a graph TF places: {c.pl_errors}"
        unplaced = [n for n, _want, got in c.mismatches if got is None]
        assert not unplaced, f"placelint leaves nodes unplaced: {unplaced[:10]}"
        assert c.nodes == len(tf.placement) > 0
    else:
        assert tf.error is not None
        assert c.refusal_caught, (
            f"TF refuses ({tf.error.message.splitlines()[0][:300]}), placelint errors "
            f"{c.pl_errors[:5]} name none of {c.refusal_nodes[:10]}"
        )


def test_node_level_agreement(figures: Figures, report_text: str) -> None:
    assert figures.nodes > 1000
    assert figures.node_agreement_pct >= NODE_AGREEMENT_MIN_PCT, report_text


def test_every_refusal_caught(figures: Figures, report_text: str) -> None:
    assert figures.refused > 0
    assert figures.refusals_caught == figures.refused, report_text


def test_no_false_errors(figures: Figures, report_text: str) -> None:
    assert figures.placed > 0
    assert figures.false_errors == 0, report_text
    assert figures.crashes == 0, report_text


def test_transfer_sets(figures: Figures, report_text: str) -> None:
    assert figures.transfer_cases >= figures.placed * 0.9
    assert figures.transfer_agreement_pct >= TRANSFER_AGREEMENT_MIN_PCT, report_text
