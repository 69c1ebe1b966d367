"""Entry point of the policy pack: `pulumi preview --policy-pack policy`.

The CLI runs this file from policy/; the rules live beside it in the repo, so the repo
root goes on the path and the pack runs the very code the offline suite tests.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from policy.pack import serve

serve()
