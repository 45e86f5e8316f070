"""muster up/down, configuration checks, the API."""

import os
import shutil
import subprocess
import time
from pathlib import Path

from conftest import BIN, ensure_test_users


def test_down_and_up_resume_state(fresh_cluster):
    c = fresh_cluster
    done = c.sbatch("--wrap", "echo first")
    assert c.wait_done(done) == "COMPLETED"
    held = c.sbatch("-H", "--wrap", "echo later")
    running = c.sbatch("--wrap", "sleep 3; echo survived")
    c.wait_state(running, "RUNNING")
    r = c.down()
    assert r.returncode == 0
    assert not c.daemon_pids() or all(not Path(f"/proc/{p}").exists() for p in c.daemon_pids().values())
    c.up()
    assert c.job(done)["state"] == "COMPLETED"
    assert c.job(held)["state"] == "PENDING"
    # Rebuilt from the journal: a user's jobs are found by user again.
    r = c.run(["squeue", "-h", "-t", "all", "-o", "%i", "-u", str(os.getuid())])
    assert {str(done), str(held), str(running)} <= set(r.stdout.split()), r.stdout
    # the job kept running while the daemons were down and is reported when they return
    assert c.wait_done(running) == "COMPLETED"
    assert (c.work / f"slurm-{running}.out").read_text().strip() == "survived"
    nxt = c.sbatch("--wrap", "true")
    assert nxt > running, "job ids are never reused"
    c.run(["scontrol", "release", str(held)])
    assert c.wait_done(held) == "COMPLETED"


def test_sinfo_after_up_shows_idle_nodes(fresh_cluster):
    r = fresh_cluster.run(["sinfo", "-N", "-h", "-o", "%N %t"])
    assert sorted(r.stdout.splitlines()) == ["cpu01 idle", "gpu01 idle", "gpu01 idle", "gpu02 idle",
                                             "gpu02 idle"]


def test_validate_reports_file_line_and_key(tmp_path):
    conf = tmp_path / "muster.conf"
    conf.write_text("ClusterName=x\nDefMemPerCPU=abc\n")
    r = subprocess.run([str(BIN / "musterd"), "--validate", "--conf", str(conf)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "muster.conf:2" in r.stderr and "DefMemPerCPU" in r.stderr
    conf.write_text("ClusterName=x\nBogusKey=1\n")
    r = subprocess.run([str(BIN / "musterd"), "--validate", "--conf", str(conf)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "muster.conf:2" in r.stderr and "BogusKey" in r.stderr


def test_validate_refuses_node_names_that_are_not_host_names(tmp_path):
    # A fuzzed configuration once named 60,000 nodes holding '=' and control bytes.
    conf = tmp_path / "muster.conf"
    conf.write_text("ClusterName=x\nNodeName=ok1,bad=name CPUs=2\n")
    r = subprocess.run([str(BIN / "musterd"), "--validate", "--conf", str(conf)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "muster.conf:2: NodeName" in r.stderr
    assert "node name 'bad=name' may hold only letters, digits" in r.stderr, r.stderr


def test_junk_on_the_agent_socket_leaves_musterd_serving(cluster):
    # Lines of any shape from a would-be agent are logged and skipped: musterd
    # stays up, its real agents keep their nodes, and jobs still run.
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(cluster.root / "ctld" / "agent.sock"))
    s.sendall(b'[1,2]\n"text"\n{"type":5}\n'
              b'{"type":"register","host":"h","nodes":["gpu01"],"running":["x"]}\n'
              b'{"type":"ended","result":{"job_id":"seven"}}\n\xff\xfe\n')
    s.close()
    job = cluster.sbatch("--wrap", "echo still")
    assert cluster.wait_done(job) == "COMPLETED"
    assert (cluster.work / f"slurm-{job}.out").read_text().strip() == "still"
    r = cluster.run(["sinfo", "-h", "-N", "-o", "%N %t"])
    assert "gpu01 idle" in r.stdout and "down" not in r.stdout, r.stdout


def test_real_slurm_conf_loads_unchanged(tmp_path):
    src = Path(__file__).resolve().parents[1] / "data" / "conf" / "slurm-oracle"
    for f in ("slurm.conf", "gres.conf"):
        shutil.copy(src / f, tmp_path / f)
    r = subprocess.run([str(BIN / "musterd"), "--validate", "--conf", str(tmp_path / "slurm.conf")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "6 nodes, 2 partitions" in r.stdout


def test_validate_needs_no_munged_but_musterd_does(tmp_path):
    conf = tmp_path / "muster.conf"
    conf.write_text("ClusterName=x\nAuthType=auth/munge\n"
                    f"AuthInfo=socket={tmp_path}/munge.socket.2\n"
                    f"StateSaveLocation={tmp_path}/state\nNodeName=n1 CPUs=2\n")
    r = subprocess.run([str(BIN / "musterd"), "--validate", "--conf", str(conf)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "is valid" in r.stdout
    assert f"{tmp_path}/munge.socket.2" in r.stderr and "is munged running" in r.stderr, r.stderr
    r = subprocess.run([str(BIN / "musterd"), "--conf", str(conf)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "musterd: error: munge_encode" in r.stderr, r.stderr
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").iterdir())


def test_reconfigure_rereads_the_file_in_place(fresh_cluster):
    c = fresh_cluster
    pids = c.daemon_pids()
    running = c.sbatch("--wrap", "sleep 3; echo kept")
    c.wait_state(running, "RUNNING")
    before = c.conf.read_text()
    c.conf.write_text(before + "PartitionName=extra Nodes=cpu01 MaxTime=1:00:00 State=UP\n")
    r = c.run(["scontrol", "reconfigure"])
    assert (r.stdout, r.stderr) == ("", "")
    deadline = time.time() + 20
    while time.time() < deadline and "extra" not in c.run(["sinfo", "-h", "-o", "%P"],
                                                          check=False).stdout:
        time.sleep(0.1)
    assert c.run(["sinfo", "-h", "-p", "extra", "-o", "%P %N"]).stdout.split() == ["extra", "cpu01"]
    assert c.daemon_pids() == pids  # restarted in place
    assert c.wait_done(running) == "COMPLETED"
    assert (c.work / f"slurm-{running}.out").read_text().strip() == "kept"
    # Only operators; a bad file changes nothing.
    user = ensure_test_users()
    if user:
        r = c.run(["scontrol", "reconfigure"], user=user[0], check=False)
        assert (r.returncode, r.stderr) == (1, "slurm_reconfigure error: Invalid user id\n")
    c.conf.write_text(before + "DefMemPerCPU=lots\n")
    r = c.run(["scontrol", "reconfigure"], check=False)
    assert r.returncode == 1
    assert r.stderr.startswith(f"slurm_reconfigure error: {c.conf}:") or \
        r.stderr.startswith("slurm_reconfigure error: muster.conf:"), r.stderr
    assert "DefMemPerCPU" in r.stderr
    c.conf.write_text(before)
    assert c.daemon_pids() == pids


def test_api_rejects_malformed_requests(cluster):
    status, body = cluster.api("POST", "/v1/jobs", None)
    assert status == 400
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(cluster.socket)
    s.sendall(b"POST /v1/jobs HTTP/1.1\r\nContent-Length: 5\r\n\r\n{bad}")
    reply = s.recv(65536)
    s.close()
    assert b" 400 " in reply.split(b"\r\n")[0]
    # Every number in a request is an integer (a float far out of range
    # once reached an undefined conversion in musterd; found by api_fuzz).
    status, body = cluster.api("POST", "/v1/jobs", {"script": "#!/bin/sh\ntrue\n",
                                                     "time_limit_s": 6.7e109})
    assert status == 400 and "not an integer" in body["error"], body
    status, body = cluster.api("GET", "/v1/ping")
    assert status == 200 and body["status"] == "ok"


def test_config_lookup_order(cluster):
    env = {"MUSTER_CONF": "", "SLURM_CONF": str(cluster.conf)}
    e = dict(cluster.env)
    e.pop("MUSTER_CONF")
    e["SLURM_CONF"] = str(cluster.conf)
    r = subprocess.run([str(BIN / "sinfo"), "-h", "-o", "%P"], env=e, capture_output=True, text=True)
    assert r.returncode == 0 and "short*" in r.stdout
