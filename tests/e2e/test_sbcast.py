"""sbcast: a file copied to every node of a running job, as the job's
user, with Slurm 22.05's messages and exit codes (taken from the oracle)."""

import os


def test_sbcast_copies_to_the_jobs_nodes(cluster):
    c = cluster
    src = c.work / "payload.bin"
    src.write_bytes(os.urandom(200000))
    os.chmod(src, 0o750)
    dest = c.work / "copy.bin"
    script = (f"sbcast {src} {dest}; echo rc=$?\n"
              f"sbcast {src} {dest}; echo rc=$?\n"
              f"sbcast -f -p -C {src} {dest}; echo rc=$?\n"
              f"sbcast {c.work}/nosuch {dest}.2; echo rc=$?\n"
              f"sbcast {src}; echo rc=$?\n")
    r = c.run(["salloc", "-N2", "-w", "gpu01,cpu01", "bash", "-c", script])
    rcs = [line for line in r.stdout.splitlines() if line.startswith("rc=")]
    assert rcs == ["rc=0", "rc=17", "rc=0", "rc=255", "rc=1"], r.stdout + r.stderr
    # Both nodes share this host's file system: the second node finds the
    # first one's copy, as Slurm's nodes on one host do.
    assert "sbcast: error: REQUEST_FILE_BCAST(gpu01): File exists" in r.stderr
    assert f"sbcast: error: Can't open `{c.work}/nosuch`: No such file or directory" in r.stderr
    assert "Need two file names, have 1 names" in r.stderr
    assert "srun:" not in r.stderr
    assert dest.read_bytes() == src.read_bytes()
    st, sd = os.stat(src), os.stat(dest)
    assert (sd.st_mode & 0o777, int(sd.st_mtime)) == (0o750, int(st.st_mtime))  # -p
    assert not [p for p in c.work.iterdir() if ".sbcast." in p.name]  # no temporary left


def test_sbcast_outside_a_job_says_what_it_needs(cluster):
    env = {k: v for k, v in cluster.env.items() if not k.startswith("SLURM_")}
    r = cluster.run(["sbcast", "/etc/hostname", "/tmp/x"], check=False, env=env)
    assert r.returncode == 1
    assert r.stderr == ("sbcast: error: Need a job id to run this command.  Run from within a "
                        "Slurm job or use the --jobid option.\n")
    r = cluster.run(["sbcast", "--send-libs", "/etc/hostname", "/tmp/x"], check=False)
    assert r.returncode == 1 and "--send-libs is not supported by Muster" in r.stderr
