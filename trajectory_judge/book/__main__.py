"""``python -m trajectory_judge.book execute [--data DIR] [NOTEBOOK ...]`` or ``config --repository URL``."""

import sys

from trajectory_judge.book.execute import main

sys.exit(main())
