"""Durable jobs: the queue (Huey), the state store (SQLAlchemy), delivery dispatch, the sync
job that calls the alignment engine, and the reconciler that resumes interrupted syncs."""
