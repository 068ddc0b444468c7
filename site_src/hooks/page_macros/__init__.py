"""The page macros, one module per job, like ``lesson_figures/``.

* ``engine``: where the data is (the artefact folder's files, read once per build), lookup,
  formatting, the figure span every number sits in, tables and grids;
* ``quiz``: check-yourself questions;
* ``tables``: the protocol's tables (runs, aggregates, audit) and quoted stories;
* ``page3``: the toy sentence's vocabulary, windows and the real prefixes;
* ``page4``: the walkthrough's matrices, mask, weights and top tokens;
* ``page5``: the parameter and attention-cost tables, the knock-out table;
* ``microgpt``: the microgpt page's losses over the names list and which letters lean on which head.

``site_src/hooks/evidence_macros.py`` is the MkDocs hook that renders pages with them.
Nothing here computes with models: every value comes from a file the pipeline wrote.
"""
