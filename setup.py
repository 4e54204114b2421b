"""The compiled kernels (Cython), and bytecode for editable installs; everything else is in pyproject.toml."""

import compileall
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    """An editable install imports the checkout's sources, which setuptools does not compile (a regular install
    is compiled by pip): they are compiled here once, so that no command compiles them again where imports cannot
    write bytecode (``PYTHONDONTWRITEBYTECODE``, a read-only checkout): about 0.08 s of every start."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            compileall.compile_dir(str(Path(__file__).resolve().parent / "tbstats"), quiet=1)


KERNELS = [Extension("tbstats.model.loops", ["tbstats/model/loops.pyx"]),
           Extension("tbstats.model.rows", ["tbstats/model/rows.pyx"]),
           Extension("tbstats.engine.exact", ["tbstats/engine/exact.pyx"]),
           Extension("tbstats.engine.ranks", ["tbstats/engine/ranks.pyx"]),
           Extension("tbstats.io.trf.fields", ["tbstats/io/trf/fields.pyx"]),
           Extension("tbstats.io.trf.pairs", ["tbstats/io/trf/pairs.pyx"]),
           Extension("tbstats.io.trf.text", ["tbstats/io/trf/text.pyx"]),
           Extension("tbstats.engine.stage", ["tbstats/engine/stage.pyx"]),
           Extension("tbstats.engine.encounters", ["tbstats/engine/encounters.pyx"]),
           Extension("tbstats.engine.performance", ["tbstats/engine/performance.pyx"]),
           Extension("tbstats.analysis.segments", ["tbstats/analysis/segments.pyx"]),
           Extension("tbstats.analysis.elo", ["tbstats/analysis/elo.pyx"]),
           Extension("tbstats.io.csvrows", ["tbstats/io/csvrows.pyx"])]
if sys.platform != "win32":   # POSIX system calls (on Windows tbstats.io.safe reads file by file)
    KERNELS.append(Extension("tbstats.io.files", ["tbstats/io/files.pyx"]))

setup(ext_modules=cythonize(KERNELS, compiler_directives={"language_level": "3"}),
      cmdclass={"build_py": BuildPy})
