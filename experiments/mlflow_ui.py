"""`make ui`: MLflow's UI on the lab's store, opened at an experiment's runs. MLflow 3 lands on
its GenAI overview (traces, an assistant); the runs of a sweep are the experiment's view with
`workflowType=machine_learning`, whose URL this prints before it starts the UI."""

import argparse
import os
import sys

from mlflow import MlflowClient

from experiments.store import JOBS_OFF, CredentialsInURI, tracking_uri

HOST = "127.0.0.1"


def runs_view_url(uri: str, experiment: str, port: int) -> str:
    """The UI's runs view of `experiment` in the store at `uri`
    (http://127.0.0.1:PORT/#/experiments/ID?workflowType=machine_learning); the experiments list
    when the store has no such experiment yet."""
    home = f"http://{HOST}:{port}/"
    found = MlflowClient(uri).get_experiment_by_name(experiment)
    if found is None:
        return f"{home}#/experiments"
    return f"{home}#/experiments/{found.experiment_id}?workflowType=machine_learning"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m experiments.mlflow_ui")
    parser.add_argument("--experiment", default="default")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args(argv)
    try:
        uri = tracking_uri()
    except CredentialsInURI as error:
        sys.exit(f"error: {error}")
    url = runs_view_url(uri, args.experiment, args.port)
    print(f"runs of experiment '{args.experiment}': {url}", flush=True)
    mlflow = os.path.join(os.path.dirname(sys.executable), "mlflow")
    os.execve(mlflow, [mlflow, "ui", "--host", HOST, "--port", str(args.port),
                       "--backend-store-uri", uri], {**JOBS_OFF, **os.environ})  # fmt: skip


if __name__ == "__main__":
    main()
