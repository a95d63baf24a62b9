"""An item-response-theory router: every run's ability and every task's difficulty from the whole results
matrix (`router_oracle.results_matrix`), a text regressor for the difficulty of tasks never seen, and the
oracle's own rule on the predicted resolve probabilities (`router.py`)."""
