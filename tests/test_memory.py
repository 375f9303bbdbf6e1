"""The memory analysis (analyses/memory.py), its budget, the PL401/PL402 rules, the
``placelint memory`` command and the README's example. TF itself judges the figures in
tests/test_memory_tf.py; these tests pin each accounting rule on graphs small enough to count
by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkrun import ROOT, invoke
from graphdefs import RESOURCE, Shape, Type, graph, op, placeholder

from placelint.analyses.memory import analyze_memory
from placelint.analyses.memory_budget import BudgetError, budget_for, parse_budget
from placelint.analyses.placer import place
from placelint.analyses.shape_inference import infer_shapes
from placelint.config import ConfigError, validate
from placelint.model.devices import DeviceSet

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
KIB = 1024


def memory_of(*nodes, devices="CPU:0,GPU:0", batch_size=None):
    g = graph(*nodes)
    placement = place(g, DeviceSet.parse(devices))
    return analyze_memory(g, placement, infer_shapes(g), batch_size=batch_size)


def var(name, shape, device=""):
    return op(name, "VarHandleOp", device=device, dtype=Type(1), shape=Shape(shape),
              container="", shared_name=name)


def read(name, device=""):
    return op(f"{name}/read", "ReadVariableOp", [name], device=device, dtype=Type(1))


def test_resident_bytes_are_variables_and_constants_with_largest_first():
    from graphdefs import const
    m = memory_of(var("w", (64, 32), "/device:GPU:0"), var("b", (32,), "/device:GPU:0"),
                  op("c", "Const", device="/device:GPU:0", dtype=Type(1),
                     value=const("v", [[1.0] * 4] * 2, dtype=1).attr["value"]))
    gpu = m.devices[GPU0]
    assert gpu.resident_bytes == 64 * 32 * 4 + 32 * 4 + 8 * 4
    assert [(o.name, o.kind, o.bytes) for o in gpu.resident] == [
        ("w", "variable", 8192), ("b", "variable", 128), ("c", "constant", 32)]
    assert m.devices[CPU0].resident_bytes == 0


def test_handles_to_one_variable_count_once():
    m = memory_of(var("w", (64, 32)), var("w_again", (64, 32)), devices="CPU:0")
    g = graph(var("w", (64, 32)), op("w2", "VarHandleOp", dtype=Type(1), shape=Shape((64, 32)),
                                     container="", shared_name="w"))
    placement = place(g, DeviceSet.parse("CPU:0"))
    shared = analyze_memory(g, placement, infer_shapes(g)).devices[CPU0]
    assert shared.resident_bytes == 64 * 32 * 4
    assert m.devices[CPU0].resident_bytes == 2 * 64 * 32 * 4      # two shared names: two


def test_tensors_live_from_producer_to_last_consumer_and_forwarding_allocates_nothing():
    # x (512 B) -> Identity -> y = MatMul(x, w) (8 KiB) -> Reshape (forwards y) -> z = Square;
    # u = Neg(y) after z
    nodes = [placeholder("x", (8, 16)), var("w", (16, 256)), read("w"),
             op("shape", "Const", dtype=Type(3), value=_int_tensor([2048])),
             op("xi", "Identity", ["x"]), op("y", "MatMul", ["xi", "w/read"]),
             op("r", "Reshape", ["y", "shape"]),
             op("z", "Square", ["r"]), op("u", "Neg", ["y"])]   # graph order is the schedule
    for n in nodes:
        n.device = "/device:CPU:0"
    m = memory_of(*nodes, devices="CPU:0").devices[CPU0]
    # x is freed after y; Square cannot take y's buffer (Neg reads it later) so z is new;
    # Neg, y's last reader, takes y's buffer over: the peak is y + z, at z
    assert m.peak_bytes == 16 * KIB
    assert m.peak_at == "z"
    assert sorted(o.name for o in m.at_peak) == ["y", "z"]
    assert m.peak_lower_bound_bytes == 16 * KIB
    assert m.unknown_ops == []
    assert m.resident_bytes == 16 * 256 * 4 + 4      # w and the shape constant


def _int_tensor(values):
    from graphdefs import const
    return const("v", values).attr["value"]


def test_receive_buffer_on_the_consumer_device_and_none_between_cpus():
    nodes = [placeholder("x", (256, 256)), op("y", "Neg", ["x"])]
    nodes[0].device, nodes[1].device = "/device:CPU:0", "/device:GPU:0"
    m = memory_of(*nodes)
    gpu = m.devices[GPU0]
    assert gpu.peak_bytes == 2 * 256 * KIB       # the received x and y
    assert [o.kind for o in sorted(gpu.at_peak, key=lambda o: o.kind)] == ["receive", "tensor"]
    nodes[1].device = "/device:CPU:1"
    m = memory_of(*nodes, devices="CPU=2")
    # the local rendezvous hands x's buffer over, and Neg (its last reader) takes it over:
    # all of it is CPU:0's memory
    assert (m.devices[CPU0].peak_bytes, m.devices[CPU1].peak_bytes) == (256 * KIB, 0)
    nodes.append(op("z", "Neg", ["x"], device="/device:CPU:0"))   # x read again later: y is
    # new memory on CPU:1, z (the last reader) takes x over
    m = memory_of(*nodes, devices="CPU=2")
    assert (m.devices[CPU0].peak_bytes, m.devices[CPU1].peak_bytes) == (256 * KIB, 256 * KIB)


def test_unknown_sizes_are_listed_and_batch_size_fills_the_first_dimension():
    nodes = [placeholder("x", (-1, 100)), op("y", "Relu", ["x"])]
    m = memory_of(*nodes, devices="CPU:0").devices[CPU0]
    assert m.unknown_ops == ["x", "y"] and m.peak_bytes == 0
    m = memory_of(*nodes, devices="CPU:0", batch_size=10).devices[CPU0]
    assert m.unknown_ops == [] and m.peak_bytes == 10 * 100 * 4     # Relu forwards x


def test_resource_handles_are_not_unknown():
    m = memory_of(var("w", (2, 2)), op("h", "Identity", ["w"], T=Type(RESOURCE)), devices="CPU:0")
    assert m.devices[CPU0].unknown_ops == []


def test_budget_parsing_and_lookup():
    budget = parse_budget("GPU=16GiB, CPU=64G,GPU:1=8GiB")
    assert budget == {"GPU": 16 << 30, "CPU": 64 << 30, "GPU:1": 8 << 30}
    assert budget_for(GPU0, budget, None) == (16 << 30, "GPU=16GiB")
    assert budget_for(GPU0.replace("GPU:0", "GPU:1"), budget, 0.5) == (
        4 << 30, "GPU:1=8GiB x gpu-memory-fraction 0.5")
    assert budget_for(CPU0, budget, 0.5) == (64 << 30, "CPU=64GiB")
    assert budget_for(CPU0, {"GPU": 1}, None) is None
    for bad in ("GPU", "GPU=", "GPU=lots", "=4G", ""):
        with pytest.raises(BudgetError):
            parse_budget(bad)


def test_config_keys():
    v = validate({"memory": {"GPU": "4GiB"}, "gpu-memory-fraction": 0.5,
                  "memory-high-share": 0.8, "batch-size": 32}, "t")
    assert v == {"memory": {"GPU": 4 << 30}, "gpu_memory_fraction": 0.5,
                 "memory_high_share": 0.8, "batch_size": 32}
    assert validate({"memory": "GPU=1G,CPU=2G"}, "t")["memory"] == {"GPU": 1 << 30, "CPU": 2 << 30}
    for bad in ({"memory": 5}, {"gpu-memory-fraction": 1.5}, {"memory-high-share": 0},
                {"memory": {"GPU": "x"}}):
        with pytest.raises(ConfigError):
            validate(bad, "t")


MLP = "tests/data/memory/wide_mlp.pbtxt"


def test_memory_command_json_shape_and_figures():
    r = invoke(["memory", MLP, "--batch-size", "256", "-f", "json"], cwd=ROOT)
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert [set(o) for o in data] == [{"model", "devices"}]
    gpu = data[0]["devices"][GPU0]
    assert set(gpu) == {"resident_bytes", "peak_bytes", "peak_lower_bound_bytes", "unknown_ops",
                        "largest", "budget_bytes", "budget"}
    assert gpu["budget_bytes"] is None and gpu["budget"] is None      # no --memory given
    assert gpu["resident_bytes"] == 4 * 16384 * 16384 * 4 + 16384 * 1000 * 4
    # two activations of 256 x 16384 floats live at once (Relu forwards MatMul's buffer)
    assert gpu["peak_bytes"] == gpu["peak_lower_bound_bytes"] == 2 * 256 * 16384 * 4
    assert gpu["unknown_ops"] == []
    assert gpu["largest"][0] == {"name": "dense_0/kernel", "kind": "variable", "bytes": 1 << 30}
    assert data[0]["devices"][CPU0]["resident_bytes"] == 0


def test_rules_fire_on_budget_and_stay_silent_without_one():
    quiet = invoke(["check", MLP, "--isolated", "--no-cache", "--select", "PL4"], cwd=ROOT)
    assert quiet.codes() == []
    over = invoke(["check", MLP, "--isolated", "--no-cache", "--select", "PL4",
                   "--memory", "GPU=4GiB"], cwd=ROOT)
    assert over.codes() == ["PL401"] and over.exit_code == 1
    assert "at least: 11 op(s) of unknown size" in over.stdout
    high = invoke(["check", MLP, "--isolated", "--no-cache", "--select", "PL4",
                   "--memory", "GPU=8GiB", "--gpu-memory-fraction", "0.53", "--batch-size", "1"],
                  cwd=ROOT)
    assert high.codes() == ["PL402"] and "96% of the budget" in high.stdout
    assert over.stdout.splitlines()[-5:-1] == [
        f"{MLP}: memory per device (peak of one step in graph order; bound: no schedule "
        "needs less):",
        "  device  resident  peak  bound      total          budget",
        "  CPU:0        0 B   0 B    0 B        0 B               -",
        "  GPU:0    4.1 GiB   0 B    0 B  4.1 GiB+?  4.0 GiB (102%)"]
    bad = invoke(["memory", MLP, "--gpu-memory-fraction", "2"], cwd=ROOT)
    assert bad.exit_code == 2 and "--gpu-memory-fraction must be a number in (0, 1]" in bad.stderr


CHECK = ["check", MLP, "--isolated", "--no-cache", "--select", "PL4", "--memory", "GPU=4GiB",
         "--batch-size", "256"]


def test_check_json_carries_each_devices_memory_with_its_budget():
    r = invoke(CHECK + ["-f", "json"], cwd=ROOT)
    model = json.loads(r.stdout)["models"][0]
    gpu, cpu = model["memory"]["devices"][GPU0], model["memory"]["devices"][CPU0]
    assert gpu["resident_bytes"] == 4 * 16384 * 16384 * 4 + 16384 * 1000 * 4
    assert gpu["peak_bytes"] == gpu["peak_lower_bound_bytes"] == 2 * 256 * 16384 * 4
    assert gpu["budget_bytes"] == 4 << 30 and gpu["budget"] == "GPU=4GiB"
    assert gpu["largest"][0] == {"name": "dense_0/kernel", "kind": "variable", "bytes": 1 << 30}
    assert gpu["unknown_ops"] == []
    assert cpu["resident_bytes"] == cpu["peak_bytes"] == 0 and cpu["budget_bytes"] is None
    # the same objects as `placelint memory --format json` with the same budget
    alone = json.loads(invoke(["memory", MLP, "--batch-size", "256", "-f", "json",
                               "--memory", "GPU=4GiB"], cwd=ROOT).stdout)[0]["devices"]
    assert gpu == alone[GPU0]
    # without a budget check does not analyse memory
    quiet = invoke(["check", MLP, "--isolated", "--no-cache", "-f", "json"], cwd=ROOT)
    assert json.loads(quiet.stdout)["models"][0]["memory"] is None


def test_check_text_full_and_markdown_show_the_memory_table():
    full = invoke(CHECK + ["--output-format", "full"], cwd=ROOT).stdout.splitlines()
    at = full.index(f"{MLP}: memory per device (peak of one step in graph order; bound: no "
                    "schedule needs less):")
    assert full[at + 1:at + 5] == [
        "  device  resident      peak     bound    total          budget",
        "  CPU:0        0 B       0 B       0 B      0 B               -",
        "  GPU:0    4.1 GiB  32.0 MiB  32.0 MiB  4.1 GiB  4.0 GiB (102%)",
        "  largest on GPU:0: dense_0/kernel (variable, 1.0 GiB), dense_1/kernel (variable, "
        "1.0 GiB), dense_2/kernel (variable, 1.0 GiB), dense_3/kernel (variable, 1.0 GiB), "
        "dense_4/kernel (variable, 62.5 MiB)"]
    md = invoke(CHECK + ["-f", "markdown"], cwd=ROOT).stdout.splitlines()
    at = md.index("#### Memory per device")
    assert md[at + 2:] == [
        "| Model | Device | Resident | Peak | Bound | Total | Budget |",
        "|---|---|---:|---:|---:|---:|---:|",
        f"| `{MLP}` | `CPU:0` | 0 B | 0 B | 0 B | 0 B | - |",
        f"| `{MLP}` | `GPU:0` | 4.1 GiB | 32.0 MiB | 32.0 MiB | 4.1 GiB | 4.0 GiB (102%) |"]
    clean = invoke(["check", MLP, "--isolated", "--no-cache", "-f", "markdown"], cwd=ROOT)
    assert "Memory per device" not in clean.stdout


def test_readme_check_memory_table_is_what_placelint_prints():
    readme = (ROOT / "README.md").read_text()
    command = f"$ placelint check {MLP} --memory GPU=4GiB --batch-size 256 --select PL4"
    block = readme.split(command + "\n", 1)[1].split("```", 1)[0].splitlines()
    r = invoke(command.split()[2:] + ["--no-cache"], cwd=ROOT)
    assert r.exit_code == 1
    out = r.stdout.splitlines()
    assert len(block) == len(out)
    for shown, printed in zip(block, out):
        assert printed.startswith(shown.removesuffix(" ..."))


def test_readme_memory_example_is_what_placelint_prints():
    readme = (ROOT / "README.md").read_text()
    command = f"$ placelint memory {MLP} --memory GPU=4GiB --batch-size 256"
    block = readme.split(command + "\n", 1)[1].split("```", 1)[0].splitlines()
    r = invoke(command.split()[2:], cwd=ROOT)
    assert r.exit_code == 0
    out = r.stdout.splitlines()
    assert len(block) == len(out)
    for shown, printed in zip(block, out):
        assert printed.startswith(shown.removesuffix(" ..."))
    assert "PL401 [device-memory-exceeded] error" in r.stdout


def test_the_step_is_analysed_and_every_variable_stays_resident():
    r = invoke(["memory", MLP, "--fetch", "dense_0/Relu", "-f", "json"], cwd=ROOT)
    assert r.exit_code == 0
    gpu = json.loads(r.stdout)[0]["devices"][GPU0]
    # only the step's ops run (their sizes are unknown without --batch-size) ...
    assert gpu["unknown_ops"] == ["dense_0/MatMul", "dense_0/Relu", "x"]
    # ... but the session holds every variable
    assert gpu["resident_bytes"] == 4 * 16384 * 16384 * 4 + 16384 * 1000 * 4
    text = invoke(["memory", MLP, "--fetch", "dense_0/Relu"], cwd=ROOT).stdout
    assert "analysed: the step of --fetch/--feed" in text.splitlines()[0]


def test_every_sample_is_analysed(tmp_path):
    """A SavedModel's function bodies (_Arg/_Retval), TF1 loops, a cluster graph: each model
    gets a report, with its devices, and the lower bound never exceeds the peak."""
    r = invoke(["memory", "samples", "-f", "json"], cwd=ROOT)
    assert r.exit_code == 0, r.stdout
    data = json.loads(r.stdout)
    assert len(data) >= 7 and all("error" not in o for o in data)
    for o in data:
        for d in o["devices"].values():
            assert 0 <= d["peak_lower_bound_bytes"] <= d["peak_bytes"]
    cnn = next(o for o in data if o["model"].endswith("keras_cnn"))
    assert sum(d["resident_bytes"] for d in cnn["devices"].values()) > 0
