"""Fetch a benchmark suite into the offline cache, or verify the cache (make data SUITE=NAME):

python -m experiments.data fetch grinsztajn_clf_num [--cache DIR]
python -m experiments.data verify grinsztajn_clf_num [--cache DIR]

`fetch` downloads each dataset of conf/suite/<suite>.yaml (or a suite yaml file given by path)
from OpenML as OpenML serves it (experiments.data.openml), on a machine with internet, and writes it
into the cache (experiments.data.suite_cache) with a progress bar: it fetches what it can and names
each dataset it cannot fetch in one line; `verify` reads every cached file against its checksum.
Both exit non-zero when a dataset is missing or wrong, naming it."""

import argparse
import sys
import tempfile
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from experiments.configs import SuiteConfig
from experiments.data.openml import fetch_frame
from experiments.data.suite_cache import NotCached, cache_root, read_dataset, write_dataset
from experiments.paths import CONF_DIR


def load_suite(suite: str) -> DictConfig:
    """conf/suite/<suite>.yaml, or the suite yaml file at path `suite`, checked by SuiteConfig."""
    path = Path(suite) if suite.endswith(".yaml") else CONF_DIR / "suite" / f"{suite}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no suite '{suite}' ({path})")
    raw = OmegaConf.load(path)
    raw.pop("defaults", None)
    return OmegaConf.merge(OmegaConf.structured(SuiteConfig), raw)


def fetch_suite(suite: DictConfig, cache: str | None) -> list[str]:
    """Download every dataset of the suite into the cache; return the failures, one line each."""
    failures = []
    with tempfile.TemporaryDirectory() as download:
        for name, entry in tqdm(suite.datasets.items(), desc=f"fetch {suite.name}", unit="dataset"):
            try:
                frame, details = fetch_frame(entry.data_id, download)
                target = entry.target or details.get("default_target_attribute")
                write_dataset(frame, name, suite.name, entry.data_id,
                              int(details.get("version", 0)) or None, target,
                              entry.task.value, cache)  # fmt: skip
            except Exception as error:  # noqa: BLE001 - one line per dataset, then the next
                failures.append(f"{name}: {failure_line(entry.data_id, error)}")
    return failures


def failure_line(data_id: int, error: Exception) -> str:
    """The first line of an error, naming OpenML dataset `data_id` unless it already does."""
    line = (str(error).strip().splitlines() or [""])[0]
    if line.startswith(f"OpenML dataset {data_id} "):
        return line
    return f"OpenML dataset {data_id}: {type(error).__name__}: {line}"


def verify_suite(suite: DictConfig, cache: str | None) -> list[str]:
    """Read every cached dataset of the suite against its checksum; return the problems."""
    problems = []
    for name, entry in suite.datasets.items():
        try:
            read_dataset(suite.name, name, entry.data_id, cache)
        except (NotCached, ValueError) as error:
            problems.append(str(error))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["fetch", "verify"])
    parser.add_argument("suite", help="a conf/suite name, or a suite yaml file")
    parser.add_argument("--cache", help="default: $ENSEMBLES_OPENML_HOME/suites, else "
                                        "~/.cache/ensembles-lab/openml/suites")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        suite = load_suite(args.suite)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    problems = fetch_suite(suite, args.cache) if args.command == "fetch" else []
    problems = problems or verify_suite(suite, args.cache)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    n_ok = len(suite.datasets) - len(problems)
    print(f"{suite.name}: {n_ok} of {len(suite.datasets)} datasets in {cache_root(args.cache)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
