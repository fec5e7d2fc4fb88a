"""`python3 -m stoker ARGS` runs the bundled `stoker` command (see _cli.py)."""
from ._cli import main

main()
