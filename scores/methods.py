"""Declarations of the local scores, the parent limit and the sparse candidate restriction
(see :mod:`hybridbn.options`).

A score's ``run(data, arities, settings, **options)`` builds the score table of
:func:`scores.candidates.build_score_table` with the run's score, ESS and parent limit.  The
candidate restriction's ``run(data, arities, settings, *, n_jobs, excluded)`` returns the
``allowed[p, c]`` matrix of :func:`scores.identification.identify_candidates`.
"""

from __future__ import annotations

import math

from hybridbn.checks import PALIM  # declared with its one check, as several packages take it
from hybridbn.options import FLOAT, INT, Choice, Method, Param

MAX_ESS = 1e6
"""Largest BDeu equivalent sample size accepted (far larger ones overflow the local scores)."""

ESS = Param("ess", FLOAT, 1.0, "BDeu equivalent sample size", low=0.0, high=MAX_ESS, open="low", key="ess",
            grid="ess")
STRUCTURE_PRIOR = Param(
    "structure_prior", FLOAT, None, "sparsity prior: each possible parent is present with probability E/(n-1), "
    "E the expected parents per node (bnlearn's 'vsp' prior, causal-learn's BDeu structure prior; 1 is the "
    "recommended value, see docs/accuracy.md), or 'none' (default: none, uniform over networks)", low=0.0,
    open="low", none=True, metavar="E", key="structure_prior", keyed_when_set=True, grid="structure_priors")


def score_table(data, arities, settings, **options):
    """The pruned score table of the run's score (``settings.score``, ``.ess``, ``.palim``)."""
    from scores.candidates import build_score_table  # deferred: numba kernels, not needed to declare

    return build_score_table(data, arities, score=settings.score, ess=settings.ess, palim=settings.palim,
                             **options)


AUTO = "auto"
"""``--score auto``: BDeu unless qNML predicts held-out rows better, decided on the data by
:func:`pipeline.apps.selection.select_config`; a run that does not decide it uses BDeu."""
AUTO_SCORES = ("bdeu", "qnml")
"""What ``--score auto`` decides between: the reference, kept unless the data prefer the other."""
AUTO_LEVEL = 0.05
"""Level of the sign test by which ``--score auto`` leaves BDeu (the CI tests' default level)."""
AUTO_MIN_FOLDS = math.ceil(math.log2(1 / AUTO_LEVEL))
"""Fewest folds on which that one-sided sign test can reject: 5 (all 5 better: p = 1/32)."""

SCORE = Choice(
    name="score", default=AUTO, grid="scores", stage="scores", params=(STRUCTURE_PRIOR,),
    help="local score; auto: BDeu, or qNML with the arc prior E = 1 where it predicts held-out rows better on "
         "every fold of a 5-fold cross-validation (BDeu alone with a time limit, a budget, --select or over 100 "
         "variables)",
    methods=(
        Method(AUTO, "BDeu or qNML, decided by a cross-validation (docs/user-guide.md)", score_table, (ESS,)),
        Method("bdeu", "Bayesian Dirichlet equivalent uniform (Heckerman et al. 1995)", score_table, (ESS,)),
        Method("bic", "Bayesian information criterion", score_table),
        Method("aic", "Akaike information criterion", score_table),
        Method("ll", "log-likelihood", score_table),
        Method("k2", "K2 (Cooper & Herskovits 1992)", score_table),
        Method("qnml", "quotient normalised maximum likelihood, parameter-free (Silander et al. 2018)", score_table),
    ),
)
"""``--score``: the local score the optimisers maximise."""

CANDIDATE_SCORE_USE = (SCORE,)
"""What ranks candidate parents: the run's score (its name and parameters enter the key)."""

CANDIDATES_CONDITIONAL = 4
"""Parents per child the candidate restriction adds given the child's best candidate
(``identify_candidates(conditional=...)``)."""

CANDIDATE_COUNT = Param("candidates", INT, 16, "with --method candidates: candidate parents per child", low=1,
                        metavar="M", key="candidates", grid="candidates")


def run_candidates(data, arities, settings, *, n_jobs=1, excluded=None):
    """Sparse candidate parents (Friedman, Nachman & Pe'er 1999): ``allowed[p, c]``."""
    from scores.identification import identify_candidates  # deferred: numba kernels, not needed to declare

    return identify_candidates(data, arities, m=settings.candidates, score=settings.score, ess=settings.ess,
                               conditional=CANDIDATES_CONDITIONAL, n_jobs=n_jobs, excluded=excluded)


CANDIDATES = Method(
    "candidates", "sparse candidate parents of largest single-parent score gain (no CI test)", run_candidates,
    (CANDIDATE_COUNT,), uses=CANDIDATE_SCORE_USE, constants={"conditional": CANDIDATES_CONDITIONAL})
"""``--method candidates``: a directional restriction for very large networks."""
