"""Treewidth-bounded exact learning on top of the core family-variable IP of :mod:`ilp`.

* :mod:`ilp.treewidth.solve`: :func:`solve_bounded_treewidth`, the best DAG whose moral graph has
  treewidth at most ``k`` (the obstruction or the elimination-order model, added to
  :func:`ilp.solve_ilp` through its ``extend`` hooks);
* :mod:`ilp.treewidth.obstruction` and :mod:`ilp.treewidth.elimination`: the two models, with
  their SCIP plugins :mod:`ilp.treewidth.conshdlr_obstruction` (obstruction cuts) and
  :mod:`ilp.treewidth.sepa_density`; :mod:`ilp.treewidth.density`: edge-count inequalities both
  share; :mod:`ilp.treewidth.heur_bounded_sinks`: sink finding repaired to treewidth ``<= k`` by
  :mod:`ilp.treewidth.bounded_dag`;
* :mod:`ilp.treewidth.ktree_filter`: exact learning inside a given k-tree or tree decomposition.
"""
