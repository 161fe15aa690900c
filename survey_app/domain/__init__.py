"""The study's rules: survey files, designs, estimates, analyses, exports and releases.

No Flask here (``tests/app/test_layers.py`` enforces it): the web pages and the command line
both call these functions, and put what they return or raise into words for a person.
"""
