"""`make ui`: MLflow's UI on the lab's store, opened at an experiment's runs. MLflow 3 lands on
its GenAI overview (traces, an assistant); the runs of a sweep are the experiment's view with
`workflowType=machine_learning`, whose URL this prints before it starts the UI. The URL names the
lab's view of the runs (MLflow's shared view state, an experiment tag): the columns to compare
jobs by, one group of rows per dataset."""

import argparse
import json
import os
import sys

from mlflow import MlflowClient

from experiments.store.uri import JOBS_OFF, CredentialsInURI, tracking_uri

HOST = "127.0.0.1"
VIEW_KEY = "lab"  # the view lives in the experiment's tag mlflow.sharedViewState.lab
VIEW = {  # MLflow's shared view state: the job tags and test metric as columns, rows by dataset
    "selectedColumns": [*(f"tags.`{tag}`" for tag in ("dataset", "method", "engine", "seed")),
                        "metrics.`test_error`", "metrics.`test_rmse`"],
    "groupBy": {"aggregateFunction": "average",
                "groupByKeys": [{"mode": "tag", "groupByData": "dataset"}]},
}  # fmt: skip


def shared_runs_view(uri: str, experiment: str) -> str | None:
    """Writes the lab's view (`VIEW`) into the tag mlflow.sharedViewState.lab of the active
    experiment named `experiment` in the store at `uri`, and returns its id; None (nothing
    written) when the store has no such experiment yet, or only a deleted one."""
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None or found.lifecycle_stage != "active":
        return None
    client.set_experiment_tag(found.experiment_id, f"mlflow.sharedViewState.{VIEW_KEY}",
                              json.dumps(VIEW))  # fmt: skip
    return found.experiment_id


def runs_view_url(experiment_id: str | None, port: int) -> str:
    """The UI's runs view of the experiment in the lab's shared view:
    http://127.0.0.1:PORT/#/experiments/ID/runs?viewStateShareKey=lab&workflowType=machine_learning;
    the experiments list without an experiment."""
    home = f"http://{HOST}:{port}/"
    if experiment_id is None:
        return f"{home}#/experiments"
    return (f"{home}#/experiments/{experiment_id}/runs?viewStateShareKey={VIEW_KEY}"
            "&workflowType=machine_learning")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m experiments.mlflow_ui")
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args(argv)
    try:
        uri = tracking_uri()
    except CredentialsInURI as error:
        sys.exit(f"error: {error}")
    url = runs_view_url(shared_runs_view(uri, args.experiment), args.port)
    print(f"runs of experiment '{args.experiment}': {url}", flush=True)
    mlflow = os.path.join(os.path.dirname(sys.executable), "mlflow")
    os.execve(mlflow, [mlflow, "ui", "--host", HOST, "--port", str(args.port),
                       "--backend-store-uri", uri], {**JOBS_OFF, **os.environ})  # fmt: skip


if __name__ == "__main__":
    main()
