"""``python -m dpsynth``: the command line (:mod:`dpsynth.cli`)."""

import sys

from dpsynth.cli import main

if __name__ == "__main__":
    sys.exit(main())
