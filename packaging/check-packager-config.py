#!/usr/bin/env python3
"""Checks the cargo-packager configuration (app/ for macOS, launcher/ for Windows) against the
JSON schema of the cargo-packager version the release workflow pins, and that every file it
names exists. The macOS and Windows packages can only be built on those systems; this is what
can be checked here. Needs network and the jsonschema package:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install jsonschema
    /tmp/venv/bin/python packaging/check-packager-config.py [SCHEMA.json]

Without network, pass the schema file from a checkout of cargo-packager at the pinned tag
(crates/packager/schema.json).
"""

import json
import os
import re
import sys
import tomllib
import urllib.request

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKFLOW = os.path.join(ROOT, ".github", "workflows", "release.yml")


def pinned_version():
    text = open(WORKFLOW, encoding="utf-8").read()
    return re.search(r'CARGO_PACKAGER_VERSION: "([^"]+)"', text).group(1)


def named_paths(config):
    paths = list(config.get("icons", []))
    paths.append(config["licenseFile"])
    for resource in config.get("resources", []):
        paths.append(resource if isinstance(resource, str) else resource["src"])
    if "nsis" in config:
        paths.append(config["nsis"]["installerIcon"])
    return paths


def main():
    version = pinned_version()
    url = (
        "https://raw.githubusercontent.com/crabnebula-dev/cargo-packager/"
        f"cargo-packager-v{version}/crates/packager/schema.json"
    )
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            schema = json.load(f)
    else:
        try:
            schema = json.load(urllib.request.urlopen(url, timeout=60))
        except OSError as e:
            sys.exit(f"could not download {url} ({e}); pass the schema file instead")
    failed = False
    for crate in ["app", "launcher"]:
        manifest = os.path.join(ROOT, crate, "Cargo.toml")
        with open(manifest, "rb") as f:
            config = tomllib.load(f)["package"]["metadata"]["packager"]
        try:
            jsonschema.validate(config, schema)
        except jsonschema.ValidationError as e:
            print(f"{crate}/Cargo.toml: {e.message}")
            failed = True
            continue
        base = os.path.dirname(manifest)
        missing = [p for p in named_paths(config) if not os.path.exists(os.path.join(base, p))]
        for path in missing:
            print(f"{crate}/Cargo.toml names {path}, which does not exist")
        failed |= bool(missing)
        if not missing:
            print(f"{crate}/Cargo.toml: valid for cargo-packager {version}, every file present")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
