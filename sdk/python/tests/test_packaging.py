"""The build backend makes a wheel and an sdist that installers accept."""

import base64
import hashlib
import os
import sys
import tarfile
import tempfile
import tomllib
import unittest
import zipfile

_SDK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(_SDK, "build_backend"))

import rein_build  # noqa: E402


class PackagingTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(_SDK, "pyproject.toml"), "rb") as f:
            self.project = tomllib.load(f)["project"]

    def test_wheel_records_every_file_with_its_hash(self):
        name = rein_build.build_wheel(self.dir)
        self.assertEqual(name, f"rein_sdk-{self.project['version']}-py3-none-any.whl")
        with zipfile.ZipFile(os.path.join(self.dir, name)) as z:
            names = set(z.namelist())
            info = f"rein_sdk-{self.project['version']}.dist-info"
            for want in ("rein/__init__.py", "rein/_client.py", "rein/_async.py", "rein/py.typed",
                         f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD", f"{info}/licenses/LICENSE"):
                self.assertIn(want, names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.startswith("tests/")])
            record = z.read(f"{info}/RECORD").decode().splitlines()
            self.assertEqual(len(record), len(names))
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                if path.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(path)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (want, len(data)), path)
            meta = z.read(f"{info}/METADATA").decode()
            self.assertIn("Name: rein-sdk\n", meta)
            self.assertIn("Requires-Python: >=3.11\n", meta)
            self.assertIn("License: Apache-2.0\n", meta)

    def test_version_is_the_packages(self):
        with open(os.path.join(_SDK, "rein", "__init__.py")) as f:
            self.assertIn(f'__version__ = "{self.project["version"]}"', f.read())

    def test_sdist_builds_again(self):
        name = rein_build.build_sdist(self.dir)
        with tarfile.open(os.path.join(self.dir, name)) as t:
            names = t.getnames()
        base = f"rein_sdk-{self.project['version']}/"
        for want in ("PKG-INFO", "pyproject.toml", "build_backend/rein_build.py", "rein/_async.py", "LICENSE"):
            self.assertIn(base + want, names)

    def test_builds_are_reproducible(self):
        a = rein_build.build_wheel(self.dir)
        with open(os.path.join(self.dir, a), "rb") as f:
            first = f.read()
        other = tempfile.mkdtemp()
        rein_build.build_wheel(other)
        with open(os.path.join(other, a), "rb") as f:
            self.assertEqual(f.read(), first)


if __name__ == "__main__":
    unittest.main()
