"""The languages the app speaks, and so the languages a survey's texts may be given in.

Here rather than in the web layer's ``i18n``, which reads them too: the import checks a
survey file's ``languages`` without Flask.
"""

from __future__ import annotations

LANGUAGES = ("en", "ko", "zh")
