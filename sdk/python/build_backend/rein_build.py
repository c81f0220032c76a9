"""The package's PEP 517 build backend, standard library only.

rein-sdk has no dependencies, and building it needs none either: `pip
install ./sdk/python` works without a package index, in or out of build
isolation, on a machine whose Python lacks setuptools or wheel. The
metadata comes from pyproject.toml's [project] table (PEP 621); the wheel
follows the binary distribution format (PEP 427, PEP 491) and the sdist
the source distribution format (PEP 625).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import time
import tomllib
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = "rein"
# Files of the package that are shipped: sources and the PEP 561 marker.
_SUFFIXES = (".py", ".typed")
_SDIST_EXTRA = ("pyproject.toml", "README.md", "LICENSE", "build_backend/rein_build.py")


def _project() -> dict:
    with open(os.path.join(_ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _dist_name(p: dict) -> str:
    return p["name"].replace("-", "_").lower()


def _metadata(p: dict) -> str:
    """Core metadata 2.1."""
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}",
             f"License: {p['license']['text']}"]
    lines += [f"Author: {a['name']}" for a in p.get("authors", [])]
    if p.get("keywords"):
        lines.append("Keywords: " + ",".join(p["keywords"]))
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    lines += [f"Project-URL: {k}, {v}" for k, v in p.get("urls", {}).items()]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(_ROOT, p["readme"]), encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def _package_files() -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(_ROOT, _PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(_SUFFIXES):
                out.append(os.path.relpath(os.path.join(dirpath, name), _ROOT).replace(os.sep, "/"))
    return out


def _epoch() -> tuple:
    t = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01: zip's first day
    return time.gmtime(max(t, 315532800))[:6]


def _dist_info(p: dict) -> dict[str, bytes]:
    with open(os.path.join(_ROOT, "LICENSE"), "rb") as f:
        licence = f.read()
    return {
        "METADATA": _metadata(p).encode(),
        "WHEEL": b"Wheel-Version: 1.0\nGenerator: rein_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "top_level.txt": (_PACKAGE + "\n").encode(),
        "licenses/LICENSE": licence,
    }


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    p = _project()
    name = f"{_dist_name(p)}-{p['version']}-py3-none-any.whl"
    info = f"{_dist_name(p)}-{p['version']}.dist-info"
    entries = dict(files)
    for k, v in _dist_info(p).items():
        entries[f"{info}/{k}"] = v
    record = [_record_line(k, v) for k, v in entries.items()] + [f"{info}/RECORD,,"]
    entries[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries.items():
            zi = zipfile.ZipInfo(path, _epoch())
            zi.external_attr = 0o644 << 16
            z.writestr(zi, data, zipfile.ZIP_DEFLATED)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {}
    for rel in _package_files():
        with open(os.path.join(_ROOT, rel), "rb") as f:
            files[rel] = f.read()
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this directory on sys.path."""
    return _write_wheel(wheel_directory, {"__editable__.rein_sdk.pth": (_ROOT + "\n").encode()})


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    info = f"{_dist_name(p)}-{p['version']}.dist-info"
    for k, v in _dist_info(p).items():
        path = os.path.join(metadata_directory, info, k)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(v)
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = f"{_dist_name(p)}-{p['version']}"
    name = base + ".tar.gz"
    mtime = time.mktime(_epoch() + (0, 0, -1)) if "SOURCE_DATE_EPOCH" in os.environ else 315532800

    def add(tar: tarfile.TarFile, path: str, data: bytes) -> None:
        ti = tarfile.TarInfo(f"{base}/{path}")
        ti.size, ti.mode, ti.mtime = len(data), 0o644, int(mtime)
        tar.addfile(ti, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        add(tar, "PKG-INFO", _metadata(p).encode())
        for rel in list(_SDIST_EXTRA) + _package_files():
            with open(os.path.join(_ROOT, rel), "rb") as f:
                add(tar, rel, f.read())
    return name
