"""`python -m experiments.data fetch|verify SUITE [--cache DIR]` (make data): see fetch.py."""

import sys

from experiments.data.fetch import main

sys.exit(main())
