"""Output formats for ``check``: each module renders a list of ``ModelReport``s."""
