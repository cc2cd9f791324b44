"""How the design families' extracts spell what every extract has: blank cells, 0/1
codes, and the README's words for them. One place, so that the three families' READMEs
and the kit's reader (reference/designs.py) agree on the same spellings.
"""

from __future__ import annotations

import numpy as np

#: The spellings of a blank cell an extract uses (one set per task).
TOKEN_SETS: tuple[tuple[str, ...], ...] = (
    ("", "NA"),
    ("", "n/a"),
    ("NA", "."),
    ("", "NULL"),
    ("", "NA", "-"),
)
#: (1, 0) spellings: the task's primary pair and the one some rows use instead.
CODE_PAIRS: tuple[tuple[str, str], ...] = (("yes", "no"), ("1", "0"), ("Y", "N"), ("true", "false"))


def pick(options: tuple[str, ...], rng: np.random.Generator) -> str:
    """One of the options, drawn from a keyed stream (the prompt's, for wording)."""
    return options[int(rng.integers(len(options)))]


def missing_fact(tokens: tuple[str, ...]) -> str:
    """The Design section's "Missing values" value: the tokens, quoted."""
    return ", ".join(f'"{t}"' for t in tokens)
