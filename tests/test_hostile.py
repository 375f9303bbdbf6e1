"""Hostile inputs (tests/hostile/corpus.py): every one gets its documented diagnostic, fast,
through the whole pipeline (loaders, graph building, every rule), with no internal error."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest
from checkrun import invoke
from hostile.corpus import CASES, small_graph

from placelint.checks import all_rules
from placelint.loaders import LoadOptions, discover
from placelint.model import build
from placelint.model.shapes import num_elements
from placelint.pipeline import analyze
from placelint.settings import Settings

KNOWN_CODES = {r.code for r in all_rules()}
#: generous: the slowest case (20k-node fan-out through every rule) takes a few seconds
TIME_LIMIT = 60.0


def run(path: Path, **load) -> list:
    settings = Settings()
    settings.load = dataclasses.replace(LoadOptions(), **load)
    refs = discover([path])
    assert len(refs) == 1, refs
    report = analyze(refs[0], settings)
    return report


def assert_sane(report):
    """Only documented codes, no internal error, bounded messages."""
    for d in report.diagnostics:
        assert d.code in KNOWN_CODES, d
        assert d.code != "PL009", d.message
        assert len(d.message) < 2000, (d.code, len(d.message), d.message[:300])
        if d.code.startswith("PL00"):   # the loader's own diagnostics
            assert len(d.related_nodes) <= 10, (d.code, len(d.related_nodes))


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(build, "MAX_EXPANDED_NODES", 20_000)


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(reason=c.known_bug, strict=False)) if c.known_bug
    else c for c in CASES], ids=lambda c: c.name)
def test_hostile_case(case, tmp_path: Path, small_budget):
    path = case.make(tmp_path)
    start = time.monotonic()
    report = run(path, **case.options)
    elapsed = time.monotonic() - start
    assert elapsed < TIME_LIMIT, f"{case.name} took {elapsed:.1f} s"
    assert_sane(report)
    loader = [d for d in report.diagnostics if d.code.startswith("PL00")]
    if case.code is None:
        assert loader == [], [d.message for d in loader]
        assert report.model is not None
    else:
        hits = [d for d in loader if d.code == case.code and case.fragment in d.message]
        assert hits, (case.code, case.fragment, [(d.code, d.message) for d in loader])


def test_over_2gib_is_refused_by_size_before_reading(tmp_path: Path):
    path = tmp_path / "big.pb"
    with open(path, "wb") as fh:
        fh.write(b"\x0a")
    os.truncate(path, 2**31 + 10)      # sparse: no disk used
    start = time.monotonic()
    report = run(path)
    assert time.monotonic() - start < 5
    assert [(d.code, "protobuf cannot parse messages over 2 GiB" in d.message)
            for d in report.diagnostics] == [("PL001", True)]


def test_fifo_is_not_read(tmp_path: Path):
    fifo = tmp_path / "model.pb"
    os.mkfifo(fifo)
    # named on the command line, and found by walking a directory: never opened
    for target in (fifo, tmp_path):
        report = run(target)
        assert [(d.code, "not a regular file" in d.message) for d in report.diagnostics] == [
            ("PL001", True)]


def test_cycle_is_broken_so_the_graph_minus_loop_back_edges_is_a_dag(tmp_path: Path):
    case = next(c for c in CASES if c.name == "long_cycle")
    report = run(case.make(tmp_path))
    graph = report.model.graph
    import networkx as nx
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.nodes)
    dag.add_edges_from((e.src, e.dst) for e in graph.dag_edges())
    assert nx.is_directed_acyclic_graph(dag)
    (d,) = [d for d in report.diagnostics if d.code == "PL005"]
    assert "ignores the edge(s)" in d.message and len(d.related_nodes) <= 10


def test_while_loop_v1_is_not_a_cycle_and_its_exits_have_enters():
    root = Path(__file__).resolve().parent.parent / "samples" / "while_loop_v1.meta"
    report = run(root)
    assert_sane(report)
    assert [d for d in report.diagnostics if d.code == "PL005"] == []
    assert any(n.op == "NextIteration" for n in report.model.graph)


def test_huge_dims_count_as_unknown_not_as_huge_numbers():
    assert num_elements((2**62, 2**62, 2**62)) is None      # TF refuses such a shape
    assert num_elements((2**62, 2**62, 0)) == 0
    assert num_elements((2**31, 2**31)) == 2**62
    assert num_elements((-1, 3)) is None


def test_huge_dims_are_read_as_they_are(tmp_path: Path):
    case = next(c for c in CASES if c.name == "huge_dims")
    graph = run(case.make(tmp_path)).model.graph
    assert graph["c"].output_shapes == [(2**62, 1)]
    assert graph["p"].output_shapes == [(-1, 2**62, -1)]   # -7 is no size: unknown


def test_shapes_tf_refuses_are_unknown(tmp_path: Path):
    """More than 2**63 - 1 elements: TF refuses the shape; the analyses see an unknown one
    (before, rules computing bytes died with OverflowError: PL009)."""
    case = next(c for c in CASES if c.name == "overflowing_dims")
    graph = run(case.make(tmp_path)).model.graph
    assert graph["c"].output_shapes == [None]


def test_good_and_bad_models_in_one_run(tmp_path: Path):
    """`placelint check good.pb bad.pb`: bad.pb's problem is reported, good.pb is still
    checked (its own finding shows), exit 1."""
    gd = small_graph()
    gd.node[1].device = "/gpu0"            # a malformed device: PL102 on good.pb
    (tmp_path / "good.pb").write_bytes(gd.SerializeToString())
    (tmp_path / "bad.pb").write_bytes(gd.SerializeToString()[:-7])
    result = invoke(["check", "--no-cache", "good.pb", "bad.pb"], cwd=tmp_path)
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("bad.pb:") and "PL001" in line and "truncated" in line
               for line in lines), result.stdout
    assert any(line.startswith("good.pb:") and "PL102" in line for line in lines), result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_max_text_size_option(tmp_path: Path):
    (tmp_path / "g.pbtxt").write_text("".join(
        f'node {{ name: "n{i}" op: "NoOp" }}\n' for i in range(3000)))
    small = invoke(["check", "--no-cache", "--max-text-size", "10k", "g.pbtxt"], cwd=tmp_path)
    assert small.exit_code == 1
    assert "over the 10.0 KiB limit for text parsing" in small.stdout, small.stdout
    assert "--max-text-size" in small.stdout
    ok = invoke(["check", "--no-cache", "--max-text-size", "1M", "g.pbtxt"], cwd=tmp_path)
    assert "PL001" not in ok.stdout, ok.stdout
    bad = invoke(["check", "--no-cache", "--max-text-size", "lots", "g.pbtxt"], cwd=tmp_path)
    assert bad.exit_code == 2 and "--max-text-size" in bad.stderr


def test_unreadable_paths_are_usage_errors(tmp_path: Path):
    """A name too long for the OS and a symlink loop named on the command line cannot be
    models: each is a usage error (exit 2, one line each on stderr), before anything is
    read, whatever the selection says."""
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "good.pb").write_bytes(small_graph().SerializeToString())
    result = invoke(["check", "--no-cache", "--exit-zero", "a" * 5000, "loop1", "good.pb"],
                    cwd=tmp_path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].endswith("...: File name too long"), lines
    assert len(lines[0]) < 200                  # the 5000-character name is shortened
    assert lines[1] == "placelint: error: loop1: Too many levels of symbolic links"