"""Whether a worker process keeps the memory it frees, for its next task to reuse.

A retrain allocates the same large arrays every time: the training set's matrices, every token's label scores
and marginals, each tens of megabytes. glibc's malloc serves a block that large with a mapping of its own and
unmaps it when it is freed, so every retrain faults in, and has the kernel zero, every page of them again. On
MEDDOCAN's 485 training records that was about a fifth of a warm retrain's training: building the training set
took 0.8-1.5 s in a pool process, against 0.3-0.5 s where the pages were already there. Told to take every
block from its heap and never to give the heap's top back (``mallopt``: ``M_MMAP_MAX`` 0, ``M_TRIM_THRESHOLD``
2 GiB), a process reuses the pages of its last task.

The price: a process holds the memory of its largest task until it ends, where it used to shrink back after
each one. The process that trains on those 485 records stays at about 900 MiB, where it went back to about
400 MiB; it reaches that peak during every retrain anyway. The worker ends idle pool processes
(``DEIDLOOP_WORKER_IDLE_SECONDS``), which gives it back. No Django here: read by ``config.celery``.
"""
from __future__ import annotations

import ctypes

#: ``mallopt``'s parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
#: The free memory at the heap's top above which it is given back after all (``mallopt`` takes an int).
TRIM_THRESHOLD = 2**31 - 1


def keep_freed_memory() -> str | None:
    """Have this process's malloc keep what it frees (see the module's docstring); None when it does, or why not
    (it is not glibc's, or refused a setting)."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "gnu_get_libc_version"):
        return "the C library is not glibc"
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    for name, parameter, value in (("M_MMAP_MAX", M_MMAP_MAX, 0),
                                   ("M_TRIM_THRESHOLD", M_TRIM_THRESHOLD, TRIM_THRESHOLD)):
        if mallopt(parameter, value) != 1:
            return f"glibc refused {name} = {value}"
    return None
