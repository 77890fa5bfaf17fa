"""The Hydra app that runs a method on a dataset with an engine and logs the result to MLflow."""
