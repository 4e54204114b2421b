"""The compiled kernels (Cython); everything else is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize([Extension("tbstats.model.loops", ["tbstats/model/loops.pyx"])],
                            compiler_directives={"language_level": "3"}))
