"""The peak resident memory of a fit or a job, in a process that may run many of them, and the
memory the machine has available for the next."""

import re
import resource
from pathlib import Path


def reset_peak_rss() -> None:
    """Start a new peak of this process's resident memory (Linux: writing 5 to
    /proc/self/clear_refs resets VmHWM, proc(5)); elsewhere a no-op."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    """Peak resident memory (MiB) since the last reset_peak_rss: VmHWM of /proc/self/status.
    Where there is none, getrusage's ru_maxrss (KiB), the peak since the process started."""
    try:
        status = Path("/proc/self/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
    except (OSError, AttributeError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def available_mb() -> float:
    """Memory (MiB) available to a new allocation: MemAvailable of /proc/meminfo (Linux);
    infinite where there is none."""
    try:
        meminfo = Path("/proc/meminfo").read_text()
        return int(re.search(r"MemAvailable:\s+(\d+) kB", meminfo).group(1)) / 1024
    except (OSError, AttributeError):
        return float("inf")
