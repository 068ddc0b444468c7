"""The pipeline's default settings, in one place.

Special token ids live with the tokens in ``wordlm``; the models' names and
sizes live in the registry in ``models``. Everything else a second module
would otherwise retype is here.
"""

from __future__ import annotations

VOCAB_SIZE = 4000  # C: the vocabulary's size, four special tokens included
CONTEXT = 64  # T: how many ids a model reads
# The longest --context the pipeline accepts: every training window is T int64
# ids, so a T in the tens of thousands asks for gigabytes before training starts.
MAX_CONTEXT = 1024
# training seeds of the protocol (the source's: the headline table)
SEEDS = (11, 29, 47)
# Two more seeds, declared before any of them trained, continuing the step of 18 between the
# protocol's own: the head-count comparison is paired by seed over all five (SEEDS + these).
EXTRA_SEEDS = (65, 83)
PRESET_SEED = 11  # the seed whose models are exported and shown
PRESET_MAX_NEW = 24
# The smallest sampling temperature above 0 (0 itself means greedy). Below it,
# logits / temperature overflows a float and sampling stops meaning anything;
# it is this close to greedy anyway. The manifest carries it to the browser.
MIN_TEMPERATURE = 0.01
D_MODEL = 64  # default width of every model's rows (the registry may choose others)
HIDDEN = 256  # default width of the hidden layer before the output  # new tokens in the preset's saved continuations
