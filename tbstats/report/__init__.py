"""Reports: one self-contained HTML page with charts, and the same charts as separate files.

Three pages share one skeleton (header, headline cards, navigation, sections, then what went into the page:
the ``Inputs`` section, from the :class:`tbstats.run.account.Account` given in :class:`About`), one table layout
and one way of drawing and embedding charts: :func:`render_html` for ``tbstats compare`` (how often configurations
disagree on real tournaments), :func:`render_simulation_html` for ``tbstats simulate`` (how well each
configuration recovers true strength on simulated tournaments, against a random baseline) and
:func:`render_fairness_html` for ``tbstats evaluate`` (the same against a strength proxy on real archives,
and whom tie-breaks favour).

The page needs nothing but itself: the style sheet is inline, charts are inline SVG (or PNG data URIs),
there is no script and no font or image is fetched. Every text that comes from data (player names,
sources, configuration names, table cells) is HTML-escaped.

Charts are drawn with matplotlib (a dependency: html is a main output): it is well kept, works offline
and writes static SVG and PNG that embed in one file without a JavaScript runtime. It is imported only
when a chart is drawn, through the Agg canvas and without pyplot, so importing this module stays light and no
global plotting state changes. Output is deterministic: two renders of the same comparison are
byte-identical (no dates in SVG metadata, fixed SVG id salts, no timestamps).
"""

from tbstats.report.charts import CHART_FORMATS, Chart, ChartFormat
from tbstats.report.compare_charts import write_charts
from tbstats.report.compare_page import render_html
from tbstats.report.fairness_page import render_fairness_html, write_fairness_charts
from tbstats.report.frame import About
from tbstats.report.page import table_html
from tbstats.report.simulation_charts import BASELINE, MEASURES, SWEPT_MEASURES, Measure, write_simulation_charts
from tbstats.report.simulation_page import render_simulation_html

__all__ = ["BASELINE", "CHART_FORMATS", "MEASURES", "SWEPT_MEASURES", "About", "Chart", "ChartFormat", "Measure",
           "render_fairness_html", "render_html", "render_simulation_html", "table_html", "write_charts",
           "write_fairness_charts", "write_simulation_charts"]
