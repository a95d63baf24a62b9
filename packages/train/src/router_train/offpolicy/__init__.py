"""Learning from serve's own traffic: off-policy estimates of routing policies from a decision log
(`estimators`), the refit of a router's per-model ability and cost to that traffic (`refit`), and the
deployment replay on real outcomes that checks both (`replay`)."""
