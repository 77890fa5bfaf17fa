"""The MLflow store and the bookkeeping of jobs and sweeps in it.

    uri.py            which store a command uses: one resolver of the tracking URI
    retry.py          backoff on a busy store
    tracking.py       a job's identity (run_key), its run and what the run logs
    claims.py         exactly one run per job: a job claims its run_key before it runs
    liveness.py       heartbeats: whether a RUNNING run's process still lives; orphans failed
    sweep_record.py   a sweep's own run, the parent of its jobs' runs
    journal.py        a sweep's journal: each job's outcome, one JSON line, replayed after an outage
    worker_faults.py  a sweep's runs after one of its joblib workers died
    team_server.py    `python -m experiments.store.team_server` (make server): a team's store
    team_postgres.py  its private PostgreSQL
"""
