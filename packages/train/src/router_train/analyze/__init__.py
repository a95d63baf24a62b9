"""`router-train analyze`: the issue-only pre-pass (the 15 judged task features) for new tasks through any
OpenAI-compatible endpoint, written in the `--task-features` file format (`router_train.task_features`)."""
