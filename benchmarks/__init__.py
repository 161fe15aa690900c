"""The benchmarks, a package so that scripts, tests and mypy import them one way:
``from benchmarks import loadlib``. Each script also runs by path
(``python benchmarks/load_test.py``): it then puts the checkout's root on ``sys.path``."""
