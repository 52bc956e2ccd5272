#!/usr/bin/env python3
"""Writes scenarios/whatif/philly_day.csv, the default what-if's trace, from the shipped Philly
sample: the jobs submitted on 2017-10-09 (UTC), submit = timestamp - 2017-10-09 00:00:00, duration
and GPUs unchanged, job_id = philly-<0-based data row of the sample>, ordered by submit time (ties
in sample order). Usage: scripts/make-philly-day.py [OUT.csv] (default: standard output)."""
import csv
import datetime
import sys

SAMPLE = "data/traces/philly_jobs_sample_pollux.csv"
DAY = datetime.datetime(2017, 10, 9)
HEADER = """# Microsoft Philly jobs submitted on 2017-10-09 (UTC), from data/traces/philly_jobs_sample_pollux.csv
# (petuum/adaptdl simulator/traces/philly.csv, commit de25dcc9): submit = timestamp - 2017-10-09 00:00:00,
# duration and gpus unchanged; job_id = philly-<row of the sample>. Written by scripts/make-philly-day.py.
job_id,submit,gpus,duration
"""


def main():
    with open(SAMPLE, encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    jobs = []
    for i, row in enumerate(rows):
        submitted = datetime.datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
        if submitted.date() != DAY.date():
            continue
        jobs.append((int((submitted - DAY).total_seconds()), i, row["num_gpus"],
                     int(float(row["duration"]))))
    jobs.sort(key=lambda job: job[0])  # stable: ties keep the sample's order
    text = HEADER + "".join(f"philly-{i},{s}s,{g},{d}s\n" for s, i, g, d in jobs)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
