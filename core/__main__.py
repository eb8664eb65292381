"""``python -m core ...``: every LeakLens task, headless."""

import sys

from core.cli import main

if __name__ == "__main__":
    sys.exit(main())
