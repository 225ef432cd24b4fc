"""dpsynth_book: the compendium of the book "Differentially private Bayesian data synthesis".

The library is :mod:`dpsynth`; this package holds what only the book needs, and imports the library
as any user would (``from dpsynth import ...``); the library never imports it:

* ``experiments/<chapter>/``: each chapter's parameters, replicates, tables, verdicts and figures;
* :mod:`~dpsynth_book.studies`, :mod:`~dpsynth_book.result_files`, :mod:`~dpsynth_book.shipped`,
  :mod:`~dpsynth_book.shipped_demo`: running the studies, the shipped results in ``results/`` and their
  staleness check;
* :mod:`~dpsynth_book.verdicts`, :mod:`~dpsynth_book.notes`, :mod:`~dpsynth_book.book`,
  :mod:`~dpsynth_book.page_check`, :mod:`~dpsynth_book.shell`: the pages' verdicts, notes, figures,
  tables, glue, checks and console blocks;
* :mod:`~dpsynth_book.plots` and :mod:`~dpsynth_book.presentation`: the figures' style, colours and order;
* :mod:`~dpsynth_book.datasets`, :mod:`~dpsynth_book.public_data`, :mod:`~dpsynth_book.sdr`: the papers'
  simulators, the public files and the SDR application's data;
* :mod:`~dpsynth_book.peers`, :mod:`~dpsynth_book.teaching`, :mod:`~dpsynth_book.tasks`,
  :mod:`~dpsynth_book.paths`, :mod:`~dpsynth_book.optional`: SmartNoise's synthesizers, the teaching
  page, the cross-platform route, the checkout's folders and the optional extras.
"""
