"""Differential testing of placelint against TensorFlow itself.

generate.py  seeded TF1-style graphs (Case)            oracle.py  TF's placement/transfers (TFResult)
corpus.py    both, built once and cached on disk       report.py  comparison, figures, thresholds
`python -m tests.differential.report` prints the figures; pytest runs test_differential.py.
"""
