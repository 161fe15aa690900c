"""Plain helpers shared by the test modules: constants, page parsers, statistics.

Fixtures live in the ``conftest.py`` files; everything here is an ordinary function or
class, imported as ``from tests.support.<module> import …``, so that no test module imports
another test module (or a conftest) and any test file can move between folders.
"""
