"""The ``tbstats`` command line: thin commands over the library, which never prints or exits itself.

Exit codes:

- 0: success.
- 1: the command ran, but some inputs were rejected (listed on stderr and in ``--errors FILE``).
- 2: usage error: an unknown option, a bad value, a missing argument (click's own code).
- 3: invalid input in raise mode (the first problem is printed), or a file that cannot be read or written.

A new command takes its inputs with :func:`~tbstats.cli.options.input_options` and runs over them with
:func:`~tbstats.cli.runs.streamed`, writes its table with :func:`~tbstats.cli.outputs.output_options` and
:func:`~tbstats.cli.outputs.emit`, and exits with :func:`~tbstats.cli.options.exit_code` of its run; its name
and module go into :data:`tbstats.cli.base.COMMAND_MODULES`, which imports a command's module only when the
command is used. A command's module imports click and light modules only (its ``--help`` must not wait for
polars, numpy or pyarrow): its body imports what it runs with.
"""

from tbstats.cli.base import EXIT_INVALID, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, main, run

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_REJECTED", "EXIT_USAGE", "main", "run"]
