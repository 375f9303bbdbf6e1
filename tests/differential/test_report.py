"""The comparison and aggregate figures of report.py, on hand-made results (no TF, no
placelint): what counts as agreement, a caught refusal, a false error, an equal transfer set."""

from __future__ import annotations

from dataclasses import dataclass, field

from .generate import Case
from .oracle import TFError, TFResult, Transfer, full_cpu
from .report import aggregate, compare_case, expected_codes, format_report, pl_transfer_key

CPU0, CPU1, CPU2 = full_cpu(0), full_cpu(1), full_cpu(2)
CASE = Case("c", b"", 3, False, family="clean")


@dataclass
class Diag:
    code: str
    rule: str
    node: str | None
    related_nodes: list[str] = field(default_factory=list)
    message: str = ""


@dataclass
class PLTransfer:
    tensor: str
    src_device: str
    dst_device: str
    consumers: list[str]
    control: bool = False
    dtype: int = 1


@dataclass
class PL:
    placement: dict[str, str | None]
    errors: list[Diag] = field(default_factory=list)
    transfers: list[PLTransfer] = field(default_factory=list)


def placed(placement: dict[str, str], transfers: list[Transfer] = ()) -> TFResult:  # type: ignore[assignment]
    return TFResult("placed", 3, False, placement=placement, transfers=list(transfers),
                    transfers_complete=True)


def tr(src: str, a: str, b: str, consumers: tuple[str, ...], control: bool = False,
       kind: str = "data") -> Transfer:
    return Transfer("edge_1_x", a, b, src, "DT_FLOAT", control, False, consumers, kind)


def refused(node: str, message: str, coloc: list[str] = (), group: list[str] = ()) -> TFResult:  # type: ignore[assignment]
    return TFResult("refused", 3, False, error=TFError("InvalidArgumentError", message, [node],
                                                       list(coloc), "placement", list(group)))


def test_placement_agreement_and_false_errors() -> None:
    tf = placed({"a": CPU0, "b": CPU1, "c": CPU2})
    c = compare_case(CASE, tf, PL({"a": CPU0, "b": CPU1, "c": CPU0}))
    assert (c.nodes, c.agree, c.mismatches) == (3, 2, [("c", CPU2, CPU0)])
    assert not c.false_error
    c2 = compare_case(CASE, tf, PL({"a": CPU0, "b": CPU1, "c": CPU2},
                                   errors=[Diag("PL101", "unknown-device", "a")]))
    assert c2.false_error and c2.placement_exact


def test_refusal_caught_by_node_or_colocation_member_only() -> None:
    tf = refused("w", "Cannot colocate nodes {{colocation_node w}} and {{colocation_node v}}",
                 coloc=["w", "v"], group=["v", "v/Assign", "w"])
    assert expected_codes(tf) == {"PL103"}
    for named, ok in [("w", True), ("v/Assign", True), ("x", False)]:
        c = compare_case(CASE, tf, PL({}, errors=[Diag("PL103", "colocation-conflict", named)]))
        assert c.refusal_caught is ok, named
        assert c.code_match is True
    related = PL({}, errors=[Diag("PL101", "unknown-device", "x", related_nodes=["v"])])
    c = compare_case(CASE, tf, related)
    assert c.refusal_caught and c.code_match is False
    assert compare_case(CASE, tf, PL({})).refusal_caught is False


def test_transfer_sets_control_and_data_keys() -> None:
    tf = placed({"a": CPU1, "b": CPU2}, [
        tr("a:0", CPU1, CPU2, ("b",)),
        tr("a", CPU1, CPU2, ("b",), control=True, kind="control"),
        tr("b:0", CPU2, CPU0, ("_retval",), kind="retval"),  # never compared
    ])
    same = PL({"a": CPU1, "b": CPU2}, transfers=[
        PLTransfer("a:0", CPU1, CPU2, ["b"]), PLTransfer("^a", CPU1, CPU2, ["b"], control=True)])
    c = compare_case(CASE, tf, same)
    assert c.transfers_equal and c.consumers_equal
    assert pl_transfer_key(PLTransfer("a", CPU1, CPU2, [], control=True)) == ("a", CPU1, CPU2)
    missing = PL({"a": CPU1, "b": CPU2}, transfers=[PLTransfer("a:0", CPU1, CPU2, ["b"])])
    c = compare_case(CASE, tf, missing)
    assert not c.transfers_equal and c.missing_transfers == [("a", CPU1, CPU2)]
    extra = PL({"a": CPU1, "b": CPU2}, transfers=same.transfers + [
        PLTransfer("b:0", CPU2, CPU0, ["client"])])
    assert compare_case(CASE, tf, extra).extra_transfers == [("b:0", CPU2, CPU0)]


def test_aggregate_and_thresholds() -> None:
    ok = compare_case(CASE, placed({"a": CPU0}), PL({"a": CPU0}))
    bad_node = compare_case(CASE, placed({"a": CPU0, "b": CPU1}), PL({"a": CPU0, "b": CPU0}))
    missed = compare_case(CASE, refused("x", "Malformed device specification 'q' in node"),
                          PL({}))
    crash = compare_case(CASE, placed({"a": CPU0}), None, crash="boom")
    f = aggregate([ok, bad_node, missed, crash])
    assert (f.cases, f.placed, f.refused) == (4, 3, 1)
    assert (f.nodes, f.nodes_agree) == (4, 2)
    assert f.node_agreement_pct == 50.0
    assert (f.refusals_caught, f.false_errors, f.crashes) == (0, 1, 1)
    assert f.transfer_cases == 2 and f.transfer_cases_equal == 2
    fails = " ".join(f.failures())
    assert "node agreement" in fails and "refusals caught 0/1" in fails and "false errors" in fails
    assert "THRESHOLDS NOT MET" in format_report(f, [ok, bad_node, missed, crash])
    assert aggregate([ok]).failures() == []
