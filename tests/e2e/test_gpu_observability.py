"""What the agents see on their GPUs and jobs: per-GPU series with the
holding job's labels (on musterd and on the agent's own address), the
emulated GPUs' utilisation control, GPU figures in accounting, the idle-GPU
policy, and health checks that drain and resume nodes."""

import os
import shutil
import socket
import stat
import subprocess
import time
import urllib.request

import pytest

from conftest import DEFAULT_CONF, make_cluster, wait_for
from test_metrics import metrics, parse

# Sets every GPU the job holds on its node to UTIL percent busy through the
# emulated GPUs' control directory, then sleeps.
BUSY = ('for i in $(echo $CUDA_VISIBLE_DEVICES | tr , " "); do '
        'echo {util} > $MUSTER_GPU_CONTROL_DIR/$i/utilization; done; sleep {secs}')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def series(families, family, **labels):
    return [(l, v) for n, l, v in families.get(family, {"samples": []})["samples"]
            if all(l.get(k) == w for k, w in labels.items())]


def conf(extra, parts=None):
    text = DEFAULT_CONF.replace("GresTypes=gpu\n", "GresTypes=gpu\nJobAcctGatherFrequency=1\n" + extra)
    if parts:
        text = text.replace(
            "PartitionName=train Nodes=gpu[01-02] MaxTime=3-00:00:00 DefaultTime=04:00:00 State=UP",
            "PartitionName=train Nodes=gpu[01-02] MaxTime=3-00:00:00 DefaultTime=04:00:00 "
            "State=UP " + parts)
    return text


def test_gpu_series_carry_the_jobs_labels_only_while_it_runs():
    port = free_port()
    c = make_cluster(conf(f"MusterAgentMetricsAddress=127.0.0.1:{port}\n"))
    try:
        job = c.sbatch("-p", "train", "-w", "gpu01", "--gres=gpu:2", "-t", "5", "--wrap",
                       BUSY.format(util=87, secs=60))
        c.wait_state(job, "RUNNING")

        def busy():
            m = metrics(c)
            s = series(m, "muster_gpu_utilization_ratio", node="gpu01", hpc_job=str(job))
            return m if len(s) == 2 and all(v == 0.87 for _, v in s) else None

        m = wait_for(busy, what="the job's GPUs at 87%")
        labels = series(m, "muster_gpu_utilization_ratio", hpc_job=str(job))[0][0]
        assert labels["user"] == "root" and labels["partition"] == "train"
        assert labels["emulated"] == "true" and labels["uuid"].startswith("GPU-")
        assert labels["model"] == "NVIDIA H100 80GB HBM3"
        # The other GPUs: no job, idle; every GPU of both nodes is there.
        assert len(series(m, "muster_gpu_utilization_ratio")) == 16
        idle = series(m, "muster_gpu_utilization_ratio", node="gpu02")
        assert all(v == 0 and "hpc_job" not in l for l, v in idle)
        assert series(m, "muster_gpu_memory_used_bytes", hpc_job=str(job))[0][1] > 0
        assert series(m, "muster_gpu_power_watts", hpc_job=str(job))[0][1] > 70
        assert len(series(m, "muster_gpu_ecc_errors", node="gpu01", gpu="0")) == 4
        # The job's cgroup (or processes): memory and CPU with its labels.
        assert series(m, "muster_job_memory_bytes", hpc_job=str(job))[0][1] > 0
        assert m["muster_job_cpu_seconds_total"]["type"] == "counter"
        assert series(m, "muster_job_cpu_seconds_total", hpc_job=str(job), node="gpu01")

        # The agent serves its own nodes' series at MusterAgentMetricsAddress.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            own = parse(r.read().decode())
        assert series(own, "muster_gpu_utilization_ratio", node="gpu01", hpc_job=str(job))
        assert "muster_jobs" not in own  # the scheduler's series are musterd's

        r = c.run(["squeue", "-h", "-j", str(job), "-O", "JobID,GpuUtil,GpuIdle"])
        assert r.stdout.split()[1:] == ["87%", "busy"]
        assert "GpuUtilization=87%" in c.run(["scontrol", "show", "job", str(job)]).stdout

        c.cancel([job])
        # Its labels go with it, and its GPUs are idle for the next job.
        def gone():
            m = metrics(c)
            left = [l for l, _ in series(m, "muster_gpu_utilization_ratio") if "hpc_job" in l]
            left += [l for l, _ in series(m, "muster_job_memory_bytes")]
            busy = [l for l, v in series(m, "muster_gpu_utilization_ratio") if v > 0]
            return not left and not busy
        wait_for(gone, what="the job's series to go")
    finally:
        c.teardown()


def test_gpu_utilisation_reaches_sacct_and_seff():
    c = make_cluster(conf(""))
    try:
        job = c.sbatch("-p", "train", "--gres=gpu:1", "-t", "5", "--wrap",
                       BUSY.format(util=64, secs=4))
        assert c.wait_done(job) == "COMPLETED"
        r = c.run(["sacct", "-j", str(job), "-P", "-n", "-o", "JobID,TRESUsageInAve"])
        batch = [l for l in r.stdout.splitlines() if l.startswith(f"{job}.batch|")][0]
        tres = dict(kv.split("=") for kv in batch.split("|")[1].split(","))
        # Sampled each second: the first sample may come before the job set
        # its GPU busy, so the mean is at most 64 and near it.
        assert 40 <= int(tres["gres/gpuutil"]) <= 64, batch
        assert tres["gres/gpumem"].endswith("M") and int(tres["gres/gpumem"][:-1]) > 0
        seff = c.run(["seff", str(job)]).stdout
        assert f"GPU Utilization: {tres['gres/gpuutil']}%" in seff, seff
        assert "GPU Memory Utilized:" in seff
    finally:
        c.teardown()


def test_idle_gpu_policy_flags_reports_and_cancels_only_where_allowed(tmp_path):
    log = tmp_path / "notified"
    notify = tmp_path / "notify.sh"
    notify.write_text("#!/bin/sh\n"
                      f'echo "$1 $2 $3 $MUSTER_IDLE_GPU_RECIPIENT $SLURM_JOB_PARTITION" >> {log}\n')
    notify.chmod(notify.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.chmod(tmp_path, 0o755)
    c = make_cluster(conf("IdleGpuThreshold=10\nIdleGpuFlagTime=0:02\nIdleGpuReportTime=0:04\n"
                          f"IdleGpuCancelTime=0:06\nIdleGpuNotifyProgram={notify}\n",
                          parts="IdleGpuCancel=YES"))
    try:
        idle_train = c.sbatch("-p", "train", "--gres=gpu:1", "-t", "5", "--wrap", "sleep 300")
        idle_short = c.sbatch("-p", "short", "--gres=gpu:1", "-t", "5", "--wrap", "sleep 300")
        busy = c.sbatch("-p", "train", "--gres=gpu:1", "-t", "5", "--wrap",
                        BUSY.format(util=95, secs=300))
        for j in (idle_train, idle_short, busy):
            c.wait_state(j, "RUNNING")
        # The train partition allows cancelling: flagged, reported, then cancelled.
        assert c.wait_done(idle_train, timeout=30) == "CANCELLED"
        # short does not: it stays, reported.
        state = c.run(["squeue", "-h", "-j", str(idle_short), "-O", "State,GpuIdle:30"]).stdout.split()
        assert state[0] == "RUNNING" and state[1] == "reported", state
        assert c.run(["squeue", "-h", "-j", str(busy), "-O", "GpuIdle"]).stdout.split() == ["busy"]
        m = metrics(c)
        flagged = series(m, "muster_job_gpu_idle_seconds", hpc_job=str(idle_short))
        assert flagged and flagged[0][0]["stage"] == "reported" and flagged[0][1] >= 4
        assert not series(m, "muster_job_gpu_idle_seconds", hpc_job=str(busy))
        show = c.run(["scontrol", "show", "job", str(idle_short)]).stdout
        assert "GpuIdle=reported_" in show
        node = c.run(["squeue", "-h", "-j", str(idle_short), "-o", "%N"]).stdout.strip()
        show = c.run(["scontrol", "show", "node", node]).stdout
        assert f"IdleGpuJobs={idle_short}(reported_" in show or f",{idle_short}(reported_" in show, show

        lines = wait_for(lambda: log.exists() and log.read_text().splitlines(),
                         what="notifications")
        events = {tuple(l.split()[:2]) for l in lines}
        for ev in ("flagged", "reminder", "report", "cancelled"):
            assert (ev, str(idle_train)) in events, lines
        assert ("cancelled", str(idle_short)) not in events
        assert not [l for l in lines if l.split()[1] == str(busy)]
        assert f"report {idle_train} operators operators train" in lines
        assert f"flagged {idle_train} root user train" in lines
        # sacct says why it ended.
        r = c.run(["sacct", "-j", str(idle_train), "-X", "-n", "-P", "-o", "State"])
        assert r.stdout.strip().startswith("CANCELLED")
    finally:
        c.teardown()


def node_fields(c, node):
    out = c.run(["scontrol", "show", "node", node]).stdout
    return out


def test_health_checks_drain_with_the_reason_and_resume_only_what_may_heal(tmp_path):
    flag = tmp_path / "broken"
    program = tmp_path / "check.sh"
    program.write_text(f'#!/bin/sh\nif [ -e {flag} ]; then echo "fan 3 stopped on $SLURMD_NODENAME"; '
                       "exit 1; fi\nexit 0\n")
    program.chmod(0o755)
    os.chmod(tmp_path, 0o755)
    # Four nodes, three with GPUs (so that one driver can be the odd one).
    c = make_cluster(conf(f"HealthCheckInterval=1\nHealthCheckProgram={program}\n"
                          "MusterHealthChecks=gpu_count,ecc,nvml,driver_version\n"
                          "MusterHealthAutoResume=nvml,program\nMusterHealthMaxDrainPercent=50\n")
                     .replace("gpu[01-02]", "gpu[01-03]"))
    spool = next((c.root / "spool").iterdir())  # the agent's spool
    control = spool / "gpus"
    try:
        # Every node fails the program at once: a shared cause. Of four
        # nodes, 50% lets two be drained; the others are not.
        flag.write_text("")
        def reasons():  # one row per node (sinfo -N repeats a node per partition)
            return sorted(set(c.run(["sinfo", "-h", "-R", "-N", "-o", "%n|%E|%u"]).stdout.splitlines()))
        wait_for(lambda: len(reasons()) >= 2, what="nodes drained by the program")
        time.sleep(2.5)  # further runs drain no other node
        rows = reasons()
        assert len(rows) == 2, rows
        for row in rows:
            node, reason, actor = row.split("|")
            assert reason == f"health: program: {program} failed (exit status 1): fan 3 stopped on {node}", row
            assert actor == "health"
        m = metrics(c)
        assert series(m, "muster_health_drains_withheld_total", check="program")[0][1] > 0
        assert len(series(m, "muster_node_health_failing", check="program")) == 4
        assert series(m, "muster_nodes_health_drained", check="program")[0][1] == 2
        # Fixed: program may heal by itself, so the node comes back.
        flag.unlink()
        wait_for(lambda: not c.run(["sinfo", "-h", "-R"]).stdout.strip(), what="auto-resume")

        # An uncorrectable ECC error on gpu01's GPU 3 drains it, named.
        (control / "gpu01" / "3").mkdir(parents=True, exist_ok=True)
        (control / "gpu01" / "3" / "ecc_uncorrected").write_text("2\n")
        wait_for(lambda: "health: ecc: GPU 3" in node_fields(c, "gpu01"), what="ecc drain")
        show = node_fields(c, "gpu01")
        assert "DRAIN" in show and "[health@" in show and "HealthCheck=FAILING DrainedBy=ecc" in show
        # Health drained it, not an operator: no maintenance for the alerts.
        assert [l["by"] for l, _ in series(metrics(c), "muster_node_state", node="gpu01")] == ["health"]
        # Cleared, it passes again but stays drained: ECC never resumes itself.
        (control / "gpu01" / "3" / "ecc_uncorrected").unlink()
        wait_for(lambda: "HealthCheck=OK DrainedBy=ecc" in node_fields(c, "gpu01"),
                 what="ecc passing")
        time.sleep(1.5)
        assert "DRAIN" in node_fields(c, "gpu01")
        # An operator resumes it.
        c.run(["scontrol", "update", "NodeName=gpu01", "State=RESUME"])
        assert "DrainedBy" not in node_fields(c, "gpu01")
        assert [l.get("by") for l, _ in series(metrics(c), "muster_node_state", node="gpu01")] == [None]

        # NVML failing on gpu02 drains it; answering again resumes it.
        (control / "gpu02").mkdir(parents=True, exist_ok=True)
        (control / "gpu02" / "nvml_error").write_text("NVML: GPU is lost\n")
        wait_for(lambda: "health: nvml: NVML: GPU is lost" in node_fields(c, "gpu02"),
                 what="nvml drain")
        (control / "gpu02" / "nvml_error").unlink()
        wait_for(lambda: "DRAIN" not in node_fields(c, "gpu02"), what="nvml resume")

        # A GPU missing, and a driver unlike the others'.
        (control / "gpu02" / "count").write_text("7\n")
        wait_for(lambda: "health: gpu_count: 7 GPUs found, 8 configured" in node_fields(c, "gpu02"),
                 what="gpu_count drain")
        (control / "gpu01").mkdir(parents=True, exist_ok=True)
        (control / "gpu01" / "driver_version").write_text("550.54.15\n")
        wait_for(lambda: "health: driver_version: driver 550.54.15 where 2 of 3 nodes run emulated"
                 in node_fields(c, "gpu01"), what="driver drain")
    finally:
        c.teardown()


def test_configured_versus_detected_hardware_is_reported_and_the_node_used_as_configured():
    # The node named as this machine is compared with what hwloc finds;
    # emulated nodes are not.
    text = DEFAULT_CONF.replace(
        "NodeName=cpu01 CPUs=16 Sockets=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=32000",
        "NodeName={host} CPUs=512 Sockets=8 CoresPerSocket=64 ThreadsPerCore=1 RealMemory=99999999"
    ).replace("Nodes=gpu[01-02],cpu01", "Nodes=gpu[01-02],{host}")
    c = make_cluster(text)
    try:
        host = socket.gethostname().split(".")[0]
        show = c.run(["scontrol", "show", "node", host]).stdout
        detected = [l.strip() for l in show.splitlines() if l.strip().startswith("DetectedHardware=")]
        assert detected and f"CPUs={os.cpu_count()} " in detected[0], show
        assert "HardwareMismatch=CPUs: configured 512, detected " in show
        assert "HardwareMismatch=RealMemory: configured 99999999 MB, the OS has " in show
        assert "State=IDLE" in show  # reported, not drained
        assert "DetectedHardware" not in c.run(["scontrol", "show", "node", "gpu01"]).stdout
        # Used as configured: a job may ask for the configured CPUs.
        job = c.sbatch("-w", host, "-c", "100", "-t", "1", "--wrap", "true")
        assert c.wait_done(job) == "COMPLETED"
    finally:
        c.teardown()


def test_xid_throttling_nvlink_and_watched_filesystems_move_their_series(tmp_path):
    """The inputs of the starter alerts (docs/operations.md, "Alerts"): the
    emulated GPUs' control files move the Xid, throttle and NVLink series,
    and filling a watched filesystem moves its usage, on musterd's /metrics
    and the agent's own."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small filesystem to fill")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "muster-e2e-scratch", str(scratch)],
                   check=True)
    port = free_port()
    c = None
    try:
        c = make_cluster(conf(f"MusterAgentMetricsAddress=127.0.0.1:{port}\n"
                              f"MusterWatchedFilesystems=/,{scratch}/,/muster-e2e-not-mounted\n"))
        gpu = dict(node="gpu01", gpu="3")
        mine = dict(node="gpu01", mountpoint=str(scratch))

        def sampled():
            m = metrics(c)
            return m if series(m, "muster_node_filesystem_avail_bytes", **mine) else None
        m = wait_for(sampled, what="the first samples")
        # Before: no Xid, idle (NVML's 0x1), no NVLink error; scratch empty.
        [(labels, xids)] = series(m, "muster_gpu_xid_events", **gpu)
        assert labels["last_xid"] == "0" and xids == 0
        assert series(m, "muster_gpu_throttle_reasons", **gpu)[0][1] == 0x1
        assert series(m, "muster_gpu_nvlink_errors", **gpu)[0][1] == 0
        [(labels, size)] = series(m, "muster_node_filesystem_size_bytes", **mine)
        assert labels["fstype"] == "tmpfs" and labels["device"] == "muster-e2e-scratch"
        assert size == 16 << 20
        assert series(m, "muster_node_filesystem_avail_bytes", **mine)[0][1] == 16 << 20
        # Every node of the agent sees its host's mounts.
        assert {l["node"] for l, _ in series(m, "muster_node_filesystem_size_bytes",
                                             mountpoint=str(scratch))} == {"gpu01", "gpu02", "cpu01"}
        root = os.statvfs("/")
        assert series(m, "muster_node_filesystem_size_bytes", node="cpu01", mountpoint="/")[0][1] == \
            root.f_blocks * root.f_frsize
        assert series(m, "muster_node_filesystem_device_error", node="gpu01", mountpoint="/")[0][1] == 0
        # Not a mount point: an error and no sizes.
        assert series(m, "muster_node_filesystem_device_error", node="gpu01",
                      mountpoint="/muster-e2e-not-mounted")[0][1] == 1
        assert not series(m, "muster_node_filesystem_size_bytes", mountpoint="/muster-e2e-not-mounted")

        control = next((c.root / "spool").iterdir()) / "gpus" / "gpu01" / "3"
        control.mkdir(parents=True, exist_ok=True)
        (control / "xid").write_text("79\n")
        (control / "throttle_reasons").write_text("0x48\n")  # hardware slowdown + thermal
        (control / "nvlink_errors").write_text("1234\n")
        (scratch / "checkpoint").write_bytes(b"\1" * (15 << 20))

        def moved(families):
            xid = series(families, "muster_gpu_xid_events", **gpu)
            avail = series(families, "muster_node_filesystem_avail_bytes", **mine)
            return (xid and xid[0][0]["last_xid"] == "79" and xid[0][1] == 1
                    and series(families, "muster_gpu_throttle_reasons", **gpu)[0][1] == 0x48
                    and series(families, "muster_gpu_nvlink_errors", **gpu)[0][1] == 1234
                    and avail and avail[0][1] <= 1 << 20)
        m = wait_for(lambda: (lambda f: f if moved(f) else None)(metrics(c)),
                     what="the series after the GPU's faults and the filled scratch")
        # As MusterFilesystemFull reads it: df's use, at least 90%.
        [size, free, avail] = [series(m, f"muster_node_filesystem_{k}", **mine)[0][1]
                               for k in ("size_bytes", "free_bytes", "avail_bytes")]
        assert (size - free) / (size - free + avail) >= 0.9
        # The other GPUs are as they were.
        assert series(m, "muster_gpu_xid_events", node="gpu01", gpu="2")[0][1] == 0
        assert series(m, "muster_gpu_nvlink_errors", node="gpu02", gpu="3")[0][1] == 0

        # The agent's own endpoint serves the same, as clean for promtool.
        def own():
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                text = r.read().decode()
            f = parse(text)
            return text if moved(f) else None
        text = wait_for(own, what="the agent's own series")
        r = subprocess.run([shutil.which("promtool"), "check", "metrics"], input=text,
                           capture_output=True, text=True)
        assert r.returncode == 0 and not r.stdout and not r.stderr, r.stdout + r.stderr
    finally:
        if c is not None:
            c.teardown()
        subprocess.run(["umount", "-l", str(scratch)], check=False)
