"""Prints the metrics of an `ncu --csv` output (stdin) as aligned lines: name, value, unit."""
import csv
import sys

rows = [r for r in csv.reader(line for line in sys.stdin if line.startswith('"'))]
for r in rows[1:]:
    d = dict(zip(rows[0], r))
    print(f"  {d['Metric Name']:62s} {d['Metric Value']:>14s} {d['Metric Unit']}")
