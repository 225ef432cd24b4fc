"""The package version, in a module of its own.

Modules low in the package (:mod:`dpsynth.report`) and the book's result files record the version in
the files they write; importing it from here, not from the package ``__init__`` (whose lazy attributes
import :mod:`dpsynth.synthesizer`), keeps them below the modules that use them.
"""

__version__ = "0.1.0"
