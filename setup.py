"""Builds the Python package headspec: the pure-Python part from python/headspec and the
compiled core (headspec._core, python/_core.cpp) with the project's own CMake build.

    python3 -m pip install --no-build-isolation .

The CMake tree is build/pip-cmake (only the module and the library it links are built);
HEADSPEC_CMAKE_BUILD_DIR names another one, e.g. the build/ of scripts/setup, which is then
only brought up to date; HEADSPEC_CMAKE_ARGS adds options to its configuration (e.g.
"-DCMAKE_PREFIX_PATH=$HOME/.local"). Nothing is fetched: CMake finds Debian's Eigen, Boost, fmt,
nlohmann-json, pybind11 (README "Python", docs/cluster.md "Python without root").
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
(ROOT / "build").mkdir(exist_ok=True)  # setup.cfg's egg_base


def project_version():
    """The version of CMakeLists.txt's project() line, the one `headspec --version` prints."""
    match = re.search(r"project\(headspec VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return match.group(1)


class CMakeExtension(Extension):
    """The compiled core, built by CMake's target `_core` rather than by setuptools."""

    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        tree = Path(os.environ.get("HEADSPEC_CMAKE_BUILD_DIR", ROOT / "build" / "pip-cmake")).resolve()
        if not (tree / "CMakeCache.txt").exists():
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(tree), *generator, "-DCMAKE_BUILD_TYPE=Release",
                            f"-DPython_EXECUTABLE={sys.executable}", "-DHEADSPEC_BUILD_TESTS=OFF",
                            "-DHEADSPEC_BUILD_BENCH=OFF", *shlex.split(os.environ.get("HEADSPEC_CMAKE_ARGS", ""))],
                           check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(tree), "--target", "_core", "-j", jobs], check=True)
        built = sorted((tree / "python" / "headspec").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"no _core module in {tree / 'python' / 'headspec'} after the CMake build")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(
    version=project_version(),
    packages=["headspec"],
    package_dir={"headspec": "python/headspec"},
    package_data={"headspec": ["*.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("headspec._core")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
