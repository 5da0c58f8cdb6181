"""smd and the real smdebug (boto3) read each other's trials on the same S3 server.

The server is the signature-checking local one of scripts/s3-server.sh: the one whose env file
SMD_S3_ENV_FILE names (scripts/test.sh starts it), else one this module starts and stops itself.
Both sides get the server through the AWS variables they read: AWS_ENDPOINT_URL_S3 (boto3 >= 1.28
and smd), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION. Without versitygw the tests skip,
except under CI=true, where they fail.
"""
import os
import pathlib
import subprocess
import uuid

import pytest

from conftest import REPO, reference_dump, run_oracle, run_smd, run_smd_scenario
from scenarios import BYTE_IDENTICAL

SERVER = REPO / "scripts" / "s3-server.sh"


def _read_env(path):
    env = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith("export "):
            line = line[len("export "):]
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    return env


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """The server's settings; the AWS variables point this process and its children at it."""
    started = None
    env_file = os.environ.get("SMD_S3_ENV_FILE")  # empty: this module starts its own
    if not env_file:
        state = tmp_path_factory.mktemp("s3-server")
        r = subprocess.run([str(SERVER), "start", str(state)], capture_output=True, text=True)
        if r.returncode != 0:
            if os.environ.get("CI") == "true":
                pytest.fail(f"cannot start the S3 server: {r.stderr}")
            pytest.skip(f"no S3 server (scripts/s3-server.sh start: {r.stderr.strip()})")
        started = state
        env_file = state / "env"
    cfg = _read_env(env_file)
    saved = {k: os.environ.get(k) for k in (
        "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
        "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_EC2_METADATA_DISABLED")}
    os.environ.update({
        "AWS_ENDPOINT_URL_S3": cfg["SMD_S3_ENDPOINT"],
        "AWS_ACCESS_KEY_ID": cfg["SMD_S3_ACCESS_KEY"],
        "AWS_SECRET_ACCESS_KEY": cfg["SMD_S3_SECRET_KEY"],
        "AWS_REGION": cfg["SMD_S3_REGION"],
        "AWS_DEFAULT_REGION": cfg["SMD_S3_REGION"],
        "AWS_EC2_METADATA_DISABLED": "true",
    })
    for k in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
        os.environ.pop(k, None)
    yield cfg
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    if started is not None:
        subprocess.run([str(SERVER), "stop", str(started)], capture_output=True)


def _uri(cfg, name):
    return f"s3://{cfg['SMD_S3_BUCKET']}/interop-{uuid.uuid4().hex[:10]}/{name}"


def _run_all(name, out, runner, tmp_path):
    """Runs every script of scenario `name` into out (a folder or an s3:// URI)."""
    for i, script in enumerate(BYTE_IDENTICAL[name]()):
        path = tmp_path / f"{i}_{abs(hash(str(out)))}.script"
        path.write_text(script.text(out), encoding="utf-8")
        runner(path)


def _smd_dump(smd_bin, path):
    code, out, err = run_smd(smd_bin, "dump", path)
    assert code == 0, f"smd dump {path} failed ({code}):\n{err}"
    return out


SCENARIOS = ["dtypes", "modes", "workers"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_smdebug_reads_what_smd_wrote_to_s3(s3, name, smd_scenario_bin, smd_bin, tmp_path):
    """The real smdebug reads a trial smd wrote to S3 and answers as for a local copy."""
    uri = _uri(s3, name)
    local = tmp_path / "local"
    for out in (uri, local):
        _run_all(name, out, lambda p: run_smd_scenario(smd_scenario_bin, p), tmp_path)
    from_s3 = reference_dump(uri)
    assert from_s3 == reference_dump(local)
    # And smd's own reader of the S3 trial answers as for the local copy too.
    assert _smd_dump(smd_bin, uri) == _smd_dump(smd_bin, local)


@pytest.mark.parametrize("name", SCENARIOS)
def test_smd_reads_what_smdebug_wrote_to_s3(s3, name, smd_bin, tmp_path):
    """smd reads a trial the real smdebug's hook wrote to S3 (through boto3) as its local twin."""
    uri = _uri(s3, name)
    local = tmp_path / "local"
    for out in (uri, local):
        _run_all(name, out, run_oracle, tmp_path)
    assert _smd_dump(smd_bin, uri) == _smd_dump(smd_bin, local)


def test_many_workers_one_prefix_while_a_reader_follows(s3, smd_scenario_bin, smd_bin, tmp_path):
    """N writer processes, torchrun-style (RANK / WORLD_SIZE, no worker option), write one job
    under one S3 prefix while a reader follows it; every worker's every step is read back."""
    import hashlib
    import json
    import time

    import numpy as np

    from conftest import LIBSMD
    import smdlib

    n_workers, n_steps = 4, 12
    uri = _uri(s3, "workers")

    def value(rank, step):
        return np.arange(6, dtype=np.float32) + np.float32(rank * 1000 + step)

    # Every worker writes the end marker when it closes (as smdebug's): a reader that opens the
    # job after one worker closed and before another saved its collections file is told that the
    # job ended without all of them. The workers close only once the reader has opened the job.
    gate = tmp_path / "reader-opened"
    procs = []
    for rank in range(n_workers):
        lines = ["option\tsave_config\tall\t1\t0\t-\t-", "option\tsave_all\t1",
                 "option\tinclude_workers\tall", f"create\t{uri}"]
        for step in range(n_steps):
            lines.append("step")
            lines.append("tensor\tw\tfloat32\t2x3\t" + value(rank, step).tobytes().hex())
        lines.append(f"await\t{gate}")
        lines.append("close")
        script = tmp_path / f"rank{rank}.script"
        script.write_text("\n".join(lines) + "\n")
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(n_workers))
        procs.append(subprocess.Popen([str(smd_scenario_bin), str(script)], env=env,
                                      stderr=subprocess.PIPE, text=True))

    # The reader: opens the running job (waiting for its collections file) and follows it until
    # every step is complete, by polling (S3 cannot notify).
    lib = smdlib.Lib(LIBSMD)
    with lib.open(uri, collection_wait_ms=60000) as t:
        gate.touch()
        t.wait_for_steps(list(range(n_steps)), timeout_ms=120000)
        for p in procs:
            assert p.wait(timeout=120) == 0, p.stderr.read()
        t.refresh()
        assert t.steps() == list(range(n_steps))

    doc = json.loads(_smd_dump(smd_bin, uri))
    assert doc["workers"] == [f"worker_{r}" for r in range(n_workers)]
    at = doc["tensors"]["w"]["at"]
    for step in range(n_steps):
        workers = at[str(step)]["workers"]
        assert sorted(workers) == [f"worker_{r}" for r in range(n_workers)], step
        for rank in range(n_workers):
            got = workers[f"worker_{rank}"]["value"]
            assert got["sha256"] == hashlib.sha256(value(rank, step).tobytes()).hexdigest(), \
                (step, rank)


def test_many_workers_under_mpirun_while_a_reader_follows(s3, smd_scenario_bin, smd_bin, tmp_path):
    """N writer processes started by OpenMPI's mpirun (worker names and count from
    OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE), paced, write one job under one S3 prefix; a
    reader follows the prefix WHILE they write (it reads the first steps before the writers are
    done), and every worker's every step is read back with its value."""
    import hashlib
    import json
    import shutil
    import time

    import numpy as np

    from conftest import LIBSMD
    import smdlib

    mpirun = shutil.which("mpirun")
    if mpirun is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mpirun not found (scripts/setup.sh installs openmpi-bin)")
        pytest.skip("mpirun not found (apt-get install openmpi-bin)")
    n_workers, n_steps, pace_ms = 4, 10, 250
    uri = _uri(s3, "mpirun")

    def value(rank, step):
        return np.arange(6, dtype=np.float32) + np.float32(rank * 1000 + step)

    gate = tmp_path / "reader-followed"
    for rank in range(n_workers):
        lines = ["option\tsave_config\tall\t1\t0\t-\t-", "option\tsave_all\t1",
                 "option\tinclude_workers\tall", f"create\t{uri}"]
        for step in range(n_steps):
            lines.append("step")
            lines.append("tensor\tw\tfloat32\t2x3\t" + value(rank, step).tobytes().hex())
            lines.append(f"sleep\t{pace_ms}")
        lines.append(f"await\t{gate}")  # close (and its end marker) once the reader has followed
        lines.append("close")
        (tmp_path / f"rank{rank}.script").write_text("\n".join(lines) + "\n")
    # Each process runs the script of its rank; the hook takes its worker name and the worker
    # count from OpenMPI's variables (no worker option in the scripts).
    launcher = tmp_path / "rank.sh"
    launcher.write_text(f'#!/bin/sh\nexec "{smd_scenario_bin}" "{tmp_path}/rank$OMPI_COMM_WORLD_RANK.script"\n')
    launcher.chmod(0o755)
    env = dict(os.environ)
    for k in ("RANK", "WORLD_SIZE", "HOROVOD_RANK", "HOROVOD_SIZE", "PMI_RANK", "PMI_SIZE"):
        env.pop(k, None)
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(n_workers)]
    for k in ("AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
              "AWS_DEFAULT_REGION", "AWS_EC2_METADATA_DISABLED"):
        cmd += ["-x", k]
    proc = subprocess.Popen(cmd + [str(launcher)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)

    lib = smdlib.Lib(LIBSMD)
    seen_while_writing = []
    try:
        with lib.open(uri, collection_wait_ms=60000) as t:
            for step in range(n_steps):
                if step == n_steps - 1:
                    gate.touch()  # the last step is complete when the workers end the job
                t.wait_for_steps([step], timeout_ms=120000)
                seen_while_writing.append(proc.poll() is None)
            out, _ = proc.communicate(timeout=120)
            assert proc.returncode == 0, out
            t.refresh()
            assert t.steps() == list(range(n_steps))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The reader followed the job: it had the first steps while the writers were still at work.
    assert seen_while_writing[0], "the reader saw nothing before the writers had finished"

    doc = json.loads(_smd_dump(smd_bin, uri))
    assert doc["workers"] == [f"worker_{r}" for r in range(n_workers)]
    at = doc["tensors"]["w"]["at"]
    for step in range(n_steps):
        workers = at[str(step)]["workers"]
        assert sorted(workers) == [f"worker_{r}" for r in range(n_workers)], step
        for rank in range(n_workers):
            got = workers[f"worker_{rank}"]["value"]
            assert got["sha256"] == hashlib.sha256(value(rank, step).tobytes()).hexdigest(), \
                (step, rank)
