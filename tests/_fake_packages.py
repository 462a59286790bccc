"""Small fake packages standing in for a real library of a given version, for the adapters' version tests."""

from __future__ import annotations

import textwrap


def install_fake(tmp_path, monkeypatch, dist: str, version: str, files: dict[str, str]) -> None:
    """Put a fake ``dist`` of ``version`` (``files``: relative path -> source) first on sys.path.

    A ``*.dist-info`` beside the package names the version, as an installed distribution's metadata does.
    """
    for rel, src in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))
    info = tmp_path / f"{dist}-{version}.dist-info"
    info.mkdir()
    info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
