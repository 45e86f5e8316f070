"""A cluster of separate hosts on one machine (scripts/hosts.sh): a
controller host, a login host and three compute hosts, each its own
network, UTS and mount namespace, joined by a bridge in a namespace of its
own. musterd serves the agents of the compute hosts over TCP under
AuthType=auth/slurm; every line between them is signed with the shared key.
Commands run on the controller host; job output lands in the directory all
hosts share."""

import atexit
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN as BUILT_BIN, end_input, ensure_test_users, read_pty

ROOT = Path(__file__).resolve().parents[2]
HOSTS_SH = ROOT / "scripts" / "hosts.sh"


def programs_the_hosts_see():
    """The programs the hosts run: the build's own, or, when the build is
    under /tmp (which each host replaces with its own, scripts/hosts.sh),
    a copy of Muster's programs and links under /var/tmp, removed when the
    tests end."""
    if not str(BUILT_BIN.resolve()).startswith("/tmp/"):
        return BUILT_BIN
    copy = Path(f"/var/tmp/muster-e2e-bin-{os.getpid()}")
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    for f in BUILT_BIN.iterdir():
        if f.is_symlink() or f.name in ("muster", "musterd", "muster-agent", "muster-step"):
            shutil.copy2(f, copy / f.name, follow_symlinks=False)
    atexit.register(shutil.rmtree, copy, True)
    return copy


BIN = programs_the_hosts_see()

def can_make_hosts():
    """Root, and a kernel that lets us make network, UTS and mount
    namespaces (a container without CAP_NET_ADMIN or CAP_SYS_ADMIN does
    not)."""
    if os.geteuid() != 0:
        return False
    return subprocess.run(["unshare", "--net", "--uts", "--mount", "true"],
                          capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not can_make_hosts(),
                                reason="separate hosts need root and namespaces")


class Hosts:
    def __init__(self, name="hosts", auth="slurm", net=231):
        self.dir = Path(f"/var/tmp/muster-e2e-{name}-{os.getpid()}")
        self.env = dict(os.environ)
        self.env.update(MUSTER_HOSTS_DIR=str(self.dir), MUSTER_BIN=str(BIN),
                        MUSTER_HOSTS_AUTH=auth,
                        MUSTER_HOSTS_NET=f"10.{net}.{100 + os.getpid() % 100}")
        for k in list(self.env):
            if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_")):
                del self.env[k]
        self.shared = self.dir / "shared"

    def script(self, *args, check=True, timeout=120, input=""):
        # Never the test runner's stdin: srun forwards its stdin to the tasks.
        r = subprocess.run([str(HOSTS_SH), *args], env=self.env, capture_output=True, text=True,
                           timeout=timeout, input=input)
        if check:
            assert r.returncode == 0, f"hosts.sh {' '.join(args)}: {r.stdout}{r.stderr}"
        return r

    def on(self, host, *argv, check=True, input=""):
        return self.script("exec", host, *argv, check=check, input=input)

    def sbatch(self, *args, host="ctl"):
        r = self.on(host, "sbatch", "--parsable", "-D", str(self.shared), *args)
        return int(r.stdout.strip())

    def state(self, job):
        r = self.on("ctl", "squeue", "-h", "-j", str(job), "-o", "%T", check=False)
        if r.stdout.strip():
            return r.stdout.strip()
        r = self.on("ctl", "sacct", "-X", "-n", "-P", "-j", str(job), "-o", "State")
        return r.stdout.strip().split(" ")[0]  # "CANCELLED by 0"

    def wait_state(self, job, states, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            s = self.state(job)
            if s in states:
                return s
            time.sleep(0.1)
        raise AssertionError(f"job {job} is {self.state(job)}, not one of {states}")

    def log(self, host):
        return (self.dir / host / ("musterd.log" if host == "ctl" else "agent.log")).read_text()

    def pids(self, host, name):
        """Pids of `name` processes in `host`'s network namespace."""
        out = self.script("pids", host).stdout.split()
        return [int(p) for p in out
                if Path(f"/proc/{p}/comm").exists() and Path(f"/proc/{p}/comm").read_text().strip() == name]

    def stop_agent(self, host):
        """SIGTERM to `host`'s muster-agent, and waits until it is gone."""
        [agent] = self.pids(host, "muster-agent")
        os.kill(agent, signal.SIGTERM)
        deadline = time.time() + 10
        while self.pids(host, "muster-agent") and time.time() < deadline:
            time.sleep(0.1)

    def restart_musterd(self, between=None):
        """Kills musterd on ctl, runs `between()` while it is away, starts
        it again and waits until every node is back."""
        [ctld] = self.pids("ctl", "musterd")
        os.kill(ctld, signal.SIGKILL)
        if between:
            between()
        self.start_daemon("ctl", "musterd", "--conf", str(self.dir / "conf" / "muster.conf"))
        deadline = time.time() + 30
        while time.time() < deadline:
            r = self.on("ctl", "sinfo", "-h", "-N", "-o", "%t", check=False)
            if r.returncode == 0 and r.stdout.split() == ["idle"] * 4:
                return
            time.sleep(0.2)
        raise AssertionError("the nodes did not come back after musterd's restart")

    def start_daemon(self, host, *argv):
        log = open(self.dir / host / ("musterd.log" if argv[0] == "musterd" else "agent.log"), "a")
        subprocess.Popen([str(HOSTS_SH), "exec", host, "setsid", str(BIN / argv[0]), *argv[1:]],
                         env=self.env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)


def started(h, compute_hosts, says):
    """Brings up `h` for a module's tests (saying `says`), and takes it
    down, leaving nothing behind, after them."""
    h.script("down", check=False)
    assert says in h.script("up", str(compute_hosts)).stdout
    try:
        yield h
    finally:
        h.script("down")
        assert not h.dir.exists()


@pytest.fixture(scope="module")
def hosts():
    yield from started(Hosts(), 3, "compute cn1..cn3 (4 nodes)")


def test_commands_are_musters_own(hosts):
    r = hosts.on("ctl", "bash", "-c", "command -v sbatch; hostname")
    assert r.stdout.split() == [str(BIN / "sbatch"), "ctl"]


def test_every_node_runs_jobs_on_its_own_host(hosts):
    # node01 and node02 are on cn1, node03 on cn2, node04 on cn3; each job
    # leaves a file in its host's own /tmp and reports what it saw.
    want = {"node01": "cn1", "node02": "cn1", "node03": "cn2", "node04": "cn3"}
    jobs = {}
    for node in want:
        jobs[node] = hosts.sbatch("-w", node, "-o", f"{node}.out", "--wrap",
                                  f'touch /tmp/seen-{node}; echo "$(hostname) $SLURMD_NODENAME '
                                  f'$SLURM_JOB_NODELIST"; ls /tmp | grep seen- | sort | tr "\\n" " "')
    for node, job in jobs.items():
        assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    for node, host in want.items():
        lines = (hosts.shared / f"{node}.out").read_text().splitlines()
        assert lines[0] == f"{host} {node} {node}"
        # /tmp is the host's own: cn1's two nodes share one, the others see
        # only their own file.
        seen = set(lines[1].split())
        assert f"seen-{node}" in seen
        assert all(want[s.removeprefix("seen-")] == host for s in seen)
    assert ("serving agents and commands of other hosts on TCP port 6817 (auth/slurm)"
            in hosts.log("ctl"))
    for host in ("cn1", "cn2", "cn3"):
        assert f"agent {host} registered" in hosts.log("ctl")


def test_agent_with_another_key_is_refused_on_both_sides(hosts):
    bad = hosts.dir / "badconf"
    bad.mkdir(exist_ok=True)
    (bad / "muster.conf").write_text((hosts.dir / "conf" / "muster.conf").read_text())
    key = bad / "slurm.key"
    key.write_bytes(os.urandom(32))
    os.chmod(key, 0o600)
    r = subprocess.run([str(HOSTS_SH), "exec", "login", "timeout", "-s", "INT", "2",
                        str(BIN / "muster-agent"), "--conf", str(bad / "muster.conf"),
                        "--nodes", "node04"], env=hosts.env, capture_output=True, text=True)
    assert ("refused this connection: bad signature (a different key, or an altered message)"
            in r.stderr), r.stderr
    log = hosts.log("ctl")
    assert f"agent at {hosts.env['MUSTER_HOSTS_NET']}.2:" in log
    assert "refused a message: bad signature" in log
    # node04 is still cn3's: the refused agent took nothing over.
    job = hosts.sbatch("-w", "node04", "-o", "after-bad.out", "--wrap", "hostname")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    assert (hosts.shared / "after-bad.out").read_text().strip() == "cn3"

    # A key others can read is refused before anything is sent.
    os.chmod(key, 0o644)
    r = subprocess.run([str(HOSTS_SH), "exec", "login", str(BIN / "muster-agent"), "--conf",
                        str(bad / "muster.conf")], env=hosts.env, capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 1
    assert r.stderr.strip() == (f"muster-agent: error: refusing the auth/slurm key {key}: mode 0644 "
                                "lets others read or write it (use 0400 or 0600)")


def test_unsigned_lines_are_refused(hosts):
    # A peer that speaks the agent protocol without credentials (as a local
    # agent would) gets an ERROR line naming the problem, then the close.
    net = hosts.env["MUSTER_HOSTS_NET"]
    r = hosts.on("login", "python3", "-c",
                 "import socket; s = socket.create_connection(('ctl', 6817), timeout=5); "
                 "s.sendall(b'{\"type\":\"register\",\"host\":\"x\",\"nodes\":[\"node01\"]}\\n'); "
                 "print(s.makefile().readline().strip())")
    assert r.stdout.strip() == "ERROR an unsigned message (is AuthType the same on both hosts?)"
    assert f"agent at {net}.2:" in hosts.log("ctl")
    r = hosts.on("ctl", "sinfo", "-h", "-N", "-n", "node01", "-o", "%t")
    assert r.stdout.strip() in ("idle", "mix", "alloc")


def test_agent_restart_on_its_host_leaves_the_job_running(hosts):
    job = hosts.sbatch("-w", "node03", "-o", "restart.out", "--wrap",
                       "sleep 3; echo done on $(hostname)")
    assert hosts.wait_state(job, {"RUNNING"}) == "RUNNING"
    [agent] = hosts.pids("cn2", "muster-agent")
    os.kill(agent, signal.SIGKILL)
    hosts.start_daemon("cn2", "muster-agent", "--conf", str(hosts.dir / "conf" / "muster.conf"))
    assert hosts.wait_state(job, {"COMPLETED", "FAILED", "NODE_FAIL"}, timeout=30) == "COMPLETED"
    assert (hosts.shared / "restart.out").read_text().strip() == "done on cn2"

    # And musterd's restart on the controller host: the agents reconnect
    # over TCP and the cluster goes on.
    hosts.restart_musterd()
    job = hosts.sbatch("-w", "node04", "-o", "after-restart.out", "--wrap", "hostname")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    assert (hosts.shared / "after-restart.out").read_text().strip() == "cn3"


def test_commands_on_the_login_host_reach_musterd_over_tcp(hosts):
    # The controller's state (its unix sockets) is not on the login host:
    # the commands go over TCP, signed by the login host's own agent.
    assert hosts.on("login", "ls", str(hosts.dir / "ctl")).stdout == ""
    job = hosts.sbatch("-o", "from-login.out", "--wrap", "sleep 1; hostname", host="login")
    r = hosts.on("login", "squeue", "-h", "-j", str(job), "-o", "%i %u")
    assert r.stdout.split() == [str(job), "root"]
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    assert (hosts.shared / "from-login.out").read_text().strip() in ("cn1", "cn2", "cn3")
    r = hosts.on("login", "sinfo", "-h", "-o", "%D %t")
    assert r.stdout.split() == ["4", "idle"]
    r = hosts.on("login", "sacct", "-X", "-n", "-P", "-j", str(job), "-o", "JobID,State")
    assert r.stdout.strip() == f"{job}|COMPLETED"
    log = hosts.log("login")
    assert "serving credentials only" in log


def test_user_identity_over_tcp_comes_from_the_credential(hosts):
    users = ensure_test_users()
    user = users[0]
    hosts.shared.chmod(0o1777)
    job = int(hosts.on("login", "su", user, "-c",
                       f"PATH={BIN}:$PATH MUSTER_CONF={hosts.dir}/conf/muster.conf "
                       f"sbatch --parsable -D {hosts.shared} -o /dev/null --wrap 'sleep 30'"
                       ).stdout.strip())
    r = hosts.on("login", "squeue", "-h", "-j", str(job), "-o", "%u")
    assert r.stdout.strip() == user
    # root's job is not the user's to cancel, from any host.
    mine = hosts.sbatch("-o", "/dev/null", "--wrap", "sleep 30", host="login")
    r = hosts.on("login", "su", user, "-c",
                 f"PATH={BIN}:$PATH MUSTER_CONF={hosts.dir}/conf/muster.conf scancel {mine}",
                 check=False)
    assert r.returncode != 0
    assert "Access/permission denied" in r.stderr or "permission" in r.stderr.lower(), r.stderr
    hosts.on("login", "scancel", str(job), str(mine))
    assert hosts.wait_state(mine, {"CANCELLED"}) == "CANCELLED"


def test_api_requests_without_a_good_credential_get_401(hosts):
    net = hosts.env["MUSTER_HOSTS_NET"]
    script = (
        "import socket\n"
        "def ask(auth):\n"
        "    s = socket.create_connection(('ctl', 6817), timeout=5)\n"
        "    s.sendall(b'GET /v1/jobs HTTP/1.1\\r\\nHost: x\\r\\n' + auth + b'Connection: close\\r\\n\\r\\n')\n"
        "    return s.makefile('rb').readline().decode().strip()\n"
        "print(ask(b''))\n"
        "print(ask(b'Authorization: Muster MUSTER1:0:0:1:00000000000000000000000000000000:' + b'0' * 64 + b'\\r\\n'))\n")
    r = hosts.on("login", "python3", "-c", script)
    assert r.stdout.split("\n")[:2] == ["HTTP/1.1 401 Unauthorized", "HTTP/1.1 401 Unauthorized"]
    log = hosts.log("ctl")
    assert f"API request from {net}.2:" in log
    assert "refused: no credential (Authorization: Muster ...)" in log
    assert "refused: bad signature" in log


# Stands in for musterd on its port (as a host that took its address
# would): answers every HTTP request 200 with a plausible body, its
# Muster-Credential header as argv[1] says, and closes anything else.
IMPOSTOR = r"""
import socket, sys, threading, time
header = {"none": "", "forged": "Muster-Credential: MUSTER1:0:0:%d:%s:%s\r\n"
          % (time.time(), "0" * 32, "0" * 64)}[sys.argv[1]]
def serve(c):
    c.settimeout(5)
    data = b""
    try:
        while b"\n" not in data:
            got = c.recv(65536)
            if not got:
                break
            data += got
        if data.startswith((b"GET ", b"POST ")):
            body = b"JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + header.encode()
                      + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 6817))
s.listen(64)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


def test_a_reply_without_musterds_credential_is_refused(hosts):
    # What a command on another host takes from the network is musterd's
    # only if musterd signed it, for this very request.
    said = {}
    script = hosts.dir / "impostor.py"
    script.write_text(IMPOSTOR)

    def ask_the_impostor():
        for mode in ("none", "forged"):
            impostor = subprocess.Popen([str(HOSTS_SH), "exec", "ctl", "python3", str(script),
                                         mode], env=hosts.env, stdout=subprocess.PIPE, text=True,
                                        stdin=subprocess.DEVNULL)
            try:
                assert impostor.stdout.readline().strip() == "ready"
                said[mode] = hosts.on("login", "squeue", check=False)
            finally:
                impostor.kill()
                impostor.wait()
                for pid in hosts.pids("ctl", "python3"):
                    os.kill(pid, signal.SIGKILL)

    hosts.restart_musterd(between=ask_the_impostor)
    for mode, why in (("none", "the controller's reply carries no credential"),
                      ("forged", "the controller's reply was refused: credential service: "
                                 "bad signature")):
        r = said[mode]
        assert r.returncode != 0 and "JOBID" not in r.stdout, (mode, r.stdout)
        assert "squeue: error: Protocol authentication error: " + why in r.stderr, (mode, r.stderr)
    assert "refused a reply of the controller: bad signature" in hosts.log("login")
    # musterd's own replies pass.
    assert hosts.on("login", "squeue", "-h", "-o", "%i").returncode == 0


def test_commands_without_a_credential_service_say_so(hosts):
    hosts.stop_agent("login")
    try:
        r = hosts.on("login", "squeue", check=False)
        assert r.returncode == 1
        assert "no credential service on this host" in r.stderr, r.stderr
        assert "is muster-agent running here?" in r.stderr
    finally:
        hosts.start_daemon("login", "muster-agent", "--conf", str(hosts.dir / "conf" / "muster.conf"))
        deadline = time.time() + 10
        while hosts.on("login", "squeue", check=False).returncode != 0 and time.time() < deadline:
            time.sleep(0.1)


def test_srun_runs_each_task_on_its_nodes_host(hosts):
    script = hosts.shared / "steps.sh"
    script.write_text(
        "#!/bin/bash\n"
        "#SBATCH -N 3 -n 4\n"
        "srun -l bash -c 'echo \"$SLURM_PROCID/$SLURM_NTASKS $(hostname) $SLURMD_NODENAME "
        "$SLURM_STEP_ID $SLURM_NODEID $SLURM_LOCALID\"; echo oops >&2'\n"
        "echo \"exit $?\"\n"
        "srun -n2 -N2 -o 'task-%t-%N.out' bash -c 'hostname; exit $((SLURM_PROCID + 3))'\n"
        "echo \"exit $?\"\n")
    job = hosts.sbatch("-o", "steps.out", "-e", "steps.err", str(script), host="login")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    out = (hosts.shared / "steps.out").read_text().splitlines()
    ranks = sorted(line for line in out if line[:2] in ("0:", "1:", "2:", "3:"))
    # Block layout over node01 (cn1), node02 (cn1), node03 (cn2).
    assert ranks == ["0: 0/4 cn1 node01 0 0 0", "1: 1/4 cn1 node01 0 0 1",
                     "2: 2/4 cn1 node02 0 1 0", "3: 3/4 cn2 node03 0 2 0"]
    assert [line for line in out if line.startswith("exit")] == ["exit 0", "exit 4"]
    err = (hosts.shared / "steps.err").read_text()
    assert sorted(line for line in err.splitlines() if "oops" in line) == [
        "0: oops", "1: oops", "2: oops", "3: oops"]
    assert "srun: error: node01: task 0: Exited with exit code 3" in err
    assert "srun: error: node02: task 1: Exited with exit code 4" in err
    assert (hosts.shared / "task-0-node01.out").read_text().strip() == "cn1"
    assert (hosts.shared / "task-1-node02.out").read_text().strip() == "cn1"
    r = hosts.on("ctl", "sacct", "-n", "-P", "-j", str(job), "-o", "JobID,State,ExitCode,NodeList")
    assert r.stdout.splitlines()[2:] == [f"{job}.0|COMPLETED|0:0|node[01-03]",
                                         f"{job}.1|FAILED|4:0|node[01-02]"]


def test_jobs_open_only_their_own_gpus_on_every_host(hosts):
    # hosts.sh confines devices (cgroup.conf ConstrainDevices=yes). The
    # batch script runs on node01 (cn1), the step's second task on node03
    # (cn2), in a cgroup its launcher made there: each may open its own
    # node's GPU (ENXIO: the emulated device has no driver) and is refused
    # the other one (EPERM).
    probe = hosts.shared / "probe.py"
    probe.write_text(
        "#!/usr/bin/python3\n"
        "import errno, os, socket, sys\n"
        "host, node = socket.gethostname(), os.environ['SLURMD_NODENAME']\n"
        f"d = '{hosts.dir}/' + host + '/spool/' + host + '/dev/' + node\n"
        "out = []\n"
        "for i in (0, 1):\n"
        "    try:\n"
        "        os.close(os.open(f'{d}/nvidia{i}', os.O_RDONLY)); r = 'open'\n"
        "    except OSError as e:\n"
        "        r = errno.errorcode[e.errno]\n"
        "    out.append(f'{i}={r}')\n"
        "print(sys.argv[1], node, os.environ.get('SLURM_STEP_GPUS', os.environ.get('SLURM_JOB_GPUS')),\n"
        "      os.environ['CUDA_VISIBLE_DEVICES'], *out)\n")
    probe.chmod(0o755)
    job = hosts.sbatch("-N2", "-w", "node01,node03", "--gres=gpu:1", "-o", "gpus.out", "--wrap",
                       f"{probe} batch; srun -N2 -n2 {probe} step")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    lines = sorted((hosts.shared / "gpus.out").read_text().splitlines())
    assert len(lines) == 3, lines
    for line in lines:
        tag, node, gpus, visible, *opens = line.split()
        assert visible == "0", line
        mine = int(gpus)
        assert opens == [f"{i}={'ENXIO' if i == mine else 'EPERM'}" for i in (0, 1)], line
    assert [l.split()[:2] for l in lines] == [["batch", "node01"], ["step", "node01"],
                                              ["step", "node03"]]


def test_cancelling_the_job_stops_its_tasks_on_other_hosts(hosts):
    marker = f"remote-sleep-{os.getpid()}"
    job = hosts.sbatch("-N", "2", "-w", "node02,node03", "-o", "/dev/null", "--wrap",
                       f"srun -N2 -n2 bash -c 'exec -a {marker} sleep 300'")

    def tasks():
        # Anchored, so neither srun's command line nor this pgrep's own
        # callers match; the hosts share one pid namespace.
        return hosts.on("cn2", "pgrep", "-f", f"^{marker} 300", check=False).stdout.split()

    deadline = time.time() + 20
    while time.time() < deadline and len(tasks()) < 2:
        time.sleep(0.1)
    assert len(tasks()) == 2, "the tasks never started"
    hosts.on("ctl", "scancel", str(job))
    deadline = time.time() + 20
    while time.time() < deadline and tasks():
        time.sleep(0.1)
    # (srun, sent SIGTERM with the batch shell, aborts its step; had it
    # been killed outright, its launchers would kill the tasks themselves.)
    assert tasks() == []
    assert hosts.wait_state(job, {"CANCELLED"}) == "CANCELLED"


def test_scancel_of_a_step_kills_its_tasks_on_every_host(hosts):
    job = hosts.sbatch("-N2", "-w", "node02,node03", "-o", "stepcancel.out", "--wrap",
                       "srun -l sleep 60 & sleep 1; srun -l true; wait; echo after $?")
    deadline = time.time() + 20
    while time.time() < deadline and f"{job}.0 " not in hosts.on(
            "ctl", "squeue", "-s", "-h", "-o", "%i ").stdout:
        time.sleep(0.1)
    hosts.on("login", "scancel", f"{job}.0")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED", "CANCELLED"}) == "COMPLETED"
    out = (hosts.shared / "stepcancel.out").read_text()
    assert "node02: task 0: Killed" in out and "node03: task 1: Killed" in out, out
    r = hosts.on("ctl", "sacct", "-n", "-P", "-j", str(job), "-o", "JobID,State,ExitCode,MaxRSS")
    rows = {row.split("|")[0]: row.split("|")[1:] for row in r.stdout.split()}
    assert rows[f"{job}.0"][:2] == ["CANCELLED", "0:9"], r.stdout
    # The launchers report each task's peak memory back through srun.
    assert rows[f"{job}.1"][0] == "COMPLETED" and rows[f"{job}.1"][2].endswith("K"), r.stdout
    assert "signal 9 to its tasks (scancel)" in hosts.log("cn2")


def test_sstat_gathers_a_steps_tasks_from_every_host(hosts):
    # Task 0 (node02, on cn1) holds 30 MiB, task 1 (node03, on cn2) 60 MiB;
    # sstat on the login host gets both from the agents of their hosts.
    hold = ("srun -N2 -n2 bash -c 'exec python3 -c "
            "\"b=bytearray($((30 + 30 * SLURM_PROCID)) << 20); import time; time.sleep(60)\"'")
    job = hosts.sbatch("-N2", "-w", "node02,node03", "-o", "/dev/null", "--wrap", hold)

    def both():
        r = hosts.on("login", "sstat", "-j", str(job), "-n", "-P", "--noconvert", "-o",
                     "JobID,NTasks,MaxRSS,MaxRSSNode,MaxRSSTask,TRESUsageInMinNode,Nodelist",
                     check=False)
        row = r.stdout.strip().split("|")
        return row if len(row) == 7 and int(row[2] or 0) > 60 << 20 else None

    deadline = time.time() + 20
    row = both()
    while time.time() < deadline and row is None:
        time.sleep(0.2)
        row = both()
    assert row is not None, "sstat never showed both tasks"
    assert row[:2] == [f"{job}.0", "2"]
    assert row[3:5] == ["node03", "1"]
    assert ",mem=node02," in row[5] and row[6] == "node[02-03]"
    hosts.on("ctl", "scancel", str(job))
    assert hosts.wait_state(job, {"CANCELLED"}) == "CANCELLED"


def test_sattach_on_a_third_host_joins_a_step_on_two(hosts):
    # srun runs on the login host, its tasks on cn1 (node02) and cn2
    # (node03); sattach on cn3 gets their output through srun and sends
    # task 1 alone its input.
    srun = subprocess.Popen(
        [str(HOSTS_SH), "exec", "login", "srun", "-N2", "-n2", "-w", "node02,node03", "-J",
         "attach-hosts", "bash", "-c",
         "echo hi$SLURM_PROCID $(hostname); while read l; do echo got$SLURM_PROCID:$l; done; "
         "echo end$SLURM_PROCID"],
        env=hosts.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.time() + 30
        job = ""
        while not job and time.time() < deadline:
            job = hosts.on("ctl", "squeue", "-h", "-n", "attach-hosts", "-o", "%i").stdout.strip()
        layout = None
        while job and time.time() < deadline:
            layout = hosts.on("cn3", "sattach", "--layout", f"{job}.0", check=False)
            if layout.returncode == 0:
                break
            time.sleep(0.2)
        assert layout is not None and layout.returncode == 0, layout
        assert "\tNode 1 (node03), 1 task(s): 1 \n" in layout.stdout
        att = subprocess.Popen(
            [str(HOSTS_SH), "exec", "cn3", "sattach", "-l", "--input-filter=1", f"{job}.0"],
            env=hosts.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        for p, text in ((att, "hello\n"), (srun, "from-login\n")):
            end_input(p, text)
            time.sleep(1)
        out, err = att.communicate(timeout=30)
        assert att.returncode == 0, err
        lines = out.splitlines()
        assert [l for l in lines if l.startswith("1: ")] == [
            "1: hi1 cn2", "1: got1:hello", "1: end1"], out
        assert "0: hi0 cn1" in lines and "0: got0:from-login" in lines, out
        srun_out, _ = srun.communicate(timeout=30)
        assert "got1:hello" in srun_out and "got0:hello" not in srun_out
    finally:
        if srun.poll() is None:
            srun.kill()
            srun.communicate()


def test_a_heterogeneous_step_spans_the_hosts_of_its_components(hosts):
    # srun on the login host makes a heterogeneous allocation (node02 on
    # cn1, node04 on cn3) and one step over both, each part with its own
    # command, launched through the agents of each component's host.
    r = hosts.on("login", "srun", "-w", "node02", "-l", "bash", "-c",
                 "echo a $(hostname) $SLURM_HET_SIZE", ":", "-w", "node04", "-n2", "bash", "-c",
                 "echo b $(hostname) $SLURM_HET_SIZE")
    assert sorted(r.stdout.splitlines()) == ["0: a cn1 2", "1: b cn3 2", "2: b cn3 2"], r.stderr


def test_sbcast_puts_the_file_on_every_hosts_own_disk(hosts):
    # node02 is on cn1, node03 on cn2, each with its own /tmp.
    marker = f"sbcast-{os.getpid()}"
    (hosts.shared / f"{marker}.src").write_text("payload\n" * 1000)
    job = hosts.sbatch("-N2", "-w", "node02,node03", "-o", f"{marker}.out", "--wrap",
                       f"sbcast -C {hosts.shared}/{marker}.src /tmp/{marker}; echo rc=$?; "
                       f"srun -N2 -l cat /tmp/{marker} | sort | uniq -c | wc -l")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    out = (hosts.shared / f"{marker}.out").read_text().split()
    assert out == ["rc=0", "2"], out  # both tasks read the whole copy on their own host
    for host in ("cn1", "cn2"):
        r = hosts.on(host, "cat", f"/tmp/{marker}")
        assert r.stdout == "payload\n" * 1000
    assert hosts.on("cn3", "test", "-e", f"/tmp/{marker}", check=False).returncode != 0


def test_step_tasks_run_in_a_cgroup_that_ends_with_the_step(hosts):
    # An allocation has no batch step, so no job cgroup on its nodes' hosts:
    # each node's launcher makes one for its tasks (the job's memory there
    # as its limit, or the step's own with srun --mem), and kills what they
    # leave behind when the step ends.
    v1 = Path("/sys/fs/cgroup/memory").is_dir()
    if not v1 and not Path("/sys/fs/cgroup/cgroup.controllers").exists():
        pytest.skip("no cgroup v1 memory hierarchy or cgroup v2 here")
    marker = f"leftover-{os.getpid()}"
    line, limit = ((":memory:", "/sys/fs/cgroup/memory$c/memory.limit_in_bytes") if v1
                   else ("^0::", "/sys/fs/cgroup$c/memory.max"))
    show = f"c=$(grep -E \"{line}\" /proc/self/cgroup | cut -d: -f3); echo $c $(cat {limit})"
    r = hosts.on("login", "salloc", "-N2", "-w", "node03,node04", "--mem=200", "bash", "-c",
                 f"srun bash -c '{show}; (exec -a {marker} sleep 300) & disown; true'; "
                 f"srun --mem=64 bash -c '{show}'")
    seen = sorted(tuple(l.split()) for l in r.stdout.splitlines())
    assert [(c.rsplit("/", 1)[1].split("_step_")[1], limit) for c, limit in seen] == [
        ("0_node03", str(200 << 20)), ("0_node04", str(200 << 20)),
        ("1_node03", str(64 << 20)), ("1_node04", str(64 << 20))], r.stdout + r.stderr
    deadline = time.time() + 10
    while time.time() < deadline and hosts.on("cn2", "pgrep", "-f", f"^{marker}", check=False).stdout:
        time.sleep(0.1)
    assert hosts.on("cn2", "pgrep", "-f", f"^{marker}", check=False).stdout == ""
    parent = Path("/sys/fs/cgroup/memory/muster" if v1 else "/sys/fs/cgroup/muster")
    assert not [d for d in parent.glob("job_*_step_0_node0*")], "the step's cgroups stay"


def test_configless_agent_gets_its_configuration_from_musterd(hosts):
    # cn2's agent restarts configless: only the key is on the host; the
    # configuration comes from musterd into cn2's own /tmp.
    hosts.stop_agent("cn2")
    cache = "/tmp/muster-conf"
    hosts.start_daemon("cn2", "muster-agent", "--conf-server", "ctl:6817", "--key-file",
                       str(hosts.dir / "conf" / "slurm.key"), "--conf-cache", cache)
    deadline = time.time() + 20
    while time.time() < deadline and not hosts.on("cn2", "test", "-e", f"{cache}/muster.conf",
                                                  check=False).returncode == 0:
        time.sleep(0.1)
    cached = hosts.on("cn2", "cat", f"{cache}/muster.conf").stdout
    assert cached == (hosts.dir / "conf" / "muster.conf").read_text()
    assert "sent the configuration to cn2" in hosts.log("ctl")
    assert f"configuration from ctl:6817 in {cache}/muster.conf" in hosts.log("cn2")
    job = hosts.sbatch("-w", "node03", "-o", "configless.out", "--wrap", "hostname")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    assert (hosts.shared / "configless.out").read_text().strip() == "cn2"
    # The host's commands read the same cached copy.
    r = hosts.on("cn2", "env", f"MUSTER_CONF={cache}/muster.conf", "sinfo", "-h", "-n", "node03",
                 "-o", "%N %t")
    assert r.stdout.split() == ["node03", "idle"]
    # Without the right key, nothing is served.
    bad = hosts.dir / "bad.key"
    bad.write_bytes(os.urandom(32))
    os.chmod(bad, 0o600)
    r = hosts.on("cn3", str(BIN / "muster-agent"), "--conf-server", "ctl", "--key-file", str(bad),
                 "--conf-cache", "/tmp/bad-conf", check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == ("muster-agent: error: --conf-server ctl:6817: refused: bad "
                                "signature (a different key, or an altered message)")


def test_reconfigure_restarts_musterd_and_agents_on_the_new_file(hosts):
    # cn2's agent is configless now (the test above). A step runs across
    # the reconfigure and still ends as it should.
    conf = hosts.dir / "conf" / "muster.conf"
    before = conf.read_text()
    [musterd] = hosts.pids("ctl", "musterd")
    [agent] = hosts.pids("cn2", "muster-agent")
    job = hosts.sbatch("-N2", "-w", "node02,node03", "-o", "reconf.out", "--wrap",
                       "srun -l bash -c 'sleep 3; echo done $(hostname)'")
    hosts.wait_state(job, {"RUNNING"})
    time.sleep(1)
    conf.write_text(before + "PartitionName=extra Nodes=node04 MaxTime=1:00:00\n")
    try:
        r = hosts.on("login", "scontrol", "reconfigure")
        assert (r.stdout, r.stderr) == ("", "")
        deadline = time.time() + 20
        while time.time() < deadline and "extra" not in hosts.on(
                "cn2", "cat", "/tmp/muster-conf/muster.conf").stdout:
            time.sleep(0.2)
        assert hosts.on("cn2", "cat", "/tmp/muster-conf/muster.conf").stdout == conf.read_text()
        # musterd restarts a moment after it answered.
        while time.time() < deadline and "extra" not in hosts.on(
                "login", "sinfo", "-h", "-o", "%P").stdout:
            time.sleep(0.2)
        r = hosts.on("login", "sinfo", "-h", "-p", "extra", "-o", "%P %N")
        assert r.stdout.split() == ["extra", "node04"]
        # Restarted in place: the same processes.
        assert hosts.pids("ctl", "musterd") == [musterd]
        assert hosts.pids("cn2", "muster-agent") == [agent]
        assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
        assert sorted((hosts.shared / "reconf.out").read_text().splitlines()) == [
            "0: done cn1", "1: done cn2"]
        r = hosts.on("ctl", "sacct", "-n", "-P", "-j", str(job), "-o", "JobID,State")
        assert f"{job}.0|COMPLETED" in r.stdout.split()
        # A file that does not load changes nothing and says where it is wrong.
        conf.write_text(conf.read_text() + "BogusKey=1\n")
        r = hosts.on("ctl", "scontrol", "reconfigure", check=False)
        assert r.returncode == 1
        assert r.stderr.startswith("slurm_reconfigure error: muster.conf:") and "BogusKey" in r.stderr
        assert hosts.pids("ctl", "musterd") == [musterd]
    finally:
        conf.write_text(before)
        serving = hosts.log("ctl").count(" serving cluster ")
        hosts.on("ctl", "scontrol", "reconfigure")
        # musterd restarts a moment after it answered: what reaches it in
        # between is cut off. The next tests start once it serves again.
        deadline = time.time() + 20
        while hosts.log("ctl").count(" serving cluster ") == serving and time.time() < deadline:
            time.sleep(0.1)
        assert hosts.log("ctl").count(" serving cluster ") > serving
    assert "reconfigure: " in hosts.log("ctl") and "restarting on" in hosts.log("ctl")


def test_srun_and_salloc_from_the_login_host(hosts):
    # srun outside an allocation asks for one over TCP, its tasks run on
    # the compute hosts and stream back to the login host.
    r = hosts.on("login", "bash", "-c", f"cd {hosts.shared} && srun -N2 -w node02,node03 -l hostname")
    assert sorted(r.stdout.splitlines()) == ["0: cn1", "1: cn2"]
    r = hosts.on("login", "bash", "-c",
                 f"cd {hosts.shared} && salloc -N1 -w node04 bash -c "
                 "'echo $SLURM_JOB_NODELIST $(hostname); srun hostname'")
    assert r.stdout.split() == ["node04", "login", "cn3"]
    assert "salloc: Granted job allocation" in r.stderr


def test_an_allocation_outlives_its_nodes_agent_restart(hosts):
    # salloc runs nothing on its nodes: an agent that restarts (and reports
    # no step for it) must not end it.
    salloc = subprocess.Popen([str(HOSTS_SH), "exec", "login", "salloc", "-N1", "-w", "node04",
                               "bash", "-c", "echo $SLURM_JOB_ID; sleep 4"],
                              env=hosts.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    job = int(salloc.stdout.readline())
    [agent] = hosts.pids("cn3", "muster-agent")
    os.kill(agent, signal.SIGKILL)
    hosts.start_daemon("cn3", "muster-agent", "--conf", str(hosts.dir / "conf" / "muster.conf"))
    out, err = salloc.communicate(timeout=60)
    assert salloc.returncode == 0, err
    assert hosts.wait_state(job, {"COMPLETED", "NODE_FAIL", "FAILED"}) == "COMPLETED"


def test_srun_kill_on_bad_exit_across_hosts(hosts):
    start = time.time()
    r = hosts.on("login", "bash", "-c",
                 "cd / && srun -N2 -n2 -w node02,node03 -K bash -c "
                 "'if [ $SLURM_PROCID = 1 ]; then exit 3; fi; sleep 30'", check=False)
    assert time.time() - start < 20
    assert r.returncode == 143
    assert "srun: error: node03: task 1: Exited with exit code 3" in r.stderr
    assert "srun: error: node02: task 0: Terminated" in r.stderr
    assert "srun: Force Terminated StepId=" in r.stderr
    # As on the oracle, the failed task's line comes before the others are stopped.
    lines = r.stderr.splitlines()
    assert lines.index("srun: error: node03: task 1: Exited with exit code 3") < \
        next(i for i, l in enumerate(lines) if "_step_signal: Terminating" in l), lines


def test_srun_gathers_a_nodes_failed_tasks_across_hosts(hosts):
    # The oracle's srun -N2 -n4: each node's tasks that end alike share a
    # line, named by node, the ranks in range form.
    r = hosts.on("login", "bash", "-c",
                 "cd / && srun -N2 -n4 -w node02,node03 bash -c "
                 "'echo $SLURM_PROCID $SLURMD_NODENAME; exit 5'", check=False)
    assert r.returncode == 5, r.stderr
    ranks = {}
    for line in r.stdout.splitlines():
        rank, node = line.split()
        ranks.setdefault(node, []).append(int(rank))
    want = []
    for node, mine in ranks.items():
        mine.sort()
        assert mine == list(range(mine[0], mine[-1] + 1)), ranks  # block layout
        tasks = f"task {mine[0]}" if len(mine) == 1 else f"tasks {mine[0]}-{mine[-1]}"
        want.append(f"srun: error: {node}: {tasks}: Exited with exit code 5")
    assert sorted(r.stderr.splitlines()) == sorted(want), (r.stderr, ranks)
    assert any(": tasks " in line for line in want), ranks


def test_srun_stdin_reaches_tasks_on_other_hosts(hosts):
    r = hosts.on("login", "srun", "-N2", "-n3", "-w", "node02,node03", "-l", "bash", "-c",
                 "while read l; do echo $l $(hostname); done", input="a\nb\n")
    assert sorted(r.stdout.splitlines()) == ["0: a cn1", "0: b cn1", "1: a cn1", "1: b cn1",
                                             "2: a cn2", "2: b cn2"]
    r = hosts.on("login", "srun", "-N2", "-n3", "-w", "node02,node03", "-i", "2", "-l", "cat",
                 input="only two\n")
    assert r.stdout.splitlines() == ["2: only two"]
    r = hosts.on("login", "srun", "-N2", "-n2", "-w", "node02,node03", "-i", "none", "-l", "cat",
                 input="nobody\n")
    assert r.stdout == ""


def test_srun_step_options_across_hosts(hosts):
    # Each compared with the oracle (Slurm 22.05) for the same commands.
    script = ("srun -n5 -m cyclic -l bash -c "
              "'echo $SLURMD_NODENAME $SLURM_LOCALID $SLURM_GTIDS $SLURM_DISTRIBUTION' | sort; "
              "srun -n3 -w node03 -l printenv SLURMD_NODENAME | sort; "
              "srun -w node03 -N1 -n1 -l printenv SLURMD_NODENAME; "
              "FOO=1 BAR=2 srun -n1 --export=FOO,X=3 /usr/bin/env | grep -v ^SLURM | sort; "
              "srun -N1 -n2 --cpu-bind=verbose,cores -l true 2>&1 | sort; "
              "srun -w node09 true; "
              "srun -t 0:01 -N2 -n2 sleep 30; echo timeout=$?")
    r = hosts.on("login", "salloc", "-N3", "--ntasks-per-node=2", "-w", "node[01-03]", "bash", "-c",
                 script)
    lines = r.stdout.splitlines()
    # cyclic over 2,2,1 tasks: ranks 0,3 on node01, 1,4 on node02, 2 on node03.
    assert lines[:5] == ["0: node01 0 0,3 cyclic", "1: node02 0 1,4 cyclic", "2: node03 0 2 cyclic",
                         "3: node01 1 0,3 cyclic", "4: node02 1 1,4 cyclic"]
    # -w names a node the step must include; the counts still hold.
    assert lines[5:8] == ["0: node01", "1: node02", "2: node03"]
    assert lines[8] == "0: node03"
    # --export=FOO,X=3: only those and Slurm's own.
    assert lines[9:12] == ["FOO=1", "SRUN_DEBUG=3", "X=3"]
    assert [l.split("[")[0] for l in lines[12:14]] == ["0: cpu-bind=MASK - node01, task  0  0 ",
                                                       "1: cpu-bind=MASK - node01, task  1  1 "]
    assert ("srun: error: Unable to create step for job " in r.stderr
            and ": Requested node configuration is not available" in r.stderr)
    # -t: the step's own limit, on each of its nodes' hosts.
    assert lines[14] == "timeout=143", r.stdout
    assert re.search(r"slurmstepd-node01: error: \*\*\* STEP \d+\.5 ON node01 CANCELLED AT \S+ "
                     r"DUE TO TIME LIMIT \*\*\*", r.stderr), r.stderr
    assert "srun: error: node02: task 1: Terminated" in r.stderr, r.stderr
    r = hosts.on("login", "srun", "--mpi=list")
    assert r.stdout == ("MPI plugin types are...\n\tpmix\n\tnone\n"
                        "specific pmix plugin versions available: pmix_v4\n")
    for argv, message in [
            (["--mpi=pmi2"], "srun: error: Invalid MPI type 'pmi2', --mpi=list for acceptable types"),
            (["-m", "plane=2"], "srun: error: --distribution=plane=2: Muster's srun lays tasks out"),
            (["-m", "bogus"], "srun: error: Invalid --distribution specification"),
            (["--cpu-bind=bogus"], 'srun: error: unrecognized --cpu-bind argument "bogus"'),
            (["--cpu-bind=sockets"], "srun: error: --cpu-bind=sockets: Muster's srun binds to none")]:
        r = hosts.on("login", "srun", *argv, "true", check=False)
        assert r.returncode != 0 and r.stderr.startswith(message), (argv, r.stderr)


def test_srun_pty_is_a_real_terminal_on_the_node(hosts):
    # Through a pseudo-terminal, as a user at a login shell: the remote
    # shell shows its prompt, has a terminal of its own of our size,
    # follows a resize, a Ctrl-C stops its foreground program (not srun),
    # and its exit status is srun's.
    import fcntl
    import pty
    import struct
    import termios
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.clear()
        os.environ.update(hosts.env)
        # The prompt is set on the node: hosts.sh, a bash script, would
        # drop a PS1 from the environment (bash unsets it when not
        # interactive), and each wait for the prompt would time out.
        os.execv(str(HOSTS_SH), [str(HOSTS_SH), "exec", "login", "srun", "-N1", "-w", "node04",
                                 "--pty", "env", "PS1=remote$ ", "bash", "--norc", "--noprofile",
                                 "-i"])
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
        # The prompt shows before anything is typed: a terminal's output is
        # passed on as it comes, not by whole lines.
        assert "remote$ " in read_pty(fd, "remote$ ")
        # Each command's output ends with a sum the typed line only names.
        os.write(fd, b"echo on $(hostname) $(tty) $(stty size) $((40 + 2))x\n")
        out = read_pty(fd, "42x")
        assert "on cn3 /dev/pts/" in out and " 33 111 42x" in out, out
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        time.sleep(0.5)
        os.write(fd, b"echo $(stty size) $((40 + 3))x\n")
        assert "40 120 43x" in read_pty(fd, "43x")
        os.write(fd, b"sleep 60\n")
        time.sleep(1)
        os.write(fd, b"\x03")
        os.write(fd, b"echo after $?\n")
        assert "after 130" in read_pty(fd, "after 130")
        os.write(fd, b"exit 3\n")
        read_pty(fd, "never", timeout=10)
        _, status = os.waitpid(pid, 0)
        pid = 0
        assert os.waitstatus_to_exitcode(status) == 3
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


def test_ctrl_c_reports_the_tasks_then_twice_aborts_the_step(hosts):
    srun = subprocess.Popen([str(HOSTS_SH), "exec", "login", "srun", "-N2", "-n2", "-w",
                             "node02,node03", "sleep", "60"], env=hosts.env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 20
    pids = []
    while not pids and time.time() < deadline:
        pids = hosts.pids("login", "srun")
        time.sleep(0.1)
    [pid] = pids
    time.sleep(1.5)  # the tasks have started
    os.kill(pid, signal.SIGINT)
    time.sleep(1.5)
    os.kill(pid, signal.SIGINT)
    time.sleep(0.2)
    os.kill(pid, signal.SIGINT)
    out, err = srun.communicate(timeout=30)
    assert srun.returncode == 130, err
    lines = err.splitlines()
    step = lines[1].split()[1]
    assert lines[:7] == ["srun: interrupt (one more within 1 sec to abort)",
                         f"srun: {step} tasks 0-1: running",
                         "srun: interrupt (one more within 1 sec to abort)",
                         f"srun: {step} tasks 0-1: running",
                         f"srun: sending Ctrl-C to {step}",
                         "srun: forcing job termination",
                         "srun: Job step aborted: Waiting up to 7 seconds for job step to finish."]
    assert sorted(lines[7:]) == ["srun: error: node02: task 0: Interrupt",
                                 "srun: error: node03: task 1: Interrupt"]


ALLREDUCE = """
import socket
from mpi4py import MPI
world = MPI.COMM_WORLD
total = world.allreduce(world.rank + 1, op=MPI.SUM)
hosts = world.gather(socket.gethostname(), root=0)
if world.rank == 0:
    print(world.size, total, " ".join(hosts))
"""


def allreduce_in_an_allocation(hosts, launcher):
    """ALLREDUCE started by `launcher` in an allocation of 4 tasks on node02
    (cn1) and node03 (cn2); salloc's result, its output led by the job id
    and SLURM_TASKS_PER_NODE."""
    if not Path("/usr/bin/mpirun").exists():
        pytest.skip("Debian's openmpi-bin is not installed (scripts/build.sh installs it)")
    (hosts.shared / "allreduce.py").write_text(ALLREDUCE)
    return hosts.on("login", "bash", "-c",
                    f"cd {hosts.shared} && salloc -N2 -n4 -w node02,node03 bash -c "
                    f"'echo $SLURM_JOB_ID $SLURM_TASKS_PER_NODE; {launcher} /usr/bin/python3 allreduce.py'")


def test_mpirun_in_an_allocation_launches_through_srun(hosts):
    # Debian's OpenMPI finds the nodes and slots in salloc's environment and
    # starts its daemons with srun, as under Slurm (one step, "orted").
    r = allreduce_in_an_allocation(hosts, "mpirun --allow-run-as-root")
    job, per_node, size, total, *where = r.stdout.split()
    # 4 ranks as Slurm lays them out (node02 3, node03 1); 1+2+3+4 = 10.
    assert (per_node, size, total) == ("3,1", "4", "10"), r.stdout + r.stderr
    assert where == ["cn1", "cn1", "cn1", "cn2"]
    r = hosts.on("ctl", "sacct", "-n", "-P", "-j", job, "-o", "JobID,JobName,NodeList,State")
    assert f"{job}.0|orted|node[02-03]|COMPLETED" in r.stdout.split()


# The handbook's torch.distributed set-up: rank and world size from
# Slurm's variables, the first node of the job as MASTER_ADDR.
DDP_TRAIN = """
import os
import socket
import torch
import torch.distributed as dist
os.environ["RANK"] = os.environ["SLURM_PROCID"]
os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
dist.init_process_group(backend="gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
# One write per line: the tasks' outputs meet in one stream.
os.write(1, f"{dist.get_rank()} {dist.get_world_size()} {os.environ['SLURM_LOCALID']} "
            f"{socket.gethostname()} {int(t.item())}\\n".encode())
dist.destroy_process_group()
"""

DDP_SBATCH = """#!/bin/bash
#SBATCH --job-name=ddp
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --output=%x-%j.out
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
srun /usr/bin/python3 train.py
"""


def test_torch_distributed_across_two_hosts(hosts):
    have_torch = subprocess.run(["/usr/bin/python3", "-c", "import torch.distributed"],
                                capture_output=True).returncode == 0
    if not have_torch:
        pytest.skip("Debian's python3-torch is not installed (scripts/build.sh installs it)")
    (hosts.shared / "train.py").write_text(DDP_TRAIN)
    (hosts.shared / "ddp.sbatch").write_text(DDP_SBATCH)
    job = hosts.sbatch("-w", "node02,node03", str(hosts.shared / "ddp.sbatch"), host="login")
    state = hosts.wait_state(job, {"COMPLETED", "FAILED", "CANCELLED"}, timeout=120)
    out = (hosts.shared / f"ddp-{job}.out").read_text()
    assert state == "COMPLETED", out
    # rank, world, local rank, host, sum of 1..4 over gloo between cn1 and cn2.
    assert sorted(out.split("\n")[:4]) == ["0 4 0 cn1 10", "1 4 1 cn1 10", "2 4 0 cn2 10",
                                            "3 4 1 cn2 10"], out


def test_srun_mpi_pmix_launches_mpi_ranks_directly(hosts):
    # Each node's launcher runs a PMIx server (Debian's libpmix) for its
    # tasks; the fences of MPI_Init and the allreduce go between the nodes
    # through srun. No mpirun, no orted.
    r = allreduce_in_an_allocation(hosts, "srun --mpi=pmix")
    job, _, size, total, *where = r.stdout.split()
    assert (size, total, where) == ("4", "10", ["cn1", "cn1", "cn1", "cn2"]), r.stdout + r.stderr
    r = hosts.on("ctl", "sacct", "-n", "-P", "-j", job, "-o", "JobID,JobName,State")
    assert f"{job}.0|python3|COMPLETED" in r.stdout.split()
    assert "orted" not in r.stdout
    # Without --mpi: $SLURM_MPI_TYPE, as Slurm's srun (else MpiDefault).
    r = hosts.on("login", "bash", "-c",
                 f"cd {hosts.shared} && SLURM_MPI_TYPE=pmix srun -N2 -n2 -w node02,node03 "
                 "/usr/bin/python3 allreduce.py")
    assert r.stdout.split() == ["2", "3", "cn1", "cn2"], r.stdout + r.stderr


@pytest.fixture(scope="module")
def munge_hosts():
    yield from started(Hosts("munge", auth="munge", net=232), 2, "(auth/munge")


def test_munge_authenticates_agents_commands_and_steps(munge_hosts):
    hosts = munge_hosts
    assert "TCP port 6817 (auth/munge)" in hosts.log("ctl")
    job = hosts.sbatch("-N", "3", "-n", "3", "-o", "munge.out", "--wrap", "srun -l hostname",
                       host="login")
    assert hosts.wait_state(job, {"COMPLETED", "FAILED"}) == "COMPLETED"
    assert sorted((hosts.shared / "munge.out").read_text().split("\n")[:3]) == [
        "0: cn1", "1: cn1", "2: cn2"]
    user = ensure_test_users()[0]
    r = hosts.on("login", "su", user, "-c",
                 f"PATH={BIN}:$PATH MUSTER_CONF={hosts.dir}/conf/muster.conf "
                 f"sbatch --parsable -H -o /dev/null --wrap true")
    held = int(r.stdout.strip())
    assert hosts.on("ctl", "squeue", "-h", "-j", str(held), "-o", "%u").stdout.strip() == user
    hosts.on("ctl", "scancel", str(held))

    # An agent whose munged has another key is refused on both sides.
    other = hosts.dir / "other"
    other.mkdir(exist_ok=True)
    key = other / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    conf = (hosts.dir / "conf" / "muster.conf").read_text().replace(
        "AuthInfo=socket=/tmp/munge.socket", "AuthInfo=socket=/tmp/other-munge.socket")
    (other / "muster.conf").write_text(conf)
    hosts.on("login", "munged", "--force", "--socket=/tmp/other-munge.socket",
             f"--key-file={key}", "--pid-file=/tmp/other-munged.pid",
             f"--log-file={other}/munged.log", f"--seed-file={other}/munged.seed")
    r = subprocess.run([str(HOSTS_SH), "exec", "login", "timeout", "-s", "INT", "2",
                        str(BIN / "muster-agent"), "--conf", str(other / "muster.conf"),
                        "--nodes", "node03"], env=hosts.env, capture_output=True, text=True)
    assert "refused this connection: munge: " in r.stderr, r.stderr
    assert "refused a message: munge: " in hosts.log("ctl")
