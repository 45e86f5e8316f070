"""Node choice through the real daemons: of the nodes that fit, the
busiest go first, as the oracle's select/cons_tres does, so idle GPUs are
not scattered over nodes (the handbook's fragmentation scenario);
SelectTypeParameters=CR_Pack_Nodes packs a job's tasks; a partition with
LLN=YES takes the least loaded; GpuReserve keeps CPUs of GPU nodes for
their free GPUs; -C's counts and matching OR."""
import pytest

from conftest import DEFAULT_CONF, make_cluster

PACK_CONF = DEFAULT_CONF.replace(
    "PartitionName=short",
    "PartitionName=spread Nodes=gpu[01-02] LLN=YES MaxTime=1:00:00 State=UP\n"
    "PartitionName=short", 1) + \
    "SelectTypeParameters=CR_Core_Memory,CR_Pack_Nodes\nGpuReserve=CPUs=1,Mem=1G\n"


@pytest.fixture(scope="module")
def pack_cluster():
    c = make_cluster(PACK_CONF)
    try:
        yield c
    finally:
        c.teardown()


def test_busiest_node_first_keeps_whole_nodes_free(cluster):
    c = cluster
    busy = c.sbatch("-p", "train", "-w", "gpu02", "--gres=gpu:6", "--wrap", "sleep 300")
    jobs = [busy]
    try:
        c.wait_state(busy, "RUNNING")
        # The oracle puts this job on the node with 2 GPUs free, not on the
        # idle one, so the 8-GPU job behind it still finds a whole node.
        small = c.sbatch("-p", "train", "--gres=gpu:2", "--wrap", "sleep 300")
        jobs.append(small)
        c.wait_state(small, "RUNNING")
        assert c.nodes_of(small) == "gpu02"
        big = c.sbatch("-p", "train", "--gres=gpu:8", "--wrap", "sleep 300")
        jobs.append(big)
        c.wait_state(big, "RUNNING")
        assert c.nodes_of(big) == "gpu01"
        # CPU-only work goes to the busiest node that fits too: gpu02 (two
        # jobs of one CPU each) before gpu01 (one).
        cpu = c.sbatch("-p", "train", "-c", "4", "--wrap", "sleep 300")
        jobs.append(cpu)
        c.wait_state(cpu, "RUNNING")
        assert c.nodes_of(cpu) == "gpu02"
    finally:
        c.cancel(jobs)


def tasks_per_node(c, job, out):
    c.wait_done(job)
    return out.read_text().strip()


def test_pack_nodes_packs_the_tasks(cluster, pack_cluster):
    # -N 2 -n 4 on whole nodes: Slurm's default spreads the tasks 2 + 2,
    # CR_Pack_Nodes fills the first node (3 + 1).
    for c, want in ((cluster, "2(x2)"), (pack_cluster, "3,1")):
        out = c.work / "tasks.out"
        job = c.sbatch("-p", "train", "-N", "2", "-n", "4", "--exclusive", "-o", str(out),
                       "--wrap", "echo $SLURM_TASKS_PER_NODE")
        assert tasks_per_node(c, job, out) == want


def test_lln_partition_takes_the_least_loaded_node(pack_cluster):
    c = pack_cluster
    shown = c.run(["scontrol", "show", "partition", "spread"]).stdout
    assert "LLN=YES" in shown, shown
    first = c.sbatch("-p", "spread", "-w", "gpu01", "-c", "8", "--wrap", "sleep 300")
    jobs = [first]
    try:
        c.wait_state(first, "RUNNING")
        for expect in ("gpu02", "gpu02", "gpu02"):
            j = c.sbatch("-p", "spread", "-c", "3", "--wrap", "sleep 300")
            jobs.append(j)
            c.wait_state(j, "RUNNING")
            assert c.nodes_of(j) == expect
        # gpu02 now has 9 CPUs taken, gpu01 8: the next goes back to gpu01.
        j = c.sbatch("-p", "spread", "-c", "1", "--wrap", "sleep 300")
        jobs.append(j)
        c.wait_state(j, "RUNNING")
        assert c.nodes_of(j) == "gpu01"
    finally:
        c.cancel(jobs)


def test_gpu_reserve_keeps_cpus_for_free_gpus(pack_cluster):
    c = pack_cluster
    # 32 CPUs, 8 free GPUs keeping one each: CPU-only work may take 24.
    wide = c.sbatch("-p", "train", "-c", "25", "--wrap", "sleep 300")
    jobs = [wide]
    try:
        c.wait_state(wide, "PENDING")
        assert c.job(wide)["reason"] == "Resources"
        ok = c.sbatch("-p", "train", "-c", "24", "--wrap", "sleep 300")
        jobs.append(ok)
        c.wait_state(ok, "RUNNING")
        # Once gpu02's GPUs are all taken, their CPUs are free to take.
        gpus = c.sbatch("-p", "train", "-w", "gpu02", "--gres=gpu:8", "--wrap", "sleep 300")
        jobs.append(gpus)
        c.wait_state(gpus, "RUNNING")
        c.wait_state(wide, "RUNNING")
        assert c.nodes_of(wide) == "gpu02"
    finally:
        c.cancel(jobs)


def test_constraint_counts_and_matching_or(cluster):
    # One of the two nodes must have h100; a job that asks for no GPU
    # otherwise keeps to the CPU node.
    counted = cluster.sbatch("-p", "short", "-N", "2", "-C", "h100*1", "--wrap", "sleep 300")
    jobs = [counted]
    try:
        cluster.wait_state(counted, "RUNNING")
        assert cluster.nodes_of(counted) == "cpu01,gpu01"
        assert cluster.scontrol_job(counted)["Features"] == "h100*1"
        # Both nodes under one of the features: only the GPU nodes are two.
        matching = cluster.sbatch("-p", "short", "-N", "2", "-C", "[cpu|gpu]", "--wrap",
                                  "sleep 300")
        jobs.append(matching)
        cluster.wait_state(matching, "RUNNING")
        assert cluster.nodes_of(matching) == "gpu[01-02]"
        # Multiple counts give the job their sum of nodes.
        multi = cluster.sbatch("-p", "short", "-C", "[cpu*1&h100*2]", "--wrap", "sleep 300")
        jobs.append(multi)
        cluster.wait_state(multi, "RUNNING")
        assert cluster.nodes_of(multi) == "cpu01,gpu[01-02]"
    finally:
        cluster.cancel(jobs)
    # Bad syntax is refused, naming the option and what was wrong.
    r = cluster.run(["sbatch", "-C", "[cpu|gpu]&[h100|gpu]", "--wrap", "true"], check=False)
    assert r.returncode != 0
    assert "--constraint '[cpu|gpu]&[h100|gpu]': only one set of brackets" in r.stderr, r.stderr
    # A count more nodes than the partition has with the feature.
    r = cluster.run(["sbatch", "-p", "short", "-C", "cpu*2", "--wrap", "true"], check=False)
    assert r.returncode != 0
    assert "Requested node configuration is not available" in r.stderr, r.stderr
