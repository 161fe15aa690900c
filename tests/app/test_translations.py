"""Every message has a Korean and a Chinese translation, and the compiled catalogs are current.

CI runs this file, so a message added to a template or a module without translations
fails the build. The language itself comes from the URL or the browser, never a cookie.
"""

from __future__ import annotations

import io

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from tests.support.paths import ROOT

TRANSLATED = ("ko", "zh")
# Babel's own keywords and the lazy ones (for words defined before any request, and the
# privacy package's markers, survey_app/privacy/words.py): the same as the README's
# `pybabel extract -k _l -k lazy_gettext -k lazy_ngettext:1,2` command.
KEYWORDS = {**DEFAULT_KEYWORDS, "_l": None, "lazy_gettext": None, "lazy_ngettext": (1, 2)}


def _source_messages() -> set[str | tuple[str, ...]]:
    with (ROOT / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    found = extract_from_dir(ROOT, method_map, options_map, keywords=KEYWORDS)
    return {message for _file, _line, message, _comments, _context in found}


def _catalog(language: str):
    with (ROOT / "survey_app" / "translations" / language / "LC_MESSAGES" / "messages.po").open(
        "rb"
    ) as po:
        return read_po(po)


@pytest.fixture(scope="module")
def source_messages():
    return _source_messages()


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_is_translated(language, source_messages):
    catalog = _catalog(language)
    missing = []
    for message in source_messages:
        msgid = message if isinstance(message, str) else message[0]
        entry = catalog.get(msgid)
        strings = () if entry is None else entry.string
        strings = (strings,) if isinstance(strings, str) else strings
        if entry is None or entry.fuzzy or not all(strings):
            missing.append(msgid)
    assert not missing, f"{language}: {len(missing)} messages lack a translation: {missing[:10]}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_keep_placeholders(language):
    """Babel's own checks: the same %(name)s placeholders, the right number of plurals."""
    problems = [
        (message.id, [str(error) for error in errors])
        for message, errors in _catalog(language).check()
    ]
    assert not problems


@pytest.mark.parametrize("language", TRANSLATED)
def test_compiled_catalog_is_current(language):
    """The .mo Flask-Babel reads matches the .po (installing the package compiles them)."""
    compiled = io.BytesIO()
    write_mo(compiled, _catalog(language))
    mo_path = ROOT / "survey_app" / "translations" / language / "LC_MESSAGES" / "messages.mo"
    assert mo_path.exists() and mo_path.read_bytes() == compiled.getvalue(), (
        f"{mo_path} is stale: run `pip install -e .` or `pybabel compile -d translations`"
    )
