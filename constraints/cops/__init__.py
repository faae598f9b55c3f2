"""Cops-and-robbers constraint-based structure learner (Talvitie & Parviainen; ``docs/cops.md``).

The public names live in :mod:`constraints.cops.learner`; the modules beside it are the
counting oracle (``oracle``), Algorithm 1 (``solver``), the postprocessing of section 3.2
(``postprocess``) and the compiled search for the exact oracle (``engine``, the driver of the
kernels in ``compiled_search``, ``engine_state``, ``memo_tables``, ``exact_oracle``,
``pair_bitmaps``, ``dconnection`` and ``node_words``).
"""

from constraints.cops.learner import (
    MAX_VARS,
    CopsInputError,
    CopsResult,
    contract_decomposition,
    cops_and_robbers,
    cops_restriction,
    independence_oracle,
    learn_cops,
)

__all__ = [
    "CopsInputError",
    "CopsResult",
    "MAX_VARS",
    "contract_decomposition",
    "cops_and_robbers",
    "cops_restriction",
    "independence_oracle",
    "learn_cops",
]
