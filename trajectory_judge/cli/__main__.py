"""``python -m trajectory_judge.cli VERB ...``: the ``trajectory-judge`` command."""

import sys

from trajectory_judge.cli import main

sys.exit(main())
