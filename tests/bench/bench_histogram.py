"""One TensorBoard histogram of N float32 values: smd (bench_histogram) next to smdebug.

    SMD_BUILD_DIR=build .venv/bin/python tests/bench/bench_histogram.py [N] [REPEATS]

smdebug's time is its FileWriter.write_histogram_summary path minus the queue: histogram_summary()
(numpy.histogram over the default buckets, trimming, HistogramProto) plus serializing the Event.
"""
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SMD_BUILD_DIR", REPO / "build"))


def smdebug_ms(values, repeats):
    from smdebug.core.tfevent.proto.event_pb2 import Event
    from smdebug.core.tfevent.summary import _get_default_bins, histogram_summary

    bins = _get_default_bins()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = histogram_summary("bench/values", values, bins)
        Event(wall_time=1.0, step=0, summary=s).SerializeToString()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[0], times[len(times) // 2]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rng = np.random.default_rng(0)
    values = rng.normal(size=n).astype(np.float32)
    best, median = smdebug_ms(values, repeats)
    print(f"smdebug: histogram of {n} float32: best {best:.3f} ms, median {median:.3f} ms ({repeats} runs)")
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([str(BUILD / "tests" / "bench" / "bench_histogram"), d, str(n), str(repeats)],
                             check=True, capture_output=True, text=True).stdout.strip()
    print(f"smd:     {out}")


if __name__ == "__main__":
    main()
