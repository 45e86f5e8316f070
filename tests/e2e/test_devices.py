"""Device confinement (cgroup.conf ConstrainDevices=yes): a job opens the
device files of its own GPUs and is refused (EPERM) every other GPU device
of its host, in its batch script and in its srun steps; a job without GPUs
is refused them all; the shared control files stay open; emulated MIG
instances go by their UUIDs and keep only their own capability files.

The emulated GPUs' device files are character devices the agent makes
under <spool>/dev/<node>/ with a major number no driver holds: a job that
may open one reaches the (absent) driver and gets ENXIO, a job that may
not gets EPERM from the device cgroup before that."""

import os
import socket
import textwrap
from pathlib import Path

import pytest

from conftest import DEFAULT_CONF, make_cluster

PROBE = textwrap.dedent("""\
    #!/usr/bin/python3
    # probe DIR: each device file under DIR (a node's, or all nodes') and
    # what open() says of it: "open", or the errno's name.
    import errno, os, sys
    tag, root = sys.argv[1], sys.argv[2]
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            try:
                os.close(os.open(p, os.O_RDONLY))
                r = "open"
            except OSError as e:
                r = errno.errorcode[e.errno]
            print(tag, os.path.relpath(p, root), r)
    """)

CGROUP_CONF = "CgroupPlugin=autodetect\nConstrainDevices=yes\nConstrainRAMSpace=yes\n"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="device files and cgroups need root")


def devices_root(c):
    return c.root / "spool" / socket.gethostname().split(".")[0] / "dev"


def probe_job(c, *sbatch_args, step=True):
    """Runs a job that probes every node's device files from its batch
    script (and from an srun step); returns {(tag, "node/file"): result}
    and the job's environment lines."""
    probe = c.work / "probe.py"
    probe.write_text(PROBE)
    probe.chmod(0o755)
    root = devices_root(c)
    script = ("#!/bin/bash\n"
              "echo ENV CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES SLURM_JOB_GPUS=$SLURM_JOB_GPUS\n"
              f"{probe} batch {root}\n")
    if step:
        script += (f"srun -n1 bash -c 'echo ENV STEP_CUDA=$CUDA_VISIBLE_DEVICES; {probe} step {root}'\n")
    job = c.sbatch("-o", "probe-%j.out", *sbatch_args, input=script)
    assert c.wait_done(job) == "COMPLETED", (c.work / f"probe-{job}.out").read_text()
    out = (c.work / f"probe-{job}.out").read_text()
    seen = {}
    env = {}
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "ENV":
            for kv in parts[1:]:
                k, _, v = kv.partition("=")
                env[k] = v
        elif parts[0] in ("batch", "step"):
            seen[(parts[0], parts[1])] = parts[2]
    return seen, env, out


@pytest.fixture(scope="module")
def confined():
    conf = DEFAULT_CONF.replace(
        "NodeName=cpu01",
        "NodeName=gpu03 CPUs=32 RealMemory=64000 Gres=gpu:1g.10gb:7 Feature=mig State=UNKNOWN\n"
        "NodeName=cpu01").replace("PartitionName=short Nodes=gpu[01-02],cpu01",
                                  "PartitionName=short Nodes=gpu[01-03],cpu01")
    c = make_cluster(conf, side_files={"cgroup.conf": CGROUP_CONF})
    try:
        yield c
    finally:
        c.teardown()


def test_a_job_opens_its_own_gpu_and_is_refused_every_other(confined):
    c = confined
    # The agent made every emulated node's device files.
    root = devices_root(c)
    assert sorted(p.name for p in (root / "gpu01").iterdir() if p.name.startswith("nvidia")) == \
        ["nvidia-uvm", "nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidia4", "nvidia5", "nvidia6",
         "nvidia7", "nvidiactl"]
    seen, env, out = probe_job(c, "-w", "gpu02", "--gres=gpu:2")
    mine = env["SLURM_JOB_GPUS"].split(",")
    assert len(mine) == 2, out
    # CUDA sees only the job's GPUs and numbers them from 0.
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1", out
    assert env["STEP_CUDA"] == "0,1", out
    for tag in ("batch", "step"):
        for node in ("gpu01", "gpu02"):
            for i in range(8):
                want = "ENXIO" if node == "gpu02" and str(i) in mine else "EPERM"
                assert seen[(tag, f"{node}/nvidia{i}")] == want, (tag, node, i, out)
            # The shared control files are everyone's.
            assert seen[(tag, f"{node}/nvidiactl")] == "ENXIO", out
            assert seen[(tag, f"{node}/nvidia-uvm")] == "ENXIO", out
    # Other devices are untouched.
    r = c.run(["srun", "-w", "gpu01", "--gres=gpu:1", "bash", "-c", "echo x > /dev/null && echo fine"])
    assert r.stdout.strip() == "fine"


def test_a_job_without_gpus_sees_none(confined):
    c = confined
    for args in (["-w", "gpu01", "--gres=gpu:0"], ["-w", "cpu01"]):
        seen, env, out = probe_job(c, *args, step=False)
        assert env.get("CUDA_VISIBLE_DEVICES", "") == "", out
        shared = {k: v for k, v in seen.items() if Path(k[1]).name in ("nvidiactl", "nvidia-uvm")}
        gpus = {k: v for k, v in seen.items() if k not in shared}
        # 8 + 8 GPUs, the MIG node's GPU and its 7 instances' 14 capabilities.
        assert len(gpus) == 31, out
        assert set(gpus.values()) == {"EPERM"}, out
        assert set(shared.values()) == {"ENXIO"}, out


def test_mig_instances_go_by_uuid_and_keep_their_own_capabilities(confined):
    c = confined
    seen, env, out = probe_job(c, "-w", "gpu03", "--gres=gpu:1g.10gb:2")
    uuids = env["CUDA_VISIBLE_DEVICES"].split(",")
    assert len(uuids) == 2 and all(u.startswith("MIG-") for u in uuids), out
    assert len(set(uuids)) == 2
    assert env["STEP_CUDA"] == env["CUDA_VISIBLE_DEVICES"], out
    mine = [int(i) for i in env["SLURM_JOB_GPUS"].split(",")]
    for tag in ("batch", "step"):
        # The seven instances share the one emulated GPU.
        assert seen[(tag, "gpu03/nvidia0")] == "ENXIO", out
        for k in range(7):
            want = "ENXIO" if k in mine else "EPERM"
            for cap in (2 * k + 1, 2 * k + 2):
                assert seen[(tag, f"gpu03/nvidia-caps/nvidia-cap{cap}")] == want, (tag, k, out)
    # A second job gets two other instances, with other UUIDs, at the same time.
    a = c.sbatch("-w", "gpu03", "--gres=gpu:1g.10gb:2", "-o", "mig-%j.out", "--wrap",
                 "echo $CUDA_VISIBLE_DEVICES; sleep 2")
    b = c.sbatch("-w", "gpu03", "--gres=gpu:1g.10gb:2", "-o", "mig-%j.out", "--wrap",
                 "echo $CUDA_VISIBLE_DEVICES; sleep 2")
    assert c.wait_done(a) == "COMPLETED" and c.wait_done(b) == "COMPLETED"
    got_a = (c.work / f"mig-{a}.out").read_text().strip().split(",")
    got_b = (c.work / f"mig-{b}.out").read_text().strip().split(",")
    assert len(set(got_a + got_b)) == 4, (got_a, got_b)


def test_steps_of_an_allocation_on_one_host_are_confined_too(confined):
    # salloc's shell and srun's own allocation run on the login side, in
    # no job cgroup: their steps are launched by the node's agent into a
    # cgroup of the step's own, as on a cluster of hosts.
    c = confined
    probe = c.work / "probe.py"
    probe.write_text(PROBE)
    probe.chmod(0o755)
    root = devices_root(c)
    r = c.run(["srun", "-w", "gpu01", "--gres=gpu:1", "bash", "-c",
               f"echo ENV $SLURM_STEP_GPUS $CUDA_VISIBLE_DEVICES; {probe} step {root}/gpu01"],
              timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    env = lines[0].split()
    assert env[2] == "0", lines
    mine = env[1]
    got = {l.split()[1]: l.split()[2] for l in lines[1:]}
    for i in range(8):
        assert got[f"nvidia{i}"] == ("ENXIO" if str(i) == mine else "EPERM"), (i, lines)
    assert got["nvidiactl"] == "ENXIO"
    r = c.run(["salloc", "-w", "gpu02", "--gres=gpu:2", "srun", "bash", "-c",
               f"echo ENV $SLURM_STEP_GPUS; {probe} step {root}/gpu02"], timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    mine = lines[0].split()[1].split(",")
    got = {l.split()[1]: l.split()[2] for l in lines[1:]}
    assert sorted(k for k, v in got.items() if v == "ENXIO" and k[6:].isdigit()) == \
        sorted(f"nvidia{i}" for i in mine), lines
