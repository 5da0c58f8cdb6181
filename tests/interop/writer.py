"""Writes one trial of cases.py with the real smdebug: python writer.py CASE OUT_DIR.

Run with PYTHONHASHSEED=0 (conftest.py does) so that smdebug's set iteration, and so its output,
is the same on every run.
"""
import os
import sys

if __name__ == "__main__":
    name, out = sys.argv[1:3]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cases

    cases.CASES[name](out)
