"""The ``tbstats`` command line: thin commands over the library, which never prints or exits itself.

Exit codes:

- 0: success.
- 1: the command ran, but some inputs were rejected (listed on stderr and in ``--errors FILE``).
- 2: usage error: an unknown option, a bad value, a missing argument (click's own code).
- 3: invalid input in raise mode (the first problem is printed), or a file that cannot be read or written.

A new command takes its inputs with :func:`input_options` and :func:`load_inputs`, writes its table with
:func:`output_options` and :func:`emit`, and returns :func:`exit_code` of its load; its name and module go into
:data:`tbstats.cli.base.COMMAND_MODULES`, which imports a command's module only when the command is used.
"""

from tbstats.cli.base import EXIT_INVALID, EXIT_OK, EXIT_REJECTED, EXIT_USAGE, main, run

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_REJECTED", "EXIT_USAGE", "main", "run"]
