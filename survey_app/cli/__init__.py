"""The ``survey-app`` command line: thin commands over the domain and storage layers."""
