"""The lesson's SVG diagrams, one module per part of the lesson; ``site_src/hooks/figures.py`` puts them on the pages.

* ``common``: where the data is, loading it, the project's modules on ``sys.path``;
* ``svg``: drawing primitives (boxes, arrows, text) that take their colours from CSS;
* ``attention``: pages 1-2 (weights of one or more queries, the whole operation as a flow);
* ``tokens``: page 3 (words, characters and a byte-pair encoder);
* ``model``: page 4 (the map of the trained model, the mask);
* ``results``: page 5 (validation traces zoomed, where the parameters are).

Each ``figure_*`` function returns ``(svg, caption)``: the SVG markup and a Markdown caption.
"""
