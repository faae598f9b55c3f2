"""Treewidth-bounded exact learning on top of the core family-variable IP of :mod:`ilp`.

* :mod:`ilp.treewidth.solve`: :func:`solve_bounded_treewidth`, the best DAG whose moral graph has
  treewidth at most ``k`` (the obstruction or the elimination-order model, added to
  :func:`ilp.solve_ilp` through its ``extend`` hooks);
* :mod:`ilp.treewidth.obstruction` and :mod:`ilp.treewidth.elimination`: the two models;
  :mod:`ilp.treewidth.density`: edge-count inequalities both share;
  :mod:`ilp.treewidth.heuristic`: sink finding repaired to treewidth ``<= k``;
* :mod:`ilp.treewidth.ktree_filter`: exact learning inside a given k-tree or tree decomposition.
"""
