"""Shared by the SDK checks: the fake server's URL, the scenario's rules, a tiny test runner."""

import json
import os
import sys
import traceback
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
BASE_URL = os.environ["FAKE_MODEL_URL"]

with open(os.path.join(HERE, "scenario.yaml"), encoding="utf-8") as f:
    SCENARIO = yaml.safe_load(f)


def rule(name):
    for r in SCENARIO["rules"]:
        if r.get("name") == name:
            return r
    raise KeyError(f"scenario has no rule named {name!r}")


def request_log():
    """The fake server's request log (GET /_fake/requests)."""
    with urllib.request.urlopen(f"{BASE_URL}/_fake/requests") as resp:
        return json.load(resp)


def requests_for(marker):
    """Log entries whose first user message carries `marker`."""
    out = []
    for r in request_log():
        messages = r["body"].get("messages", []) if isinstance(r["body"], dict) else []
        first = next((m for m in messages if m.get("role") == "user"), None)
        if first and marker in json.dumps(first.get("content"), ensure_ascii=False):
            out.append(r)
    return out


def expect(actual, expected, what):
    if actual != expected:
        raise AssertionError(f"{what}:\n  expected {expected!r}\n  actual   {actual!r}")


def run(checks):
    """Runs each check; prints one line per check; exits 1 if any failed."""
    failed = 0
    for check in checks:
        try:
            check()
            print(f"  ok   {check.__name__}")
        except Exception:  # noqa: BLE001 - every failure is reported, none stops the others
            failed += 1
            print(f"  FAIL {check.__name__}")
            traceback.print_exc(file=sys.stdout)
    sys.exit(1 if failed else 0)
