"""Seed knowledge (M0) that backends hand to the shared memory: data only, written for kernel-gym."""
