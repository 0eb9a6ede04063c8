"""``python -m trajectory_judge.book execute [--data DIR] [--jobs N] [NOTEBOOK ...]`` or ``config --repository URL``."""

import sys

from trajectory_judge.book.building.execute_notebooks import main

if __name__ == "__main__":  # the execute step's worker processes import this module again
    sys.exit(main())
