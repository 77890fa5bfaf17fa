"""A study of one's own files (experiments.studies): a yaml anywhere lists CSV and Parquet files
as datasets; `+sweep=study study=FILE` runs each of them as the dataset=csv job of that file,
into the experiment the study names; a bad study file stops the sweep with one line."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from experiments.callback import sweep_job_configs
from experiments.config_errors import describe_config_error
from experiments.paths import CONF_DIR
from experiments.run import run_job
from reports.build import build_report
from reports.runs import load_runs, load_split_values, open_experiment
from reports.tables import ok_runs, summarize

STUDY = Path(__file__).parent / "data" / "study" / "study.yaml"


def compose_study(study: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["+sweep=study", f"study={study}"],
                      return_hydra_config=True)
        cfg.hydra.overrides.task = ["+sweep=study", f"study={study}", *overrides]  # the CLI's
        return cfg, sweep_job_configs(cfg)


def test_a_study_sweeps_its_files_as_tables_into_its_experiment():
    cfg, jobs = compose_study(STUDY, "method=gbt", "engine=inhouse,xgboost", "seed=0")
    assert cfg.mlflow.experiment_name == "own_tables"
    datasets = {job.dataset.name: job.dataset for job in jobs}
    assert len(jobs) == 4 and set(datasets) == {"penguins", "titanic"}
    titanic = datasets["titanic"]
    assert (titanic.loader, titanic.path) == ("csv", str(STUDY.parent / "titanic.parquet"))
    assert (titanic.target, titanic.task.value, list(titanic.drop)) == (
        "survived", "binary", ["boat", "body", "name"])
    assert (datasets["penguins"].target, datasets["penguins"].task.value) == (
        "species", "multiclass")


def test_a_study_job_runs_on_its_file(compose_job, runs_of):
    job = compose_job("dataset=study", f"study={STUDY}", "dataset.name=titanic", "method=gbt",
                      "method.n_estimators=5", "eval.curve_every=0")
    assert run_job(job) == "ok"
    [run] = runs_of(job)
    tags = run.data.tags
    assert (tags["dataset"], tags["data.source"], tags["data.rows"]) == (
        "titanic", "titanic.parquet", "1309")
    # pclass, age, sibsp, parch, fare: numbers; sex, ticket, cabin, embarked, home.dest: text
    assert (tags["data.numeric_features"], tags["data.categorical_features"]) == ("5", "5")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("datasets:\n  a: {path: a.csv, target: y, task: binary, colour: red}\n",
         "study {file}: Key 'colour' not in 'StudyEntry'"),
        ("datasets:\n  a: {path: a.csv, task: binary}\n",
         "study {file}: missing datasets.a.target"),
        ("name: empty\n", "study {file} lists no datasets"),
        ("datasets:\n  a: {path: a.csv, target: y, task: binary}\n"
         "  a: {path: b.csv, target: y, task: binary}\n",
         "study {file}: found duplicate key a (line 3)"),
        ("datasets:\n  - {path: a.csv, target: y, task: binary}\n",
         "study {file}: datasets must map each name to its {{path, target, task}}, not be a list"),
    ],
)
def test_a_bad_study_file_is_refused_in_one_line(tmp_path, text, message):
    file = tmp_path / "study.yaml"
    file.write_text(text)
    with pytest.raises(Exception) as error:
        compose_study(file)
    assert describe_config_error(error.value) == message.format(file=file)


def test_a_study_sweep_without_a_study_file_says_how_to_name_one():
    with pytest.raises(Exception) as error:
        compose_study(Path("/nowhere/study.yaml"))
    assert describe_config_error(error.value) == "no study file /nowhere/study.yaml"


def test_two_files_two_encodings_two_engines_report_a_row_per_file_encodings_apart(
        compose_job, store_uri, runs_of, tmp_path):
    """The study's two real tables x ordinal, native x inhouse, xgboost, swept into one
    experiment: the report has a row per file and a column per (method, engine, encoding),
    each cell the error of its own run (never two files or two encodings averaged)."""
    errors = {}
    for name in ("penguins", "titanic"):
        for encoding in ("ordinal", "native"):
            for engine in ("inhouse", "xgboost"):
                job = compose_job("dataset=study", f"study={STUDY}", f"dataset.name={name}",
                                  f"dataset.categorical={encoding}", f"engine={engine}",
                                  "method=gbt", "method.n_estimators=10", "eval.curve_every=0")
                assert run_job(job) == "ok"
                errors[name, engine, encoding] = next(
                    run.data.metrics["test_error"] for run in runs_of(job)
                    if run.data.tags["dataset"] == name and run.data.tags["engine"] == engine
                    and run.data.tags["data.encoding"] == encoding)
    client, experiment_id = open_experiment(store_uri, job.mlflow.experiment_name)
    ok = ok_runs(load_runs(client, experiment_id))
    table = summarize(load_split_values(client, ok, "test_error"), "test_error")
    assert list(table.mean.index) == ["penguins", "titanic"]
    assert len(table.mean.columns) == 4
    for (name, engine, encoding), error in errors.items():
        assert table.mean.loc[name, ("gbt", engine, encoding)] == pytest.approx(error)
    build_report(store_uri, job.mlflow.experiment_name, tmp_path / "out")
    rows = (tmp_path / "out" / "tables.md").read_text().split("## test_error\n")[1]
    assert "gbt / inhouse / native" in rows and "gbt / xgboost / ordinal" in rows
    assert sum(line.startswith(("| penguins", "| titanic")) for line in rows.splitlines()[:8]) == 2
