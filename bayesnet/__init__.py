"""The Bayesian-network data layer: networks with their CPTs (``network``), BIF files (``bif``),
the bundled benchmark networks (``catalog``, files in ``networks/``), discrete datasets
(``dataset``), forward sampling (``sampling``) and CPT fitting (``fitting``). It imports no
algorithm package but ``graphs``, and nothing of ``pipeline``."""
