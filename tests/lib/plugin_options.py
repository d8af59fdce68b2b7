"""The README's table of the plugin's options, from plugin.yml.

    python3 tests/lib/plugin_options.py plugin.yml

prints the table; tests/plugin.bats checks that README.md holds it, so the
two never disagree.
"""
import sys

import yaml


def kind(spec):
    if "enum" in spec:
        return " \\| ".join(f"`{v}`" for v in spec["enum"])
    if "oneOf" in spec:
        return " or ".join(kind(s) for s in spec["oneOf"])
    t = spec["type"]
    if t == "array":
        return f"list of {spec['items']['type']}s"
    if "minimum" in spec:
        return f"{t} ≥ {spec['minimum']}"
    if "exclusiveMinimum" in spec:
        return f"{t} > {spec['exclusiveMinimum']}"
    if t == "boolean":
        return "`true` \\| `false`"
    return t


def main():
    plugin = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
    print("| option | value | what it does |")
    print("|---|---|---|")
    for name, spec in plugin["configuration"]["properties"].items():
        text = spec["description"].replace("|", "\\|")
        print(f"| `{name}` | {kind(spec)} | {text} |")


main()
