"""`python -m router_oracle ...` = `router-oracle ...`."""

import sys

from router_oracle.cli import main

sys.exit(main())
