"""Option families shared by the commands, each defined once: inputs, batches, rules, tie-break lists and
configurations (the output and report families are in :mod:`tbstats.cli.outputs`).

Declared with click and light modules only (``tbstats CMD --help`` imports neither polars, numpy nor pyarrow);
what a command then does with the values it was given is in :mod:`tbstats.cli.runs`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast, overload

import click

from tbstats.cli.base import EXIT_OK, EXIT_REJECTED
from tbstats.errors import TbstatsError
from tbstats.io import kinds
from tbstats.io.kinds import MAX_MEMBER_BYTES
from tbstats.model.rules import EDITIONS, check_edition
from tbstats.run import sizing

if TYPE_CHECKING:
    from tbstats.engine.configs import Config
    from tbstats.io.sources import OnError

F = TypeVar("F", bound=Callable[..., Any])

# ----------------------------------------------------------------------------------------------- inputs

@dataclass(frozen=True)
class Inputs:
    """The input arguments and options of a command."""

    paths: tuple[str, ...]
    on_error: OnError | None = None
    errors: str | None = None
    quiet: bool = False
    max_member_bytes: int = MAX_MEMBER_BYTES
    warnings: str | None = None

    @property
    def mode(self) -> OnError:
        """``--on-error``, else raise for a single file and collect for anything that may hold many."""
        if self.on_error is not None:
            return self.on_error
        if len(self.paths) == 1:
            path = self.paths[0]
            single = os.path.isfile(path) or not (os.path.exists(path) or kinds.is_pattern(path))
            if single and not kinds.is_archive(path):
                return "raise"
        return "collect"


def input_options(f: F) -> F:
    """Add ``INPUT...`` arguments and ``--on-error``, ``--errors FILE``, ``--quiet``; pass ``inputs``."""

    @functools.wraps(f)
    def wrapper(*args: Any, paths: tuple[str, ...], on_error: OnError | None, errors: str | None,
                quiet: bool, max_member_bytes: int, warnings: str | None, **kwargs: Any) -> Any:
        return f(*args, inputs=Inputs(paths, on_error, errors, quiet, max_member_bytes, warnings), **kwargs)

    options = [
        click.argument("paths", nargs=-1, required=True, metavar="INPUT..."),
        click.option("--on-error", type=click.Choice(["raise", "collect"]), default=None,
                     help="raise: stop at the first problem (exit 3); collect: skip bad files, list them and "
                          "exit 1. Default: raise for a single file, collect otherwise."),
        click.option("--errors", type=click.Path(dir_okay=False, writable=True), default=None,
                     metavar="FILE", help="Write every problem as CSV (path,line,column,reason)."),
        click.option("--warnings", type=click.Path(dir_okay=False, writable=True), default=None,
                     metavar="FILE", help="Write every reader warning as CSV (source,line,field,message)."),
        click.option("-q", "--quiet", is_flag=True,
                     help="No progress bar, problem list or closing count on stderr."),
        click.option("--max-member-bytes", type=click.IntRange(min=1), default=MAX_MEMBER_BYTES,
                     show_default=True, metavar="N",
                     help="Reject an archive member larger than N bytes once decompressed."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


# ---------------------------------------------------------------------------------- batches and workers

#: Tournaments per batch by default: a few hundred MB at most for the usual event sizes.
BATCH_SIZE: Final = 2000


@dataclass(frozen=True)
class Batches:
    """How an archive is cut and where its batches run."""

    size: int = BATCH_SIZE
    files: int = 2000
    workers: int = 1
    scheduler: str | None = None


def batch_options(f: F) -> F:
    """Add ``--batch-size``, ``--batch-files``, ``--workers`` and ``--scheduler``; pass ``batches``."""

    @functools.wraps(f)
    def wrapper(*args: Any, batch_size: int, batch_files: int, workers: int, scheduler: str | None,
                **kwargs: Any) -> Any:
        return f(*args, batches=Batches(batch_size, batch_files, workers, scheduler), **kwargs)

    options = [
        click.option("--batch-size", type=click.IntRange(min=1), default=BATCH_SIZE, show_default=True,
                     metavar="N", help="Tournaments per batch: memory grows with it, the output does not change."),
        click.option("--batch-files", type=click.IntRange(min=1), default=2000, show_default=True, metavar="N",
                     help="TRF files read at a time (then cut into batches of --batch-size tournaments)."),
        click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
                     help="Parts at once: TRF files read by N-1 worker processes and this one (with 2, from "
                          f"{sizing.PAIR_FILES:,} files or {sizing.PAIR_BYTES >> 20} MiB of them: fewer are read as "
                          "with 1), a columnar model on N threads; "
                          "with 1, the next part is read on a thread while one is computed (the output does not "
                          "change)."),
        click.option("--scheduler", default=None, metavar="ADDRESS|local[:N]",
                     help="Run the batches on Dask: the address of a running scheduler (tcp://host:8786), or "
                          "local:N for a local cluster of N worker processes (needs tbstats[dask])."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


def exit_code(rejected: int) -> int:
    """1 when some inputs were rejected, else 0."""
    return EXIT_REJECTED if rejected else EXIT_OK


# ------------------------------------------------------------------------------------------- tie-breaks

@dataclass(frozen=True)
class Engine:
    """Rule options shared by the commands that compute tie-breaks."""

    rules: str
    force_type: str | None
    after_round: int | None
    unrated_rating: int | None

    def context(self) -> dict[str, object]:
        """The :func:`tbstats.engine.compute.make_context` options these rules set."""
        return {"force_type": self.force_type, "after_round": self.after_round,
                "unrated_rating": self.unrated_rating}


@overload
def engine_options(f: F, *, rules: str = ..., events: bool = ...) -> F: ...
@overload
def engine_options(f: None = None, *, rules: str = ..., events: bool = ...) -> Callable[[F], F]: ...
def engine_options(f: F | None = None, *, rules: str = "fide-2026", events: bool = True) -> F | Callable[[F], F]:
    """Add ``--rules``, ``--swiss/--round-robin``, ``--after-round`` and ``--unrated-rating``; pass ``engine``.

    Every command that ranks takes this family (``rules``: the default edition, ``auto`` for audit;
    ``events=False`` leaves out the options about real events, for ``simulate``).
    """
    if f is None:
        return cast("Callable[[F], F]", functools.partial(engine_options, rules=rules, events=events))

    @functools.wraps(f)
    def wrapper(*args: Any, rules: str, unrated_rating: int | None, force_type: str | None = None,
                after_round: int | None = None, **kwargs: Any) -> Any:
        try:
            edition = check_edition(rules)
        except TbstatsError as exc:
            raise click.BadParameter(str(exc), param_hint="--rules") from None
        return f(*args, engine=Engine(edition, force_type, after_round, unrated_rating), **kwargs)

    options = [
        click.option("--rules", default=rules, show_default=True, metavar="EDITION",
                     help="Rule edition: " + ", ".join(EDITIONS) + " (auto: by each tournament's start date)."),
        click.option("--swiss", "force_type", flag_value="swiss", default=None,
                     help="Treat every event as a Swiss (C.07 16), whatever was detected."),
        click.option("--round-robin", "force_type", flag_value="round_robin",
                     help="Treat every event as pre-determined pairings (C.07 15.2)."),
        click.option("--after-round", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Standings after round N (default: every round with results)."),
        click.option("--unrated-rating", type=click.IntRange(min=1), default=None, metavar="R",
                     help="Rating for unrated players in rating tie-breaks (C.07 10); without it, "
                          "rating tie-breaks are undefined in events with unrated players."),
    ]
    if not events:
        options = [options[0], options[-1]]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


# ------------------------------------------------------------------------------------------ tie-break lists

#: ``-t/--tiebreaks`` value meaning each tournament's own 202/212 list.
FROM_FILE_LIST: Final = "from-file"


def tiebreaks_option(*, default: str | None = None, one: bool = False) -> Callable[[F], F]:
    """``-t/--tiebreaks``: an ordered list of specs or ``from-file`` (one spec for ``explain``).

    The command receives the text (``specs``) and parses it with the registry it needs (individual or
    team) through :func:`tbstats.cli.runs.spec_list`, a usage error when it does not parse; ``--tiebreak`` is kept as a
    hidden spelling.
    """
    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, specs: str | None, specs_alias: str | None, **kwargs: Any) -> Any:
            text = specs if specs is not None else specs_alias if specs_alias is not None else default
            if text is None:
                raise click.UsageError("Missing option '-t' / '--tiebreaks'.")
            return f(*args, specs=text, **kwargs)

        metavar = "SPEC" if one else "from-file|SPEC[,SPEC...]"
        help_text = ("The tie-break, e.g. BH/C1 (see `tbstats tiebreaks`)." if one else
                     "Ordered tie-breaks, e.g. 'BH/C1,BH,SB,DE,WIN' (see `tbstats tiebreaks`), or from-file: "
                     "each tournament's own 202/212 list.")
        if default is not None:
            help_text += f"  [default: {default}]"
        wrapper = click.option("--tiebreak", "specs_alias", default=None, hidden=True)(wrapper)
        wrapper = click.option("-t", "--tiebreaks", "specs", default=None, metavar=metavar, help=help_text)(wrapper)
        return cast(F, wrapper)

    return decorate


# ------------------------------------------------------------------------------------------ configurations

@dataclass(frozen=True)
class Configs:
    """``-c NAME=[EDITION:]SPECS`` (repeatable) and ``--configs FILE``, parsed once the edition is known."""

    texts: tuple[str, ...]
    file: str | None

    def parse(self, rules: str = "fide-2026") -> list[Config]:
        """The configurations; one without an EDITION uses ``rules``. A malformed one is a usage error."""
        from tbstats.engine.configs import parse_config, read_configs

        out = []
        for text in self.texts:
            name, eq, rest = text.partition("=")
            written = text if not eq or ":" in rest.split(",")[0] else f"{name}={rules}:{rest}"
            try:
                out.append(parse_config(written))
            except TbstatsError as exc:
                raise click.BadParameter(str(exc), param_hint="-c/--config") from None
        try:
            return out + (read_configs(self.file) if self.file else [])
        except TbstatsError as exc:
            raise click.BadParameter(str(exc), param_hint="--configs") from None


def config_options(f: F) -> F:
    """Add ``-c/--config NAME=[EDITION:]SPECS`` (repeatable) and ``--configs FILE``; pass ``configs``."""

    @functools.wraps(f)
    def wrapper(*args: Any, config_texts: tuple[str, ...], config_file: str | None, **kwargs: Any) -> Any:
        return f(*args, configs=Configs(config_texts, config_file), **kwargs)

    def check(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
        Configs(value, None).parse()
        return value

    options = [
        click.option("-c", "--config", "config_texts", multiple=True, metavar="NAME=[EDITION:]SPECS", callback=check,
                     help="A configuration, e.g. old=fide-2024:BH/C1,BH,SB,DE,WIN (repeatable). EDITION may be "
                          "auto (default: --rules); SPECS may be from-file (each tournament's own 202/212 list)."),
        click.option("--configs", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
                     metavar="FILE", help="Configurations from a TOML file ([configs] name = \"EDITION:SPECS\")."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


# ------------------------------------------------------------------------------------------------- teams

@dataclass(frozen=True)
class Teams:
    """``--teams`` and ``--team-pab MP:GP`` (team events, rules.md Section 9)."""

    on: bool
    pab: tuple[Fraction, Fraction] | None


def team_options(f: F) -> F:
    """Add ``--teams`` and ``--team-pab MP:GP``; pass ``teams``."""

    @functools.wraps(f)
    def wrapper(*args: Any, teams_flag: bool, team_pab: str | None, **kwargs: Any) -> Any:
        pab = None
        if team_pab is not None:
            try:
                mp, gp = (Fraction(x) for x in team_pab.split(":"))
            except (ValueError, ZeroDivisionError):   # not two numbers, or a fraction over 0
                raise click.BadParameter(f"{team_pab!r} is not MP:GP, e.g. 1:3", param_hint="--team-pab") from None
            pab = (mp, gp)
        return f(*args, teams=Teams(teams_flag, pab), **kwargs)

    wrapper = click.option("--team-pab", default=None, metavar="MP:GP",
                           help="Score a team's round without opponent that no 320/240 record marks as a team "
                                "PAB worth MP:GP when it is the round's only such team (files without 320).")(wrapper)
    wrapper = click.option("--teams", "teams_flag", is_flag=True,
                           help="Team standings: one row per team (team events, C.07 11-13).")(wrapper)
    return cast(F, wrapper)
