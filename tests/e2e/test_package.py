"""The Debian package (packaging/, built with cpack from the tree): what it
installs, that its systemd units are valid, and that the installed programs
run a cluster. Installed into a directory with dpkg-deb -x, not onto this
machine, whose /usr/bin may hold Debian's Slurm client."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, DEFAULT_CONF

BUILD = BIN.parent
NEEDS = ("cpack", "dpkg-deb", "dpkg-shlibdeps", "systemd-analyze")
pytestmark = pytest.mark.skipif(
    not (BUILD / "CPackConfig.cmake").exists() or not all(shutil.which(t) for t in NEEDS),
    reason="needs a CMake build tree and cpack, dpkg-deb, dpkg-shlibdeps, systemd-analyze")


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("package")
    r = subprocess.run(["cpack", "--config", str(BUILD / "CPackConfig.cmake"), "-G", "DEB",
                        "-B", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    [deb] = out.glob("muster_*_amd64.deb")
    root = out / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return deb, root


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_package_holds_the_programs_units_and_sample(package):
    deb, root = package
    for path in ("usr/bin/muster", "usr/sbin/musterd", "usr/sbin/muster-agent",
                 "usr/sbin/muster-step", "lib/systemd/system/musterd.service",
                 "lib/systemd/system/muster-agent.service", "etc/default/musterd",
                 "etc/default/muster-agent", "usr/share/doc/muster/muster.conf.example"):
        assert (root / path).exists() or (root / "usr" / path).exists(), path
    for name in ("sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "scontrol", "sacct",
                 "sreport", "seff", "sprio", "sshare", "sacctmgr"):
        assert os.readlink(root / "usr/bin" / name) == "muster"
    assert field(deb, "Package") == "muster"
    depends = field(deb, "Depends")
    assert "libmunge2" in depends and "libssl3" in depends, depends
    assert "slurm-client" in field(deb, "Conflicts")
    control = subprocess.run(["dpkg-deb", "-e", str(deb), str(root.parent / "DEBIAN")], check=True)
    assert control.returncode == 0
    assert (root.parent / "DEBIAN" / "conffiles").read_text().split() == [
        "/etc/default/musterd", "/etc/default/muster-agent"]
    # Installed programs are stripped.
    assert (root / "usr/bin/muster").stat().st_size < (BIN / "muster").stat().st_size


def test_units_pass_systemd_analyze(package, tmp_path):
    _, root = package
    units = next(p for p in (root / "lib/systemd/system", root / "usr/lib/systemd/system")
                 if p.exists())
    for unit in ("musterd.service", "muster-agent.service"):
        # The unit as installed, its programs where this test put them.
        text = (units / unit).read_text().replace("/usr/sbin/", f"{root}/usr/sbin/")
        (tmp_path / unit).write_text(text)
        r = subprocess.run(["systemd-analyze", "verify", str(tmp_path / unit)],
                           capture_output=True, text=True)
        problems = [l for l in r.stderr.splitlines() if unit in l]
        assert not problems, r.stderr
        assert "Type=notify" in text
    agent = (units / "muster-agent.service").read_text()
    # Jobs outlive a restart of the agent.
    assert "KillMode=process" in agent and "Delegate=yes" in agent


def test_sample_configuration_is_valid(package, tmp_path):
    _, root = package
    conf = tmp_path / "muster.conf"
    shutil.copy(root / "usr/share/doc/muster/muster.conf.example", conf)
    key = tmp_path / "slurm.key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    r = subprocess.run([str(root / "usr/sbin/musterd"), "--validate", "--conf", str(conf)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "6 nodes, 2 partitions" in r.stdout


def test_installed_programs_run_a_cluster(package, tmp_path):
    # `muster up` from /usr/bin finds the daemons in /usr/sbin.
    _, root = package
    bin_dir = root / "usr/bin"
    conf = tmp_path / "muster.conf"
    conf.write_text(DEFAULT_CONF.format(host=os.uname().nodename.split(".")[0], dir=tmp_path))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_"))}
    env.update(PATH=f"{bin_dir}:/usr/bin:/bin", MUSTER_CONF=str(conf))
    run = lambda *argv: subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60,
                                       cwd=tmp_path)
    r = run(str(bin_dir / "muster"), "up", "--conf", str(conf))
    assert r.returncode == 0, r.stderr
    try:
        r = run(str(bin_dir / "sbatch"), "--parsable", "-o", str(tmp_path / "out"), "--wrap",
                "echo from the package")
        assert r.returncode == 0, r.stderr
        job = r.stdout.strip()
        deadline = time.time() + 30
        while time.time() < deadline:
            state = run(str(bin_dir / "sacct"), "-X", "-n", "-P", "-j", job, "-o", "State").stdout
            if state.strip() == "COMPLETED":
                break
            time.sleep(0.2)
        assert state.strip() == "COMPLETED"
        assert (tmp_path / "out").read_text() == "from the package\n"
        pids = [p.read_text().strip() for p in (tmp_path / "ctld").glob("*.pid")]
        exes = {os.readlink(f"/proc/{p}/exe") for p in pids if Path(f"/proc/{p}").exists()}
        assert exes == {str(root / "usr/sbin/musterd"), str(root / "usr/sbin/muster-agent")}
    finally:
        run(str(bin_dir / "muster"), "down", "--conf", str(conf))
