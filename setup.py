"""The wheel compiles the native speed-ups (stream_cleaner/_native) at build time.

Everything else about the package is in pyproject.toml; this file only adds the compiled
modules. Their list lives in scripts/build_native.py, which also builds them in place for a
source tree. Here they compile against the sdists of the selectolax and kenlm versions that
pyproject.toml pins with ``==``, so the wheel's metadata requires exactly the versions whose
structures its modules read, and ``built_for.json`` goes into the wheel beside them.

An editable install (``pip install -e .``, as scripts/setup.sh does) compiles nothing:
setup.sh runs scripts/build_native.py afterwards, and again only when the sources change.
A build that cannot compile the modules fails: a wheel without them would run at half speed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("build_native", HERE / "scripts/build_native.py")
build_native = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_native)

VERSIONS = build_native.pinned_versions(HERE / "pyproject.toml")
# STREAM_CLEANER_NATIVE_SOURCES: a directory of sdists to use and fill, such as a source tree's
# .cache/native; by default they are fetched into the build directory, by the build only
SDISTS = Path(os.environ.get("STREAM_CLEANER_NATIVE_SOURCES") or HERE / "build/sdists").resolve()


class BuildNative(build_ext):
    """build_ext (Cython's, which cythonizes) with the pinned sdists fetched first."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.force = True  # a build directory kept from other pins must not be reused
        self.cython_c_in_temp = True

    def run(self) -> None:
        if self.editable_mode:
            return  # scripts/setup.sh builds them in place with scripts/build_native.py
        for name, version in VERSIONS.items():
            build_native.fetch_sdist(name, version, SDISTS)
        super().run()
        native = Path(self.build_lib) / "stream_cleaner" / "_native"
        build_native.write_built_for(native, VERSIONS)

    def get_source_files(self) -> list[str]:
        return []  # the sdist gets the .pyx, .pxi and .h files from MANIFEST.in, not the sdists'


setup(
    ext_modules=build_native.extensions(
        Path("stream_cleaner/_native"), build_native.sdist_dirs(VERSIONS, SDISTS)
    ),
    cmdclass={"build_ext": BuildNative},
)
