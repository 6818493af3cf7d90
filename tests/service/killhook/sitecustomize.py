"""Fault injection for the kill tests (on PYTHONPATH of a subprocess only): with
``RECIPE_SYNC_TEST_DIE_BEFORE_ENQUEUE=1`` the process SIGKILLs itself after the delivery is
recorded and before it is enqueued (the window a crash can hit)."""

import os
import signal

if os.environ.get("RECIPE_SYNC_TEST_DIE_BEFORE_ENQUEUE") == "1":
    from bot.service.runtime import Runtime

    def _die(self: object, delivery_ids: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    Runtime.enqueue_deliveries = _die  # type: ignore[method-assign]
