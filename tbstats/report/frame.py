"""The frame every page shares: header, headline cards, navigation, the page's own sections, then what went into
it (the ``Inputs`` section, from a :class:`tbstats.run.account.Account`) and how it was made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tbstats import __version__
from tbstats.report.page import _CSS, Cell, Section, _e, _path, _plural, _row, _table
from tbstats.run.account import Account


@dataclass(frozen=True)
class About:
    """What a page was made from: the command line, the account of its inputs, and a date only on request.

    Pages carry no date unless ``date`` is given, so identical inputs give byte-identical pages.
    """

    command: str | None = None
    account: Account | None = None
    date: str | None = None


#: Inputs, rejected and skipped files listed by name on the page; the rest are counted.
LISTED_INPUTS: Final = 12
LISTED_FILES: Final = 20


def _more(total: int, what: str, where: str) -> str:
    """The note under a list cut to :data:`LISTED_FILES` rows: how many are shown, and where the rest are."""
    shown = f"Showing the first {LISTED_FILES:,} of {total:,} {what}; " if total > LISTED_FILES else ""
    return f'<p class="note">{shown}{where}.</p>'


def _full_list(option: str, file: str | None, what: str) -> str:
    """Where the full list is: the file it was written to, or the option that writes it."""
    if file:
        return f"every {what} is in <code>{_e(file)}</code> ({option})"
    return f"<code>{option} FILE</code> lists every {what}"


def _inputs_list(paths: Sequence[str]) -> str:
    shown = paths[:LISTED_INPUTS]
    items = "".join(f'<li class="path"><code>{_path(x)}</code></li>' for x in shown)
    more = len(paths) - len(shown)
    tail = f'<li class="muted">and {more:,} more</li>' if more else ""
    return f'<ul class="inputs">{items}{tail}</ul>'


def _team_text(account: Account) -> str:
    if not account.team_events:
        return '<span class="muted">none</span>'
    return _e(f"{_plural(account.team_events, 'team event')} {account.team_events_as or 'read'}")


def _summary(account: Account) -> str:
    rows: list[str] = []

    def add(label: str, body: str) -> None:
        rows.append(_row([("", _e(label)), ("", body)]))

    none = '<span class="muted">none</span>'
    if account.simulated:
        add("Tournaments", _e(f"{account.tournaments:,} simulated (no file read)"))
    else:
        add(f"Inputs given ({len(account.paths):,})", _inputs_list(account.paths) if account.paths else none)
        loaded = account.files - account.rejected
        add("Files read", _e(f"{_plural(account.files, 'tournament file')}: {loaded:,} loaded, "
                             f"{account.rejected:,} rejected"))
        add("Tournaments", _e(f"{account.tournaments:,}"))
        add("Rejected files", f'<a href="#rejected">{account.rejected:,}</a>' if account.rejected else none)
        skipped = account.skipped.height
        add("Skipped files", f'<a href="#skipped">{skipped:,}</a> not tournament files' if skipped else none)
        kinds = account.warning_kinds()
        add("Reader warnings", (f'<a href="#warnings">{account.warnings.height:,}</a>: '
                                + _e(", ".join(f"{n:,} {k}" for k, n in kinds.select("kind", "n").iter_rows())))
            if kinds.height else none)
        add("Team events", _team_text(account))
    add("Warnings about the run", "".join(f"<div>{_e(m)}</div>" for m in account.checks) or none)
    if account.notes:
        add("Notes", "".join(f"<div>{_e(m)}</div>" for m in account.notes))
    return _table([("", "What"), ("", "Value")], rows, cls="about account")


def _rejected(account: Account) -> str:
    files = account.rejected_files()
    if not files.height:
        return ""
    head: list[Cell] = [("", "File"), ("num", "Line"), ("", "Field"), ("", "Reason"), ("num", "Problems")]
    rows = [_row([("path", _path(r["path"])), ("num", _e("" if r["line"] is None else r["line"])),
                  ("", _e(r["column"] or "")), ("", _e(r["reason"])), ("num", f'{r["problems"]:,}')])
            for r in files.head(LISTED_FILES).iter_rows(named=True)]
    return (f'<h3 id="rejected">Rejected files ({files.height:,})</h3><p>Each file with its first problem; none of '
            "its tournaments is in the results.</p>" + _table(head, rows)
            + _more(files.height, "files", _full_list("--errors", account.errors_file, "problem")))


def _skipped(account: Account) -> str:
    skipped = account.skipped
    if not skipped.height:
        return ""
    rows = [_row([("path", _path(p)), ("", _e(r))]) for p, r in skipped.head(LISTED_FILES).iter_rows()]
    return (f'<h3 id="skipped">Skipped files ({skipped.height:,})</h3><details><summary>Files that are not '
            "tournament files, by name</summary>" + _table([("", "File"), ("", "Reason")], rows)
            + _more(skipped.height, "files", _full_list("--errors", account.errors_file, "skipped file"))
            + "</details>")


def _warnings(account: Account) -> str:
    kinds = account.warning_kinds()
    if not kinds.height:
        return ""
    head: list[Cell] = [("", "Kind"), ("num", "Warnings"), ("", "First of its kind: file"), ("num", "Line"),
                        ("", "Message")]
    rows = [_row([("", _e(r["kind"])), ("num", f'{r["n"]:,}'), ("path", _path(r["source"])),
                  ("num", _e("" if r["line"] is None else r["line"])), ("", _e(r["message"]))])
            for r in kinds.iter_rows(named=True)]
    return (f'<h3 id="warnings">Reader warnings by kind ({account.warnings.height:,})</h3><p>What the readers '
            "accepted but warn about, by field (a TRF record code such as 202 or 299, a column, or the "
            "encoding).</p>" + _table(head, rows)
            + _more(0, "kinds", _full_list("--warnings", account.warnings_file, "warning")))


def inputs_html(account: Account | None) -> str:
    """The ``Inputs`` section: the inputs given, files read, tournaments, rejected files (named, with their
    reasons), skipped files, reader warnings by kind, team events and the warnings about the run."""
    if account is None:
        return ('<p class="empty">Not recorded: this page was rendered from Python without an account of its '
                "inputs (pass <code>About(account=...)</code>).</p>")
    return _summary(account) + _rejected(account) + _skipped(account) + _warnings(account)


def _pointer(account: Account | None) -> str:
    """One line under the headline when something was left out or is worth a look: a link to ``Inputs``."""
    if account is None:
        return ""
    parts = []
    if account.rejected:
        parts.append(_plural(account.rejected, "file") + " rejected")
    if account.warnings.height:
        parts.append(_plural(account.warnings.height, "reader warning"))
    if account.team_events:
        parts.append(f"{_plural(account.team_events, 'team event')} {account.team_events_as or 'read'}")
    if account.checks:
        parts.append(_plural(len(account.checks), "warning") + " about the run")
    if not parts:
        return ""
    return f'<p class="account">{_e("; ".join(parts))}: see <a href="#inputs">Inputs</a>.</p>'


def _about_html(about: About | None) -> str:
    """The provenance section: command line, version, date if asked."""
    about = about or About()
    rows = [_row([("", "tbstats version"), ("", f"<code>{_e(__version__)}</code>")])]
    command = f'<code class="cmd">{_e(about.command)}</code>' if about.command else \
        '<span class="muted">not recorded (rendered from Python)</span>'
    rows.append(_row([("", "Command"), ("", command)]))
    if about.date:
        rows.append(_row([("", "Date"), ("", _e(about.date))]))
    return _table([("", "What"), ("", "Value")], rows, cls="about")


def _page(title: str, subtitle: str, headline: str, sections: Sequence[Section], about: About | None = None) -> str:
    """The page skeleton every report shares: header, headline cards, a navigation bar, the sections, what went
    into the page (``Inputs``) and how it was made, footer."""
    account = about.account if about else None
    sections = [*sections, ("inputs", "Inputs", inputs_html(account)),
                ("about", "How this page was made", _about_html(about))]
    nav = "".join(f'<a href="#{sid}">{_e(heading)}</a>' for sid, heading, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{_e(heading)}</h2>{content}</section>'
                   for sid, heading, content in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f'<header class="top"><div class="wrap"><h1>{_e(title)}</h1><p>{_e(subtitle)}</p></div></header>\n'
        f'<main class="wrap">{headline}{_pointer(account)}<nav>{nav}</nav>\n{body}\n</main>\n'
        f'<footer class="wrap">Made by tbstats {_e(__version__)}'
        + (f" on {_e(about.date)}" if about and about.date else "") + '.</footer>\n</body>\n</html>\n')

