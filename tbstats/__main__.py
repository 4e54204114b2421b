"""``python -m tbstats``: the command line, as the ``tbstats`` script."""

from tbstats.cli import main

if __name__ == "__main__":
    main(prog_name="tbstats")
