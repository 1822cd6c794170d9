"""Benchmark, soak and fault scripts for volcano-ui (see README.md "Benchmarks").

These are scripts that print numbers; they are not part of the test command. The one exception is
``tests/bench_smoke/``, which runs the harness at a tiny scale for a few seconds so it cannot rot.
"""
