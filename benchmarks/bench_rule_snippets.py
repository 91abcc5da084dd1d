"""How much of what the rule docs promise ``tfcoach check`` finds, on snippets nobody tuned.

``benchmarks/rule_snippets/`` holds 70 files with one pitfall each and 72 correct
look-alikes, written by an author who had read only ``tfcoach rules`` / ``tfcoach rule``
and the README (never the rules' code, never the tool's output), and ``expected.json``
(the rule each pitfall file must get, and what each correct file resembles). Run::

    python benchmarks/bench_rule_snippets.py [FOLDER]

It prints every pitfall missed, every finding of another rule in a pitfall file, every
finding in a correct file, then recall and false alarms.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jupyterlab_tfcoach.analysis import Config, analyze_path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=HERE / "rule_snippets")
    folder = parser.parse_args().folder
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    hits = alarms = 0
    pitfalls = sum(1 for entry in expected.values() if entry["rule"])
    for name, entry in sorted(expected.items()):
        path = folder / ("pitfalls" if entry["rule"] else "correct") / name
        codes = sorted({finding.code for finding in analyze_path(path, Config())})
        if entry["rule"]:
            hit = entry["rule"] in codes
            hits += hit
            others = [code for code in codes if code != entry["rule"]]
            if not hit:
                print(f"missed {name}: {entry['rule']} (line {entry.get('line')}); got {codes}")
            elif others:
                print(f"also   {name}: {others} beside {entry['rule']}")
        elif codes:
            alarms += 1
            print(f"false alarm {name}: {codes} ({entry['why']})")
    correct = len(expected) - pitfalls
    print(f"pitfalls found: {hits}/{pitfalls} ({100 * hits / pitfalls:.1f}%)")
    print(f"false alarms: {alarms}/{correct} correct files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
