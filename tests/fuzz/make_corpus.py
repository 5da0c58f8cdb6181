#!/usr/bin/env python3
"""Regenerates the seed corpora under tests/fuzz/corpus/ from the fixture trials
(tests/data/trials, written by the real smdebug) and a few hook configurations:

    tests/fuzz/make_corpus.py

record_event      records of the fixtures' event files (framing included), 20 per trial
index_json        the fixtures' index files
collections_json  the fixtures' collections files
hook_config       JSON hook configurations in the shape SageMaker writes (FORMAT.md §12)
Seeds are named by the SHA-1 of their content, like libFuzzer's own corpus files."""
import hashlib
import json
import pathlib
import shutil
import struct

HERE = pathlib.Path(__file__).resolve().parent
TRIALS = HERE.parent / "data" / "trials"

HOOK_CONFIGS = [
    {"LocalPath": "/opt/ml/output/tensors", "S3OutputPath": "s3://bucket/prefix",
     "HookParameters": {"save_interval": "10", "include_regex": "relu|tanh", "save_all": "false"},
     "CollectionConfigurations": [{"CollectionName": "weights", "CollectionParameters": {}},
                                  {"CollectionName": "losses",
                                   "CollectionParameters": {"save_interval": "50"}}]},
    {"HookParameters": {"train.save_steps": "1,2, 3", "eval.save_interval": 5, "start_step": "2",
                        "end_step": 100, "reductions": "min,max,l2_norm,abs_mean",
                        "save_raw_tensor": True, "save_shape": False,
                        "include_workers": "all", "export_tensorboard": "true",
                        "tensorboard_dir": "/tmp/tb", "dry_run": True}},
    {"CollectionConfigurations": [{"CollectionName": "custom",
                                   "CollectionParameters": {"include_regex": "a.*,b",
                                                            "reductions": "mean",
                                                            "save_histogram": "False",
                                                            "predict.end_step": "7",
                                                            "global.save_interval": "3"}}]},
    {"HookParameters": None, "CollectionConfigurations": None},
    {"HookParameters": {}, "CollectionConfigurations": []},
    {"LocalPath": "/tmp/x", "HookParameters": {"save_all": True}},
]


def put(target, data):
    d = HERE / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def records(data):
    pos = 0
    while pos + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        end = pos + 12 + n + 4
        if end > len(data):
            return
        yield data[pos:end]
        pos = end


def main():
    shutil.rmtree(HERE / "corpus", ignore_errors=True)
    for trial in sorted(TRIALS.iterdir()):
        recs = [r for f in sorted(trial.rglob("*.tfevents")) for r in records(f.read_bytes())]
        for r in recs[:20]:
            put("record_event", r)
    for f in sorted(TRIALS.rglob("index/*/*.json")):
        put("index_json", f.read_bytes())
    for f in sorted(TRIALS.rglob("collections/*/*.json")):
        put("collections_json", f.read_bytes())
    for c in HOOK_CONFIGS:
        put("hook_config", json.dumps(c).encode())
    for t in sorted((HERE / "corpus").iterdir()):
        print(f"{t.name}: {len(list(t.iterdir()))} seeds")


if __name__ == "__main__":
    main()
