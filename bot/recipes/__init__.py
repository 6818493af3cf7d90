"""The recipes repository model: load, render with provenance, edit."""
