"""Benchmarks: ``python -m bench.<name>`` prints figures and ratios against a reference
measured in the same run on the same machine."""
