"""The solver's version, in a module of its own so that any module can name it without
importing the ``solver`` package."""

__version__ = "0.1.0"
