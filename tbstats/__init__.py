"""tbstats: vectorised chess tie-break analytics over archives of tournaments."""

__version__ = "0.1.0"
