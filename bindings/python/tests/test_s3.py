"""smd.Hook writes to s3:// and create_trial reads s3:// trials, with the S3 settings given as
keyword arguments (the local, signature-checking server of scripts/s3-server.sh). Without
versitygw the test skips, except under CI=true, where it fails."""
import os
import subprocess
import uuid

import numpy as np
import pytest

import smd
import smd.exceptions as E
from smd.trials import create_trial
from conftest import REPO


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    state = tmp_path_factory.mktemp("s3-server")
    r = subprocess.run([str(REPO / "scripts" / "s3-server.sh"), "start", str(state)], capture_output=True, text=True)
    if r.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot start the S3 server: {r.stderr}")
        pytest.skip(f"no S3 server (scripts/s3-server.sh start: {r.stderr.strip()})")
    cfg = {}
    for line in (state / "env").read_text().splitlines():
        k, _, v = line.removeprefix("export ").partition("=")
        cfg[k] = v
    yield cfg
    subprocess.run([str(REPO / "scripts" / "s3-server.sh"), "stop", str(state)], capture_output=True)


def _opts(cfg):
    return dict(s3_endpoint=cfg["SMD_S3_ENDPOINT"], s3_region=cfg["SMD_S3_REGION"],
                s3_credentials=(cfg["SMD_S3_ACCESS_KEY"], cfg["SMD_S3_SECRET_KEY"]))


def test_hook_and_trial_on_s3_with_keyword_settings(s3, monkeypatch):
    for k in ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    uri = f"s3://{s3['SMD_S3_BUCKET']}/py-{uuid.uuid4().hex[:8]}/run"
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    with smd.Hook(uri, save_all=True, save_config=smd.SaveConfig(save_interval=1), **_opts(s3)) as h:
        for s in range(3):
            h.begin_step()
            h.save_tensor("w", data * s)
            h.save_scalar("loss", float(10 - s))
    # the retry settings go with the others (the same smd_storage_options)
    trial = create_trial(uri, s3_max_attempts=3, s3_backoff_ms=10, s3_stall_timeout_ms=20_000, **_opts(s3))
    assert trial.steps() == [0, 1, 2] and trial.has_ended()
    # smdebug's S3 index token is the object's key (no bucket)
    key_prefix = uri[len("s3://"):].partition("/")[2]
    assert trial.last_complete_step == 2
    assert trial.last_index_token == f"{key_prefix}/index/000000000/000000000002_worker_0.json"
    assert np.array_equal(trial.tensor("w").value(2), data * 2)
    assert trial.tensor("scalar/loss").value(1).tolist() == [9.0]
    wrong = dict(_opts(s3), s3_credentials=(s3["SMD_S3_ACCESS_KEY"], "not-the-secret"))
    with pytest.raises(E.SMDebugError):
        create_trial(uri, **wrong)
