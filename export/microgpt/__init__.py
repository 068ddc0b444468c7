"""microgpt, the whole GPT on one page, and what the lesson builds around it.

* ``microgpt.py``: the model, its training loop and sampling, standard library
  only, on one readable page (the microgpt page shows it in "Unlocked");
* ``floats.py``: the trained model on plain floats, bit for bit equal, for the
  page's live widgets, the exercise checker and the tests;
* ``cli.py``: ``python -m export.microgpt``, training and the JSON export;
* ``site.py``: the exercise's cases and the highlighted lines, for the build.
"""

from .cli import NamesFileError, build_export, main, read_names, write_json_atomic
from .floats import forward_attention, load_trained, sample_names
from .floats import (
    linear as _linear,
    rmsnorm as _rmsnorm,
    softmax as _softmax,
    total as _total,
)
from .microgpt import (
    BLOCK_SIZE,
    N_EMBD,
    N_HEAD,
    N_LAYER,
    NUM_SAMPLES,
    NUM_STEPS,
    SEED,
    TEMPERATURE,
    Value,
    build_vocab,
    encode,
    gpt_step,
    init_state,
    linear,
    rmsnorm,
    sample,
    sequence_loss,
    softmax,
    train,
)
from .site import MHA_BEGIN, MHA_END, SOURCE, exercise_cases, multi_head_line_range
