"""The platform's policy pack: rules in `rules.py`, run by Pulumi (`__main__.py`) or offline (`offline.py`)."""
