"""The Celery application; tasks are discovered in the Django apps."""
import logging
import os

from celery import Celery, signals

from config import memory, sizing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("deidloop")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_init.connect
def _yield_to_the_web(**kwargs) -> None:
    """The worker's main process lowers its CPU priority before it starts its pool, whose processes (those the
    autoscaler adds later too) inherit it (``config.sizing.worker_nice``)."""
    increment = sizing.worker_nice()
    if increment:
        os.nice(increment)


@signals.worker_init.connect
@signals.worker_process_init.connect
def _one_blas_thread(**kwargs) -> None:
    """The worker's processes use ``config.sizing.worker_blas_threads`` BLAS threads: the libraries loaded already
    are limited (threadpoolctl), and one loaded later reads the environment, which the pool processes inherit
    from the main one. Each process logs what its libraries then say they use."""
    from threadpoolctl import threadpool_info, threadpool_limits

    threads = sizing.worker_blas_threads()
    os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    threadpool_limits(limits=threads, user_api="blas")
    used = [f"{lib['internal_api']} {lib['num_threads']}" for lib in threadpool_info() if lib["user_api"] == "blas"]
    logging.getLogger(__name__).info("BLAS threads of process %s: %s", os.getpid(), ", ".join(used) or "none loaded")


@signals.worker_process_init.connect
def _keep_freed_memory(**kwargs) -> None:
    """Each pool process keeps the memory it frees for its next task, unless the sizing says not to
    (``config.memory``), and logs which."""
    if sizing.worker_keeps_freed_memory():
        refused = memory.keep_freed_memory()
    else:
        refused = "DEIDLOOP_WORKER_KEEP_FREED_MEMORY=0"
    logging.getLogger(__name__).info("Freed memory of process %s: %s", os.getpid(),
                                     "kept for its next task" if refused is None else f"given back ({refused})")


_collection: memory.IdleCollection | None = None


@signals.worker_process_init.connect
def _collect_when_idle(**kwargs) -> None:
    """Each pool process collects its reference cycles in full while it is idle, rather than the interpreter
    doing so in the middle of its tasks, after preparing the next fit of a model it trained
    (``config.memory.IdleCollection``)."""
    global _collection
    _collection = memory.IdleCollection(work=[_prepare_next_fit]).start()


def _prepare_next_fit() -> bool:
    """Idle work: the newest model this process trained prepares the next retrain's fit from it
    (``learning.services.model_store.prepare_next_fit``)."""
    from learning.services.model_store import prepare_next_fit

    return prepare_next_fit()


@signals.task_prerun.connect
def _task_started(**kwargs) -> None:
    if _collection is not None:
        _collection.started()


@signals.task_postrun.connect
def _task_ended(**kwargs) -> None:
    if _collection is not None:
        _collection.ended()
