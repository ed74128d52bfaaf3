#!/usr/bin/env python3
"""Writes the synthetic customer-churn table TrainPipeline ships with (no real customers).

    python3 examples/data/make-churn-csv.py > examples/src/main/resources/org/switchml/examples/churn.csv

Seeded (random.Random(20261202)), so the file is the same on every run. 400 customers; each has a contract
(month-to-month 55%, one-year 25%, two-year 20%), an internet service (fiber 45%, dsl 35%, none 20%), a
payment method (electronic 35%, card 25%, bank 25%, check 15%), a tenure in months (longer on longer
contracts), a monthly charge (by service, plus noise), support calls (Poisson-like, more on fiber), and a
senior flag (16%). Churn is drawn from a logistic model: more likely on month-to-month contracts, fiber,
electronic payment, many support calls and high charges; less likely with tenure and long contracts.
"""
import math
import random

rnd = random.Random(20261202)


def pick(options):
    u = rnd.random()
    for value, p in options:
        u -= p
        if u < 0:
            return value
    return options[-1][0]


print("customer,tenure_months,monthly_charges,contract,internet,payment,support_calls,senior,churned")
for i in range(400):
    contract = pick([("month-to-month", 0.55), ("one-year", 0.25), ("two-year", 0.20)])
    internet = pick([("fiber", 0.45), ("dsl", 0.35), ("none", 0.20)])
    payment = pick([("electronic", 0.35), ("card", 0.25), ("bank", 0.25), ("check", 0.15)])
    cap = {"month-to-month": 36, "one-year": 60, "two-year": 72}[contract]
    tenure = max(1, min(72, int(rnd.expovariate(1 / (cap / 2.5))) + 1))
    base = {"fiber": 80.0, "dsl": 55.0, "none": 22.0}[internet]
    charges = round(max(18.0, rnd.gauss(base, 9.0)), 2)
    calls = 0
    rate = 1.6 if internet == "fiber" else 0.9
    while rnd.random() < rate / (rate + 1) and calls < 9:
        calls += 1
    senior = 1 if rnd.random() < 0.16 else 0
    score = (-1.2 + {"month-to-month": 1.4, "one-year": -0.3, "two-year": -1.6}[contract]
             + (0.7 if internet == "fiber" else 0.0) + (0.5 if payment == "electronic" else 0.0)
             + 0.45 * calls + 0.015 * (charges - 60) - 0.045 * tenure + 0.3 * senior)
    churned = "yes" if rnd.random() < 1 / (1 + math.exp(-score)) else "no"
    print(f"C{i + 1:04d},{tenure},{charges:.2f},{contract},{internet},{payment},{calls},{senior},{churned}")
