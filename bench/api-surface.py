#!/usr/bin/env python3
"""Counts the public items of assets-build a user sees, from rustdoc's JSON.

    cargo +nightly rustdoc -p assets-build --lib -- -Z unstable-options --output-format json
    python3 bench/api-surface.py target/doc/assets_build.json

Every item reachable from the crate's root is counted once, where it is
first reached: modules, types, traits, functions, constants, and each
method, trait item and enum variant. Items reached only through `unstable`
are counted apart: they are the front-ends' surface, outside semver.
"""
import json
import sys
from collections import Counter

doc = json.load(open(sys.argv[1]))
index = doc["index"]
seen = set()
items = []  # (path, kind)


def kind_of(item):
    return next(iter(item["inner"]))


def walk(iid, prefix):
    if iid in seen:
        return
    seen.add(iid)
    item = index.get(str(iid))
    if item is None:
        return
    kind = kind_of(item)
    if item.get("visibility") != "public" and iid != doc["root"]:
        return
    name = item.get("name")
    path = prefix + ("::" + name if name and iid != doc["root"] else "")
    if kind == "module":
        items.append((path, "module"))
        for child in item["inner"]["module"]["items"]:
            walk(child, path)
    elif kind == "use":
        target = item["inner"]["use"].get("id")
        if target is not None:
            if item["inner"]["use"].get("is_glob"):
                module = index.get(str(target))
                if module and kind_of(module) == "module":
                    for child in module["inner"]["module"]["items"]:
                        walk(child, prefix)
            else:
                walk(target, prefix)
    elif kind in ("struct", "enum", "trait", "union"):
        items.append((path, kind))
        inner = item["inner"][kind]
        if kind == "enum":
            for v in inner["variants"]:
                items.append((path + "::" + index[str(v)]["name"], "variant"))
        if kind == "trait":
            for m in inner["items"]:
                items.append((path + "::" + index[str(m)]["name"], "trait item"))
        for impl_id in inner.get("impls", []):
            impl = index[str(impl_id)]["inner"]["impl"]
            if impl.get("trait") is None and not impl.get("is_synthetic"):
                for m in impl["items"]:
                    method = index[str(m)]
                    if method.get("visibility") == "public":
                        items.append((path + "::" + method["name"], kind_of(method)))
    else:
        items.append((path, kind))


root = index[str(doc["root"])]
crate = root["name"]
# The stable surface first, so that an item re-exported in both is counted
# as stable; then what only `unstable` reaches.
children = root["inner"]["module"]["items"]
unstable = [c for c in children if index[str(c)].get("name") == "unstable"]
for child in children:
    if child not in unstable:
        walk(child, crate)
stable = list(items)
for child in unstable:
    walk(child, crate)
front_ends = items[len(stable):]

MEMBERS = ("variant", "trait item", "function")


def members(entries):
    """Methods, variants and trait items: what sits inside a type."""
    return [p for p, k in entries if k in MEMBERS and p.count("::") > 2 and
            any(q == p.rsplit("::", 1)[0] for q, _ in entries)]


inside = len(members(stable))
print(f"stable surface: {len(stable)} items: {len(stable) - inside} modules, types, "
      f"traits, functions and constants, {inside} methods, variants and trait items")
by_top = Counter("::".join(p.split("::")[:2]) for p, _ in stable)
for top, n in sorted(by_top.items(), key=lambda t: -t[1]):
    print(f"  {n:4}  {top}")
print(f"unstable (front-ends only): {len(front_ends)} items")
if "-v" in sys.argv:
    for path, kind in stable:
        print(f"{kind:12} {path}")
