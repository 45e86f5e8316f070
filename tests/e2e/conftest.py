"""End-to-end fixtures: a real local Muster cluster (musterd + muster-agent)
in a temporary directory, driven only through the Slurm-named commands and
the API socket. Every cluster is torn down, and every process it started is
gone, when its fixture ends."""

import json
import os
import pwd
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

BIN = Path(os.environ.get("MUSTER_BIN", Path(__file__).resolve().parents[2] / "build" / "bin"))

# AuthInfo=cred_expire=0: a requeued job may start again 1 s after the
# requeue instead of Slurm's 121 s (test_queue.py checks the default).
DEFAULT_CONF = """\
ClusterName=e2e
SlurmctldHost={host}
StateSaveLocation={dir}/ctld
SlurmdSpoolDir={dir}/spool
AuthInfo=cred_expire=0
DefMemPerCPU=1000
KillWait=1
MinJobAge=300
GresTypes=gpu
NodeName=gpu[01-02] CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=64000 Gres=gpu:h100:8 Feature=h100,gpu State=UNKNOWN
NodeName=cpu01 CPUs=16 Sockets=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=32000 Feature=cpu State=UNKNOWN
PartitionName=short Nodes=gpu[01-02],cpu01 Default=YES MaxTime=04:00:00 DefaultTime=01:00:00 State=UP
PartitionName=train Nodes=gpu[01-02] MaxTime=3-00:00:00 DefaultTime=04:00:00 State=UP
"""

TEST_USERS = ["mtest1", "mtest2"]


def ensure_test_users():
    """Unprivileged users for identity and permission tests (root only)."""
    if os.geteuid() != 0:
        return []
    for u in TEST_USERS:
        try:
            pwd.getpwnam(u)
        except KeyError:
            subprocess.run(["useradd", "-M", "-s", "/bin/bash", u], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return TEST_USERS


class Cluster:
    def __init__(self, root: Path, conf_text: str):
        self.root = root
        self.conf = root / "muster.conf"
        self.conf.write_text(conf_text.format(host=socket.gethostname().split(".")[0], dir=root))
        self.work = root / "work"
        self.work.mkdir()
        os.chmod(root, 0o755)
        os.chmod(self.work, 0o1777)
        self.env = dict(os.environ)
        self.env["PATH"] = f"{BIN}:{self.env.get('PATH', '/usr/bin:/bin')}"
        self.env["MUSTER_CONF"] = str(self.conf)
        self.env.pop("SLURM_CONF", None)
        for k in list(self.env):
            if k.startswith("SLURM_") or k.startswith("SBATCH_") or k.startswith("SQUEUE_"):
                del self.env[k]

    @property
    def socket(self):
        return str(self.root / "ctld" / "musterd.sock")

    # -- processes --------------------------------------------------------
    def up(self):
        r = self.run(["muster", "up", "--conf", str(self.conf)], check=False, timeout=60)
        assert r.returncode == 0, r.stderr
        assert f"export MUSTER_CONF={self.conf}" in r.stdout
        return r

    def down(self):
        return self.run(["muster", "down", "--conf", str(self.conf)], check=False, timeout=60)

    def daemon_pids(self):
        pids = {}
        for name in ("musterd", "agent"):
            f = self.root / "ctld" / f"{name}.pid"
            if f.exists():
                try:
                    pids[name] = int(f.read_text().strip())
                except ValueError:
                    pass
        return pids

    def own_processes(self):
        """Processes whose command line mentions this cluster's directory."""
        out = []
        needle = str(self.root).encode()
        for p in Path("/proc").iterdir():
            if not p.name.isdigit() or int(p.name) == os.getpid():
                continue
            try:
                if needle in (p / "cmdline").read_bytes():
                    out.append(int(p.name))
            except OSError:
                pass
        return out

    def teardown(self):
        self.run(["scancel", "--state=PENDING,RUNNING"], check=False, timeout=30)
        deadline = time.time() + 15
        while time.time() < deadline:
            r = self.run(["squeue", "-h", "-t", "R,CG"], check=False, timeout=30)
            if r.returncode != 0 or not r.stdout.strip():
                break
            time.sleep(0.1)
        self.down()
        for pid in self.own_processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)

    # -- commands ---------------------------------------------------------
    def run(self, argv, user=None, check=True, timeout=60, cwd=None, input=None, env=None):
        e = dict(self.env)
        if env:
            e.update(env)
        if user is not None:
            pw = pwd.getpwnam(user)
            e.update({"HOME": str(self.work), "USER": user, "LOGNAME": user})
            argv = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups",
                    "--"] + list(argv)
        r = subprocess.run(argv, env=e, cwd=str(cwd or self.work), capture_output=True,
                           text=True, timeout=timeout, input=input)
        if check and r.returncode != 0:
            raise AssertionError(f"{argv} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r

    def sbatch(self, *args, user=None, cwd=None, input=None, env=None):
        r = self.run(["sbatch", "--parsable", *args], user=user, cwd=cwd, input=input, env=env)
        return int(r.stdout.strip().split(";")[0])

    def api(self, method, path, body=None):
        """Calls the API over the unix socket with curl-like raw HTTP."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.socket)
        data = json.dumps(body).encode() if body is not None else b""
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n"
                  f"Connection: close\r\n\r\n".encode() + data)
        chunks = []
        while True:
            c = s.recv(65536)
            if not c:
                break
            chunks.append(c)
        s.close()
        raw = b"".join(chunks)
        head, _, payload = raw.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        return status, (json.loads(payload) if payload.startswith((b"{", b"[")) else payload.decode())

    def job(self, job_id):
        status, body = self.api("GET", f"/v1/jobs/{job_id}")
        assert status == 200, body
        return body

    def wait_state(self, job_id, states, timeout=30):
        if isinstance(states, str):
            states = {states}
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            last = self.job(job_id)["state"]
            if last in states:
                return last
            time.sleep(0.05)
        raise AssertionError(f"job {job_id} stayed {last}, wanted {states}")

    def wait_done(self, job_id, timeout=30):
        return self.wait_state(job_id, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                                        "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"}, timeout)

    def nodes_of(self, job_id):
        """The job's nodes as squeue prints them ("gpu[01-02]")."""
        return self.run(["squeue", "-h", "-j", str(job_id), "-o", "%N"]).stdout.strip()

    def cancel(self, job_ids):
        """Cancels the jobs and waits until each has ended."""
        self.run(["scancel", *map(str, job_ids)], check=False)
        for j in job_ids:
            self.wait_done(j)

    def scontrol_job(self, job_id):
        r = self.run(["scontrol", "show", "job", str(job_id)])
        fields = {}
        for tok in r.stdout.split():
            if "=" in tok:
                k, _, v = tok.partition("=")
                fields.setdefault(k, v)
        return fields


def make_cluster(conf_text=DEFAULT_CONF, side_files=None):
    """A cluster up in a new directory; `side_files` (name -> text) are
    written beside muster.conf first (gres.conf, topology.conf)."""
    root = Path(tempfile.mkdtemp(prefix="muster-e2e-"))
    for name, text in (side_files or {}).items():
        (root / name).write_text(text)
    c = Cluster(root, conf_text)
    c.up()
    return c


def wait_for(check, timeout=20, what="condition"):
    """Polls `check` until it returns something true (returned), or fails
    naming `what` and the last value after `timeout` seconds."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; last: {last}")


def end_input(p, text):
    """Writes `text` to subprocess `p`'s stdin and closes it (communicate()
    later must not flush it again)."""
    p.stdin.write(text)
    p.stdin.close()
    p.stdin = None


def kill9(pid):
    """SIGKILL to `pid`, and waits (up to 10 s) until it is gone."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.time() + 10
    while Path(f"/proc/{pid}").exists() and time.time() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                break
        except OSError:
            break
        time.sleep(0.01)


@pytest.fixture(scope="module")
def cluster():
    c = make_cluster()
    try:
        yield c
    finally:
        c.teardown()


@pytest.fixture
def fresh_cluster():
    c = make_cluster()
    try:
        yield c
    finally:
        c.teardown()


@pytest.fixture(scope="session")
def users():
    return ensure_test_users()


def read_pty(fd, until, timeout=15):
    """What the terminal shows until `until` appears in it."""
    out = b""
    deadline = time.time() + timeout
    while until.encode() not in out and time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
    return out.decode(errors="replace")
