"""``python -m tbstats``: the command line, as the ``tbstats`` script."""

from tbstats.cli import run

if __name__ == "__main__":
    run()
