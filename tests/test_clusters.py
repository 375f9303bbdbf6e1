"""Clusters: device names with job/replica/task, ClusterSpec files, the session's task, and
reports that keep the job and task (no TensorFlow here; tests/differential/test_cluster.py
judges the same against real servers)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from google.protobuf import text_format

from placelint.api import place_graphdef
from placelint.config import ConfigError, load_config
from placelint.model.cluster import Cluster, ClusterError
from placelint.model.devices import DeviceName, DeviceSet, DeviceSetError, DeviceSpec, display
from placelint.proto import GraphDef
from placelint.settings import Settings

from tests.checkrun import invoke

PS0 = "/job:ps/replica:0/task:0/device:CPU:0"
W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"
CLUSTER = {"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]}


def test_device_name_is_the_full_name_and_knows_its_display():
    ds = DeviceSet.parse(f"{PS0},{W0}")
    name = ds.get(PS0).name
    assert isinstance(name, DeviceName) and name == PS0 and hash(name) == hash(PS0)
    assert (name.job, name.replica, name.task, name.type, name.id) == ("ps", 0, 0, "CPU", 0)
    assert name.display == "/job:ps/task:0/device:CPU:0"
    assert name.task_name == "/job:ps/replica:0/task:0" and name.local_name == "CPU:0"
    assert json.dumps([name]) == json.dumps([PS0])          # JSON keeps the full name
    back = pickle.loads(pickle.dumps(name))                 # worker processes and caches
    assert back == PS0 and back.display == name.display
    assert name.on("GPU", 1) == "/job:ps/replica:0/task:0/device:GPU:1"
    assert name.on("GPU", 1).display == "/job:ps/task:0/device:GPU:1"


def test_one_local_task_displays_short_names():
    ds = DeviceSet.parse("CPU=1,GPU=2")
    assert [n.display for n in ds.names] == ["GPU:0", "GPU:1", "CPU:0"]
    assert ds.describe() == "CPU:0, GPU:0, GPU:1" and not ds.multi_task
    # a name met outside a set displays by its own fields
    assert display("/job:localhost/replica:0/task:0/device:GPU:1") == "GPU:1"
    assert display("/job:learner/replica:0/task:0/device:CPU:0") == "/job:learner/task:0/device:CPU:0"
    assert display("/job:w/replica:2/task:0/device:CPU:0") == "/job:w/replica:2/task:0/device:CPU:0"
    assert display(None) == "nowhere"


def test_a_set_with_a_localhost_task_among_others_keeps_every_task():
    ds = DeviceSet.parse(f"CPU:0,{W0}")
    assert {n.display for n in ds.names} == {"/job:localhost/task:0/device:CPU:0",
                                             "/job:worker/task:0/device:CPU:0"}


def test_replicas_are_shown_when_some_replica_is_not_zero():
    ds = DeviceSet.parse("/job:w/replica:0/task:0/device:CPU:0,/job:w/replica:1/task:0/device:CPU:0")
    assert sorted(n.display for n in ds.names) == ["/job:w/replica:0/task:0/device:CPU:0",
                                                   "/job:w/replica:1/task:0/device:CPU:0"]


def test_one_remote_task_keeps_its_job_in_the_summary():
    """Issue 14: ``--devices /job:learner/...`` printed ``devices: CPU:0``."""
    s = Settings(devices=DeviceSet.parse("/job:learner/replica:0/task:0/device:CPU:0"))
    assert s.describe_devices() == "devices: CPU:0 on /job:learner/task:0 (--devices)"
    assert Settings().describe_devices() == "devices: CPU:0, GPU:0 (default; set --devices)"


def test_devices_with_full_names_add_a_cpu_per_task():
    ds = DeviceSet.parse("/job:ps/task:0/device:CPU:0,/job:worker/task:0/device:GPU:0")
    assert sorted(ds.names) == sorted([PS0, W0, "/job:worker/replica:0/task:0/device:GPU:0"])
    assert ds.describe() == ("/job:ps/task:0/device:CPU:0, /job:worker/task:0/device:CPU:0, "
                             "/job:worker/task:0/device:GPU:0")


def test_cluster_counts_apply_per_task():
    ds = DeviceSet.parse("CPU=1,GPU=2", cluster=Cluster.from_dict(CLUSTER))
    assert len(ds.devices) == 9
    assert ds.describe() == ("CPU:0, GPU:0, GPU:1 on each of /job:ps/task:0, /job:worker/task:0, "
                             "/job:worker/task:1")
    s = Settings(devices=ds)
    assert s.describe_devices().endswith("(--devices; session on /job:worker/task:0)")
    # every task has its host CPU, also when only some tasks' devices are named
    named = DeviceSet.parse("/job:ps/task:0/device:GPU:0", cluster=Cluster.from_dict(CLUSTER))
    assert sorted(named.names) == sorted([PS0, "/job:ps/replica:0/task:0/device:GPU:0", W0, W1])
    # a full name must be one of the cluster's tasks
    with pytest.raises(DeviceSetError, match="not in a task of the cluster"):
        DeviceSet.parse("/job:chief/task:0/device:CPU:0", cluster=Cluster.from_dict(CLUSTER))


def test_session_task_is_local_and_comes_first():
    """SortPrioritizedDeviceVector: among equal devices the session's (local) task first."""
    gd = text_format.Parse('node { name: "x" op: "NoOp" }', GraphDef())
    cluster = Cluster.from_dict(CLUSTER)
    assert place_graphdef(gd, devices=DeviceSet.parse("CPU=1", cluster=cluster)).placement == {"x": W0}
    tf_config = {"cluster": CLUSTER, "task": {"type": "worker", "index": 1}}
    other = Cluster.from_dict(tf_config)
    assert other.session_task == DeviceSpec("worker", 0, 1)
    assert place_graphdef(gd, devices=DeviceSet.parse("CPU=1", cluster=other)).placement == {"x": W1}
    # no chief or worker: the first task by name
    only_ps = Cluster.from_dict({"ps": ["a:1", "b:2"]})
    assert only_ps.session_task == DeviceSpec("ps", 0, 0)


@pytest.mark.parametrize("data, message", [
    ([], "expected a JSON object"),
    ({}, "no jobs"),
    ({"ps": []}, "at least one"),
    ({"ps": [3]}, "at least one"),
    ({"1ps": ["a:1"]}, "not a valid TensorFlow job name"),
    ({"ps": {"x": "a:1"}}, "task indices must be integers"),
    ({"cluster": CLUSTER, "task": {"type": "chief", "index": 0}}, "not in the cluster"),
    ({"cluster": CLUSTER, "task": "worker"}, "must be"),
])
def test_bad_cluster_specs(data, message):
    with pytest.raises(ClusterError, match=message):
        Cluster.from_dict(data)


def test_sparse_jobs_as_cluster_spec_allows():
    c = Cluster.from_dict({"worker": {"1": "a:1", "3": "b:2"}})
    assert c.tasks == [DeviceSpec("worker", 0, 1), DeviceSpec("worker", 0, 3)]


def test_cluster_in_config_file_and_inline(tmp_path: Path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "cluster.json").write_text(json.dumps(CLUSTER))
    cfg = tmp_path / "placelint.toml"
    cfg.write_text('devices = {CPU = 2}\ncluster = "conf/cluster.json"\n')
    s = Settings()
    load_config(cfg).apply(s)
    s.apply_cluster()
    assert len(s.devices.devices) == 6 and s.devices.multi_task
    assert "config, --cluster conf/cluster.json" in s.describe_devices()
    cfg.write_text('cluster = {ps = ["h:1"], worker = ["h:2"]}\n')
    s = Settings()
    load_config(cfg).apply(s)
    s.apply_cluster()
    assert sorted(s.devices.names) == sorted([
        PS0, "/job:ps/replica:0/task:0/device:GPU:0", W0, "/job:worker/replica:0/task:0/device:GPU:0"])
    cfg.write_text('cluster = "missing.json"\n')
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(cfg).apply(Settings())
    cfg.write_text('cluster = {ps = []}\n')
    with pytest.raises(ConfigError, match="at least one"):
        load_config(cfg)


PS_ROUND_TRIP = """
node { name: "w" op: "VarHandleOp" device: "%s" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 512 } } } } attr { key: "container" value { s: "" } } attr { key: "shared_name" value { s: "w" } } }
node { name: "read" op: "ReadVariableOp" input: "w" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "grad" op: "Relu" input: "read" device: "%s" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "update" op: "AssignSubVariableOp" input: "w" input: "grad" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "x" op: "Placeholder" device: "%s" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 512 } } } } }
node { name: "y" op: "Relu" input: "x" device: "%s" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "z" op: "Tanh" input: "y" device: "%s" attr { key: "T" value { type: DT_FLOAT } } }
"""


@pytest.mark.parametrize("var, compute, devices", [
    ("/job:ps/task:0", "/job:worker/task:0", f"{PS0},{W0}"),
    ("/device:CPU:0", "/device:GPU:0", "CPU:0,GPU:0"),
])
def test_parameter_server_round_trip_is_not_ping_pong(var, compute, devices):
    """Variable read -> worker -> update of that variable: by design. The same graph's other
    path (x on A -> y on B -> z on A) still is one."""
    gd = text_format.Parse(PS_ROUND_TRIP % (var, compute, var, compute, var), GraphDef())
    r = place_graphdef(gd, devices=devices)
    pl203 = [d for d in r.diagnostics if d.code == "PL203"]
    assert [d.node for d in pl203] == ["y"]
    assert "update" not in pl203[0].related_nodes


def test_messages_on_a_cluster_keep_job_and_task():
    gd = text_format.Parse(PS_ROUND_TRIP % (("/job:ps/task:0", "/job:worker/task:0") * 2
                                            + ("/job:ps/task:0",)), GraphDef())
    r = place_graphdef(gd, devices=f"{PS0},{W0}")
    text = "\n".join(d.message for d in r.diagnostics)
    assert "from CPU:0 to CPU:0" not in text and "CPU:0 -> CPU:0" not in text
    pl201 = [d.message for d in r.diagnostics if d.code == "PL201"]
    assert any("over the network from /job:ps/task:0/device:CPU:0 to "
               "/job:worker/task:0/device:CPU:0" in m for m in pl201)
    pl203 = next(d.message for d in r.diagnostics if d.code == "PL203")
    assert pl203.startswith("data goes /job:ps/task:0/device:CPU:0 -> "
                            "/job:worker/task:0/device:CPU:0 -> /job:ps/task:0/device:CPU:0")
    assert all(t.network for t in r.transfers)


def test_transfer_summary_marks_network_pairs(tmp_path: Path):
    from placelint.analyses.transfers import PairSummary
    from placelint.output.transfer_text import pair_lines
    ds = DeviceSet.parse(f"CPU=2,{PS0},{W0}".replace("CPU=2,", ""))
    pairs = [PairSummary.from_dict({"from": PS0, "to": W0, "count": 2, "bytes": 8, "unknown": 0},
                                   ds)]
    assert pair_lines(pairs) == [
        "transfers per step (device pair: count, bytes):",
        "  /job:ps/task:0/device:CPU:0 -> /job:worker/task:0/device:CPU:0: 2, 8 B (network)"]
    local = DeviceSet.parse("CPU=2")
    one = PairSummary.from_dict({"from": local.names[0], "to": local.names[1], "count": 1,
                                 "bytes": 4, "unknown": 0}, local)
    assert pair_lines([one])[1] == "  CPU:0 -> CPU:1: 1, 4 B"
    gpu = DeviceSet.parse("CPU=1,GPU=1")
    g0 = next(n for n in gpu.names if n.endswith("GPU:0"))
    host = PairSummary.from_dict({"from": g0, "to": g0, "count": 1,
                                  "bytes": 1600, "unknown": 0}, gpu)
    assert pair_lines([host])[1] == "  GPU:0 host memory <-> device: 1, 1.6 KiB"


def test_no_device_name_is_reparsed_outside_the_model():
    """One value type: nothing outside model/devices.py cuts device strings apart."""
    root = Path(__file__).resolve().parent.parent / "placelint"
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if p.name != "devices.py" and 'rsplit("/device:"' in p.read_text()]
    assert offenders == []
    from placelint.analyses import transfers
    from placelint.checks import common
    assert not hasattr(DeviceSpec, "short") and not hasattr(common, "short_device")
    assert not hasattr(transfers, "_short") and not hasattr(transfers, "_device_type")


def test_cli_cluster_option(tmp_path: Path):
    (tmp_path / "c.json").write_text(json.dumps(CLUSTER))
    model = tmp_path / "m.pbtxt"
    model.write_text('node { name: "x" op: "NoOp" }\n')
    r = invoke(["place", model, "--cluster", tmp_path / "c.json", "--devices", "CPU=1"], cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    assert "devices: CPU:0 on each of /job:ps/task:0, /job:worker/task:0, /job:worker/task:1" in r.stdout
    assert f"x: (NoOp): {W0}" in r.stdout
    (tmp_path / "bad.json").write_text("{not json")
    bad = invoke(["place", model, "--cluster", tmp_path / "bad.json"], cwd=tmp_path)
    assert bad.exit_code == 2 and "--cluster" in bad.stderr and "is not JSON" in bad.stderr
    missing = invoke(["check", model, "--cluster", tmp_path / "nope.json", "--isolated"], cwd=tmp_path)
    assert missing.exit_code == 2 and "cannot read" in missing.stderr


def test_readme_cluster_example_is_what_placelint_prints():
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    command = "$ placelint check samples/ps_worker.pbtxt --cluster samples/cluster.json --devices CPU=1"
    block = readme.split(command + "\n", 1)[1].split("```", 1)[0].splitlines()
    r = invoke(command.split()[2:] + ["--isolated", "--no-cache"], cwd=root)
    assert r.exit_code == 0 or r.exit_code == 1
    out = r.stdout.splitlines()
    assert len(block) == len(out)
    for shown, printed in zip(block, out):
        assert printed.startswith(shown.removesuffix(" ..."))
