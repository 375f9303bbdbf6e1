"""Analyses over the graph model: placement, shapes, transfers, parallelism."""
