"""Entry point for ``python -m dpviz``."""

import sys

from dpviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
