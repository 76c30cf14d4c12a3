"""Hostile answers score 0, cost at most their time limit and leave the sandbox healthy."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sweetrl_gym.sandbox import Sandbox

REF = "def f(x):\n    return x * 2\n"
TESTS = ["f(1)", "f(2)", "f(3)"]
TIMEOUT = 0.5
# Each answer may take its module limit plus one limit per test, plus start-up slack.
BOUND_S = TIMEOUT * (len(TESTS) + 1) + 2.0

HOSTILE = {
    "infinite_loop": "def f(x):\n    while True:\n        pass\n",
    "module_infinite_loop": "while True:\n    pass\n",
    "sleep": "import time\ndef f(x):\n    time.sleep(60)\n",
    "ignores_alarm": (
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "def f(x):\n    while True:\n        try:\n            pass\n        except BaseException:\n"
        "            pass\n"
    ),
    "fork_bomb": "import os\nwhile True:\n    os.fork()\n",
    "fork_bomb_in_call": "import os\ndef f(x):\n    while True:\n        os.fork()\n",
    "subprocess": "import subprocess\ndef f(x):\n    return int(subprocess.check_output(['echo', '2']))*x\n",
    "os_system": "import os\ndef f(x):\n    os.system('true')\n    return x * 2 + 1\n",
    "threads": (
        "import threading\ndef f(x):\n    threading.Thread(target=lambda: None).start()\n"
        "    return x * 2 + 1\n"
    ),
    "memory_bomb": "def f(x):\n    return len(bytearray(10 ** 11))\n",
    "memory_creep": "blocks = []\nwhile True:\n    blocks.append(' ' * 10 ** 6)\n",
    "os_exit_module": "import os\nos._exit(0)\n",
    "os_exit_call": "import os\ndef f(x):\n    os._exit(0)\n",
    "sys_exit": "import sys\ndef f(x):\n    sys.exit(x * 2)\n",
    "kill_parent": "import os, signal\ndef f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n",
    "kill_process_group": "import os, signal\ndef f(x):\n    os.killpg(0, signal.SIGKILL)\n",
    "kill_self": "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "segfault_recursion": "import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(x):\n    return f(x)\n",
    "huge_print": "print('x' * 10 ** 7)\ndef f(x):\n    print('y' * 10 ** 7)\n    return 0\n",
    "huge_return": "def f(x):\n    return 'x' * 5_000_000\n",
    "deep_return": "def f(x):\n    v = []\n    for _ in range(10 ** 5):\n        v = [v]\n    return v\n",
    "always_equal": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "def f(x):\n    return Yes()\n"
    ),
    "always_equal_int": (
        "class Yes(int):\n    def __eq__(self, other):\n        return True\n"
        "def f(x):\n    return Yes(0)\n"
    ),
    "patched_builtins": (
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.int = str\n"
        "def f(x):\n    return 0\n"
    ),
    "frame_peeking": (
        "import sys, gc\ndef f(x):\n    frame = sys._getframe()\n    while frame.f_back:\n"
        "        frame = frame.f_back\n    for obj in gc.get_objects():\n"
        "        if isinstance(obj, dict) and 'expected' in obj:\n            return obj['expected']\n"
        "    return None\n"
    ),
    "forged_records_module": 'import os\nos.write(3, b\'{"i": 0, "ok": 2}\\n{"done": true}\\n\')\n',
    # While test k runs, claim the right output for test k + 1 (not run yet), then "done".
    "forged_records_call": (
        "import os\ndef f(x):\n"
        '    os.write(3, (\'{"i": %d, "ok": %d}\\n{"done": true}\\n\' % (x, 2 * x + 2)).encode())\n'
        "    return -1\n"
    ),
    "close_result_pipe": "import os\ndef f(x):\n    os.close(3)\n    while True:\n        pass\n",
    "garbage_on_pipe": "import os\ndef f(x):\n    os.write(3, b'\\xff' * 10 ** 6)\n    return -1\n",
    "raise_limits": (
        "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (10 ** 6, 10 ** 6))\n"
        "def f(x):\n    return x * 2\n"
    ),
    "ctypes_fork": "import ctypes\ndef f(x):\n    ctypes.CDLL(None).fork()\n    return x * 2 + 1\n",
    "keyboard_interrupt": "def f(x):\n    raise KeyboardInterrupt\n",
    "exit_in_del": (
        "import os\nclass D:\n    def __del__(self):\n        os._exit(1)\n"
        "def f(x):\n    D()\n    return x * 2 + 1\n"
    ),
}


@pytest.fixture(scope="module")
def box():
    with Sandbox(max_parallel=2) as sandbox:
        yield sandbox


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_answer_scores_zero_within_its_limit(box, name):
    start = time.monotonic()
    report = box.run_tests(HOSTILE[name], REF, TESTS, timeout_s=TIMEOUT)
    elapsed = time.monotonic() - start
    assert report.passed == 0, [r.status for r in report.results]
    assert elapsed < BOUND_S, f"{name} took {elapsed:.1f}s"
    # and the evaluator is still healthy afterwards
    assert box.run_tests(REF, REF, TESTS, timeout_s=TIMEOUT).success


def test_all_hostile_answers_in_one_batch(box):
    jobs = [(code, REF, TESTS) for code in HOSTILE.values()] + [(REF, REF, TESTS)]
    reports = box.run_tests_many(jobs, timeout_s=TIMEOUT)
    assert [r.passed for r in reports[:-1]] == [0] * len(HOSTILE)
    assert reports[-1].success


def test_no_file_is_written(box, tmp_path):
    target = tmp_path / "pwned.txt"
    os.chmod(tmp_path, 0o777)
    attempts = (
        f"open({str(target)!r}, 'w').write('x')",
        f"import os; os.open({str(target)!r}, os.O_CREAT | os.O_WRONLY)",
        f"import pathlib; pathlib.Path({str(target)!r}).touch()",
        f"import shutil; shutil.copy('/etc/hostname', {str(target)!r})",
        f"import os; os.mkdir({str(tmp_path / 'dir')!r})",
        f"import os; os.remove({str(Path(__file__))!r})",
    )
    for attempt in attempts:
        code = f"def f(x):\n    {attempt}\n    return x * 2\n"
        assert box.run_tests(code, REF, TESTS).passed == 0, attempt
    assert not target.exists() and not (tmp_path / "dir").exists()
    assert Path(__file__).exists()


def test_no_network(box):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.3)
    port = listener.getsockname()[1]
    code = (
        "import socket\ndef f(x):\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'hi')\n"
        "    return x * 2\n"
    )
    assert box.run_tests(code, REF, TESTS).passed == 0
    with pytest.raises(socket.timeout):
        listener.accept()
    listener.close()


def test_killing_the_test_process_is_refused(box):
    code = f"import os, signal\ndef f(x):\n    os.kill({os.getpid()}, signal.SIGKILL)\n    return x * 2\n"
    assert box.run_tests(code, REF, TESTS).passed == 0  # and we are still running


SECRET_REFERENCE = "def f(x):\n    return 'zq-' + 'secret-' + str(x) * 20\n"
_MEMORY_SCAN = """
import re
def f(x):
    pid = {pid}
    try:
        maps = open(f"/proc/{{pid}}/maps").read().splitlines()
        mem = open(f"/proc/{{pid}}/mem", "rb")
    except Exception as exc:
        return "blocked " + type(exc).__name__
    pattern = re.compile(b"zq-" + b"secret-" + str(x).encode() * 20)
    for line in maps:
        lo, hi = (int(v, 16) for v in line.split()[0].split("-"))
        if "rw" not in line.split()[1] or hi - lo > 1 << 28:
            continue
        try:
            mem.seek(lo)
            found = pattern.search(mem.read(hi - lo))
        except Exception:
            continue
        if found:
            return found.group().decode()
    return "not found"
"""


def test_parent_memory_is_out_of_reach(box):
    # The reference's outputs now sit in this process's memory (the reference cache).
    assert box.run_tests(SECRET_REFERENCE, SECRET_REFERENCE, ["f(7)"]).success
    scan = _MEMORY_SCAN.format(pid=os.getpid())
    # Control: the same scan, run as an ordinary child process, does find the secret.
    control = subprocess.run(
        [sys.executable, "-c", scan + "\nprint(f(7))"], capture_output=True, text=True, timeout=60
    )
    if "secret" not in control.stdout:
        pytest.skip(
            f"/proc/PID/mem is not readable here even without the sandbox: {control.stdout}"
        )
    report = box.run_tests(scan, SECRET_REFERENCE, ["f(7)"])
    assert report.passed == 0
    assert "secret" not in report.results[0].got


def test_killed_worker_is_replaced(box):
    assert box.run_tests(REF, REF, TESTS).success
    for zygote in list(box._zygotes.values()):
        zygote._proc.kill()
        zygote._proc.wait()
    assert box.run_tests("def f(x):\n    return x + x\n", REF, TESTS).success


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and os.uname().machine == "x86_64"),
    reason="the seccomp filter is Linux x86-64 only",
)
def test_seccomp_filter_alone_refuses_dangerous_syscalls(tmp_path):
    """The kernel filter works without the audit hook (which ctypes could get around)."""
    worker = Path(__file__).resolve().parents[2] / "sweetrl_gym" / "sandbox" / "_worker.py"
    probe = f"""
import importlib.util, os, socket
spec = importlib.util.spec_from_file_location("w", {str(worker)!r})
w = importlib.util.module_from_spec(spec)
spec.loader.exec_module(w)
assert w._install_seccomp()
results = {{}}
for name, attempt in [
    ("fork", lambda: os.fork()),
    ("exec", lambda: os.execv("/bin/true", ["true"])),
    ("socket", lambda: socket.socket()),
    ("write_file", lambda: open({str(tmp_path / "x")!r}, "w")),
    ("mkdir", lambda: os.mkdir({str(tmp_path / "d")!r})),
    ("kill_parent", lambda: os.kill(os.getppid(), 0)),
]:
    try:
        attempt()
        results[name] = "allowed"
    except PermissionError:
        results[name] = "refused"
    except OSError as exc:
        results[name] = "refused" if exc.errno in (1, 38) else repr(exc)
print(open(__file__ if False else {str(worker)!r}).read(10) and "read-ok", results)
"""
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "read-ok" in proc.stdout  # reading files still works
    for name in ("fork", "exec", "socket", "write_file", "mkdir", "kill_parent"):
        assert f"'{name}': 'refused'" in proc.stdout, proc.stdout
    assert not (tmp_path / "x").exists()
