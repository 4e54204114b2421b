"""The ``tbstats`` click group, exit codes and the error-to-exit-code conversion."""

from __future__ import annotations

from typing import Any, Final

import click

from tbstats import __version__
from tbstats.errors import TbstatsError

EXIT_OK: Final = 0
EXIT_REJECTED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INVALID: Final = 3
#: At most this many problems are printed on stderr; ``--errors FILE`` has them all.
SHOWN_PROBLEMS: Final = 10

EPILOG: Final = """\b
Exit codes:
  0  success
  1  the command ran, but some inputs were rejected (see --errors FILE)
  2  usage error (unknown option, bad value, missing argument)
  3  invalid input in raise mode, or a file that cannot be read or written
"""



class _Group(click.Group):
    """A click group that turns tbstats errors into a message on stderr and exit code 3."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TbstatsError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(EXIT_INVALID)
        except OSError as exc:
            name = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"Error: {name}{exc.strerror or exc}", err=True)
            ctx.exit(EXIT_INVALID)


@click.group(cls=_Group, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="tbstats")
def main() -> None:
    """Vectorised chess tie-break analytics over archives of tournaments (TRF, Parquet, Arrow, CSV)."""
