"""Compile the message catalogs (survey_app/translations/*/LC_MESSAGES/messages.po) at build time.

The .po files are the source kept in the repository; the .mo files Flask-Babel reads are
built next to them, so both a wheel (which carries the package) and
an editable install (which reads the checkout) find them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def compile_catalogs(root: Path) -> list[Path]:
    """Write messages.mo beside every messages.po under ``root``; the paths written."""
    written = []
    for po_path in sorted(root.glob("*/LC_MESSAGES/messages.po")):
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file)
        mo_path = po_path.with_suffix(".mo")
        with mo_path.open("wb") as mo_file:
            write_mo(mo_file, catalog)
        written.append(mo_path)
    return written


class CatalogBuildHook(BuildHookInterface):  # type: ignore[misc]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        compile_catalogs(Path(self.root) / "survey_app" / "translations")
