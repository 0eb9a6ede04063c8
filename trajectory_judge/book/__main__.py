"""``python -m trajectory_judge.book execute [--data DIR] [NOTEBOOK ...]`` or ``config --repository URL``."""

import sys

from trajectory_judge.book.build.execute_notebooks import main

sys.exit(main())
