"""The webhook web app: signature check, allow-list, dedupe, enqueue; health and metrics."""
