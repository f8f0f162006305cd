"""`python -m spikeforge <subcommand> ...`: the spikeforge command line (docs/cli.md)."""

import sys

from ._spikeforge import cli_main

if __name__ == "__main__":
    sys.exit(cli_main(["spikeforge"] + sys.argv[1:]))
