"""Storage: the one layer that speaks SQL and knows the database is SQLite.

Everything above it (domain, web, command line) asks these modules for surveys, responses,
tallies, joint counts, accounts, invitations and releases, and never writes SQL itself
(``tests/app/test_layers.py`` enforces it), so another database needs changes here only.
"""
