"""Benchmarks: ``python -m bench.<name>`` prints figures and ratios measured in one run."""
