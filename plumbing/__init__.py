"""The plumbing every in-cluster component shares and that installs nothing of its own: the
base of a component (a pinned chart, tree or release manifest from the stack's sources, the
transforms and the record the offline tools read), how a component's Installation is found,
what one component makes ready for another, the objects that tie two, the image rewrite and
the guard of chart overlays. It names no component (tests/test_architecture.py)."""
