import os, pty, time
from conftest import read_pty, BIN
def test_ps1(cluster):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cluster.work)
        env = dict(cluster.env)
        os.execve(str(BIN / "srun"), ["srun", "--pty", "env", "PS1=remote$ ", "bash", "--norc", "--noprofile", "-i"], env)
    import fcntl, termios, struct
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 33, 111, 0, 0))
    t = time.time()
    out = read_pty(fd, "remote$ ", timeout=6)
    print("OUT1", time.time() - t, repr(out))
    os.write(fd, b"exit\n")
    out = read_pty(fd, "zzz", timeout=3)
    print("OUT2", repr(out))
    os.waitpid(pid, 0)
