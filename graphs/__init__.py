"""Graph algorithms over boolean adjacency matrices: DAGs, PDAGs/CPDAGs, d-separation, moral graphs,
metrics, exports, tree decompositions and k-trees. See docs/architecture.md for the conventions."""
