"""RQ jobs of the referee: replaying game logs into projections."""
