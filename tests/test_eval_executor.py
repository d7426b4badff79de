import threading
import time

import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.eval.executor import ThreadExecutor


def test_thread_executor_is_bounded_and_returns_everything():
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def work(i: int) -> int:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.01)
        with lock:
            state["now"] -= 1
        return i * i

    out = list(ThreadExecutor(3).map_unordered(work, range(20)))
    assert sorted(out) == [i * i for i in range(20)]
    assert state["peak"] <= 3


def test_task_errors_propagate_and_bad_worker_count_is_rejected():
    def boom(i: int) -> int:
        raise ValueError(f"bad {i}")

    with pytest.raises(ValueError, match="bad"):
        list(ThreadExecutor(2).map_unordered(boom, [1, 2]))
    with pytest.raises(ConfigError, match="--workers"):
        ThreadExecutor(0)
