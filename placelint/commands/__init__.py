"""One module per CLI command; each registers itself on ``placelint.cli.app``."""
