"""Result tables out: CSV, TSV, JSON, Markdown or Parquet, to a file or to standard output.

:mod:`tbstats.output.text` makes the text (plain decimals, JSON cells, the spreadsheet formula guard);
:mod:`tbstats.output.files` writes tables piece by piece, all or nothing (:class:`TableFile`).
"""

from tbstats.output.files import (
    ROW_GROUP_ROWS,
    TableFile,
    finished,
    remove_unfinished,
    unfinished,
    write_strings,
    write_table,
)
from tbstats.output.text import (
    CODE_COLUMNS,
    FORMATS,
    FORMULA_STARTS,
    TEXT_FORMATS,
    Rendered,
    escape_formulas,
    format_strings,
    format_table,
    plain,
    render,
    text_ready,
)

__all__ = ["CODE_COLUMNS", "FORMATS", "FORMULA_STARTS", "ROW_GROUP_ROWS", "TEXT_FORMATS", "Rendered", "TableFile",
           "escape_formulas", "finished", "format_strings", "format_table", "plain", "remove_unfinished", "render",
           "text_ready", "unfinished", "write_strings", "write_table"]
