"""In-cluster components: one module per upstream project, wired in `platform.py`."""
