"""Shared by the benchmarks (bench_writer.py, bench_reader.py)."""
import os
import shutil
import subprocess
import sys


class FreshFilesystem:
    """A new ext4 file system in a loop-mounted image file on this machine's disk.

    File creation on a long-lived ext4 file system slows down by an order of magnitude after many
    recent deletions (inode allocation skips recently deleted inodes), which made the file-bound
    workloads depend on whatever ran before. Every side of the comparison runs here instead, on a
    clean file system of the same kind. Needs root; otherwise the plain folder is used."""

    def __init__(self, base):
        self.base, self.image, self.mnt, self.mounted = base, base + ".img", base + ".mnt", False

    def __enter__(self):
        if os.geteuid() == 0 and shutil.which("mkfs.ext4"):
            try:
                subprocess.run(["truncate", "-s", "24G", self.image], check=True)
                subprocess.run(["mkfs.ext4", "-q", "-F", self.image], check=True)
                os.makedirs(self.mnt, exist_ok=True)
                subprocess.run(["mount", "-o", "loop", self.image, self.mnt], check=True,
                               capture_output=True)
                self.mounted = True
                return self.mnt, "a fresh ext4 file system (loop image on this machine's disk)"
            except (subprocess.CalledProcessError, OSError) as e:
                print(f"note: no fresh file system ({e}); using {self.base}", file=sys.stderr)
                if os.path.exists(self.image):
                    os.remove(self.image)
        os.makedirs(self.base, exist_ok=True)
        return self.base, f"the folder {self.base}"

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(["umount", self.mnt], check=False)
            os.rmdir(self.mnt)
            os.remove(self.image)
