"""Benchmark scripts: timings and accuracy against peer libraries, run from the repository root
as ``python -m bench.NAME`` (``docs/benchmarks.md`` lists them with their current figures)."""
