"""`python -m rackside`: the same as the `rackside` command."""

import sys

from rackside.cli import main

sys.exit(main())
