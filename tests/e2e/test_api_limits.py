"""The API's bounds (MusterApiParameters, SchedulerParameters=max_script_size):
oversized bodies and headers are refused before they are read, one uid
cannot hold every connection, and a script over the limit is refused with
Slurm's message."""

import json
import socket
import subprocess
import sys
import textwrap

import pytest

from conftest import DEFAULT_CONF, make_cluster

MAX_SCRIPT = 100000
MAX_BODY = 150000
PER_USER = 8

CONF = DEFAULT_CONF + (
    f"SchedulerParameters=max_script_size={MAX_SCRIPT}\n"
    f"MusterApiParameters=max_body_size={MAX_BODY},max_connections_per_user={PER_USER}\n")


@pytest.fixture(scope="module")
def limited():
    c = make_cluster(CONF)
    try:
        yield c
    finally:
        c.teardown()


def connect(cluster):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)  # a server that waits for the body would hang the test
    s.connect(cluster.socket)
    return s


def read_reply(s):
    chunks = []
    while True:
        try:
            c = s.recv(65536)
        except ConnectionResetError:  # the server closed with our data unread
            break
        if not c:
            break
        chunks.append(c)
    s.close()
    head, _, payload = b"".join(chunks).partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head else 0
    return status, head.decode(), (json.loads(payload) if payload.startswith(b"{") else payload)


def squeue_works(cluster, user=None):
    r = cluster.run(["squeue", "-h", "-o", "%i"], user=user, check=False)
    return r.returncode == 0


def test_oversized_body_is_refused_from_its_length(limited):
    # Only the header: the reply must come without any of the 50 MB.
    s = connect(limited)
    s.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 52428800\r\n\r\n")
    status, _, body = read_reply(s)
    assert status == 413, body
    assert body["limit"] == MAX_BODY and body["key"] == "MusterApiParameters=max_body_size"
    assert "52428800 bytes" in body["error"] and str(MAX_BODY) in body["error"], body
    # A client that pushes the whole body gets the same answer once the
    # server stops reading, and musterd goes on serving.
    s = connect(limited)
    try:
        s.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 52428800\r\n\r\n" +
                  b"{" * (50 << 20))
    except (BrokenPipeError, ConnectionResetError):
        pass
    status, _, body = read_reply(s)
    assert status == 413, body
    assert squeue_works(limited)
    assert limited.sbatch("-H", "--wrap", "true") > 0


def test_oversized_chunked_body_and_headers(limited):
    s = connect(limited)
    chunk = b"1000\r\n" + b"x" * 4096 + b"\r\n"
    try:
        s.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                  chunk * 100)
    except (BrokenPipeError, ConnectionResetError):
        pass
    status, _, body = read_reply(s)
    assert status == 413 and body["key"] == "MusterApiParameters=max_body_size", body
    s = connect(limited)
    try:
        s.sendall(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + b"h" * (1 << 20) + b"\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    status, _, body = read_reply(s)
    assert status == 431, body
    assert body["key"] == "MusterApiParameters=max_header_size" and body["limit"] == 65536, body
    assert squeue_works(limited)


def test_cli_says_which_limit_refused_it(limited):
    # A script within max_script_size whose environment takes the request
    # over max_body_size.
    env = {f"MUSTER_BIG_{i}": "v" * 1000 for i in range(200)}
    r = limited.run(["sbatch", "--wrap", "true"], env=env, check=False)
    assert r.returncode == 1
    assert r.stderr.startswith("sbatch: error: Batch job submission failed: request body of "), \
        r.stderr
    assert f"over the API's limit of {MAX_BODY} bytes (MusterApiParameters max_body_size)" \
        in r.stderr


def test_script_over_max_script_size(limited):
    head = "#!/bin/sh\ntrue\n"
    script = limited.work / "big.sh"
    script.write_text(head + "#" * (MAX_SCRIPT - len(head) - 1) + "\n")
    assert limited.sbatch(str(script)) > 0  # exactly the limit passes, as in Slurm
    script.write_text(head + "#" * (MAX_SCRIPT - len(head)) + "\n")
    r = limited.run(["sbatch", str(script)], check=False)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "sbatch: error: Batch job submission failed: "
        "Pathname of a file, directory or other parameter too long",
        f"sbatch: error: the batch script is {MAX_SCRIPT + 1} bytes, over the limit of "
        f"{MAX_SCRIPT} bytes (SchedulerParameters=max_script_size)"], r.stderr
    # musterd refuses it too when a client goes round sbatch.
    status, body = limited.api("POST", "/v1/jobs", {
        "script": script.read_text(), "work_dir": str(limited.work)})
    assert status == 400 and body["error"] == \
        "Pathname of a file, directory or other parameter too long", body


HOLDER = textwrap.dedent("""\
    import socket, sys
    held = []
    for _ in range(int(sys.argv[2])):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        held.append(s)
    print("ready", flush=True)
    sys.stdin.read()
""")


def test_one_uid_is_capped_and_others_are_served(limited, users):
    if len(users) < 2:
        pytest.skip("needs root for the test users")
    holder = subprocess.Popen(
        ["setpriv", f"--reuid={users[0]}", f"--regid={users[0]}", "--init-groups", "--",
         sys.executable, "-c", HOLDER, limited.socket, str(PER_USER)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        # That user's next command is refused, after a few retries, saying why.
        r = limited.run(["squeue", "-h"], user=users[0], check=False)
        assert r.returncode == 1
        assert r.stderr.startswith("squeue: error: too many connections: uid "), r.stderr
        assert f"(MusterApiParameters max_connections_per_user={PER_USER})" in r.stderr
        # Everyone else goes on: another user, and root over the same count.
        assert squeue_works(limited, user=users[1])
        extra = [connect(limited) for _ in range(PER_USER + 2)]
        assert squeue_works(limited)
        for s in extra:
            s.close()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # Its connections gone, the user is served again.
    assert squeue_works(limited, user=users[0])
