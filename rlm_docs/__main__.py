"""`python -m rlm_docs` runs the CLI."""

import sys

from rlm_docs.cli import main

sys.exit(main())
