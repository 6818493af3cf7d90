"""One handler per event type (:data:`bot.service.dispatch.HANDLERS`): each records intent
atomically in the store and enqueues at most one sync per PR, and returns a one-line
account for the delivery log."""
