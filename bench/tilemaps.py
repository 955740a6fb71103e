#!/usr/bin/env python3
"""Compares the tile maps a parcel holds with what other readers make of
their sources (bench/tilemaps.sh runs it).

    tilemaps.py ASSETS_DIR PARCEL DUMPER

Every Tiled map (`.tmx`) under ASSETS_DIR, as the parcel holds it (printed by
DUMPER, assets-runtime's `tilemap_json` example), against pytiled-parser
and PyTMX where they are installed and read the map: each tile layer's cells
(PyTMX knows three of Tiled's four flip bits, so those are compared without
the fourth), and with pytiled-parser each object's id and position. Every
level of every LDtk project (`.ldtk`) against the project's JSON read
directly: IntGrid values, tiles with their pixel positions and flips,
entities at their top-left corners, in draw order, with each reference
to an entity of the same level as the object id it names; its tilesets'
enum tags (true `bool` tile properties) and its layers' parallax (Tiled's
factor, 1 - LDtk's). Prints one line per map
or level that differs or that no reader reads, then the totals.
"""

import contextlib
import io
import json
import os
import pathlib
import subprocess
import sys

assets, parcel, dumper = sys.argv[1:4]


def ours(name):
    out = subprocess.run([dumper, parcel, name], capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return json.loads(out.stdout), None


def grids(doc, kinds=("tiles",)):
    return [l["content"] for l in doc["layers"] if l["kind"] in kinds]


def pytiled(path):
    try:
        import pytiled_parser as tp
        from pytiled_parser import layer as L
    except ImportError:
        return None
    try:
        m = tp.parse_map(pathlib.Path(path))
    except Exception:
        return None
    tiles, objects = [], []

    def walk(layers):
        for l in layers:
            if isinstance(l, L.LayerGroup):
                walk(l.layers or [])
            elif isinstance(l, L.TileLayer):
                cells = {}
                for c in l.chunks or []:
                    for j, row in enumerate(c.data):
                        for i, g in enumerate(row):
                            if g:
                                cells["%d,%d" % (c.coordinates.x + i, c.coordinates.y + j)] = g
                for j, row in enumerate(l.data or []):
                    for i, g in enumerate(row):
                        if g:
                            cells["%d,%d" % (i, j)] = g
                tiles.append(cells)
            elif isinstance(l, L.ObjectLayer):
                objects.append([[o.id, o.coordinates.x, o.coordinates.y] for o in l.tiled_objects])

    walk(m.layers)
    return tiles, objects


def pytmx(path):
    # It says on import, and on some maps, what it cannot do: not ours to print.
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        try:
            import pytmx as P
            m = P.TiledMap(path)
        except Exception:
            return None
    out = []
    for l in m.layers:
        if isinstance(l, P.TiledTileLayer):
            out.append({"%d,%d" % (x, y): m.tiledgidmap[g] for x, y, g in l.iter_data() if g})
    return out


def tiled(path, name):
    doc, error = ours(name)
    if doc is None:
        return "failed: " + error
    readers = []
    got = pytiled(path)
    if got is not None:
        tiles, objects = got
        mine = [[[o[0], o[2], o[3]] for o in layer] for layer in grids(doc, ("objects",))]
        same_objects = len(mine) == len(objects) and all(
            len(a) == len(b) and all(p[0] == q[0] and abs(p[1] - q[1]) < 0.01 and abs(p[2] - q[2]) < 0.01 for p, q in zip(a, b))
            for a, b in zip(mine, objects))
        readers.append(("pytiled-parser", grids(doc) == tiles and same_objects))
    got = pytmx(path)
    if got is not None:
        masked = [{k: v & 0x1FFFFFFF for k, v in cells.items()} for cells in grids(doc)]
        readers.append(("PyTMX", masked == got))
    if not readers:
        return "read by no other reader"
    wrong = [r for r, same in readers if not same]
    return "differs from " + ", ".join(wrong) if wrong else None


def ldtk_levels(path):
    d = json.load(open(path))
    first, gid, tilesets = {}, 1, []
    for t in d["defs"]["tilesets"]:
        if not t.get("relPath"):
            continue
        first[t["uid"]] = gid
        tilesets.append(t)
        gid += max(1, t["__cWid"] * t["__cHei"])
    for level in d["levels"]:
        name = level["identifier"]
        if level.get("layerInstances") is None:
            level = json.load(open(os.path.join(os.path.dirname(path), level["externalRelPath"])))
        layers = []
        # Each entity's object id: numbered from 1 in draw order.
        ids = {}
        for li in reversed(level["layerInstances"]):
            if li["__type"] == "Entities":
                for e in li["entityInstances"]:
                    ids[e["iid"]] = len(ids) + 1

        def refs(e):
            # A single reference to an entity of this level, or none: the
            # object id it names (0 for none); others stay JSON.
            out = {}
            for f in e["fieldInstances"]:
                v = f["__value"]
                if f["__type"] != "EntityRef":
                    continue
                if v is None:
                    out[f["__identifier"]] = 0
                elif v["levelIid"] == level["iid"] and v["entityIid"] in ids:
                    out[f["__identifier"]] = ids[v["entityIid"]]
            return out

        if level.get("bgRelPath"):
            layers.append(("image", level["bgRelPath"]))
        for li in reversed(level["layerInstances"]):
            if li["intGridCsv"]:
                w = li["__cWid"]
                layers.append(("values", {"%d,%d" % (i % w, i // w): v for i, v in enumerate(li["intGridCsv"]) if v}))
            placed = li["gridTiles"] + li["autoLayerTiles"]
            if placed:
                uid = li.get("overrideTilesetUid") or li["__tilesetDefUid"]
                layers.append(("placed", [[t["px"][0], t["px"][1], (first[uid] + t["t"]) | (0x80000000 if t["f"] & 1 else 0) | (0x40000000 if t["f"] & 2 else 0)] for t in placed]))
            if li["__type"] == "Entities":
                objects = []
                for e in li["entityInstances"]:
                    g, tile = 0, e.get("__tile")
                    ts = tile and next((t for t in tilesets if t["uid"] == tile["tilesetUid"]), None)
                    if ts and tile["w"] == tile["h"] == ts["tileGridSize"]:
                        step = ts["tileGridSize"] + ts["spacing"]
                        x, y = tile["x"] - ts["padding"], tile["y"] - ts["padding"]
                        if x >= 0 and y >= 0 and x % step == 0 and y % step == 0:
                            g = first[ts["uid"]] + (y // step) * ts["__cWid"] + x // step
                    x = e["px"][0] - e["__pivot"][0] * e["width"]
                    y = e["px"][1] - e["__pivot"][1] * e["height"]
                    objects.append([e["__identifier"], round(x, 3), round(y, 3), g, refs(e)])
                layers.append(("objects", objects))
        yield name, layers


def ldtk_tags(path):
    """Each tileset's enum tags, as sorted [tile id, value] pairs."""
    d = json.load(open(path))
    return {
        t["identifier"]: sorted([i, e["enumValueId"]] for e in t.get("enumTags") or [] for i in e["tileIds"])
        for t in d["defs"]["tilesets"]
        if t.get("relPath")
    }


def ldtk_parallax(path):
    """Each layer definition's parallax in Tiled's terms, by identifier."""
    d = json.load(open(path))
    return {l["identifier"]: [round(1 - l.get("parallaxFactorX", 0), 3), round(1 - l.get("parallaxFactorY", 0), 3)]
            for l in d["defs"]["layers"]}


def ldtk(path, name, level, expected):
    doc, error = ours(f"{name}#{level}")
    if doc is None:
        return "failed: " + error
    mine = []
    for l in doc["layers"]:
        content = l["content"]
        if l["kind"] == "objects":
            content = [o[1:] for o in content]
        mine.append((l["kind"], content))
    if mine != expected:
        return "differs from the project's JSON"
    flags = {t: sorted(f) for t, f in doc["flags"].items()}
    if flags != ldtk_tags(path):
        return "its tilesets' enum tags differ from the project's JSON"
    parallax = ldtk_parallax(path)
    if any(l["kind"] != "image" and l["parallax"] != parallax.get(l["name"], [1, 1]) for l in doc["layers"]):
        return "a layer's parallax differs from the project's JSON"
    return None


counts = {"maps": 0, "maps_same": 0, "levels": 0, "levels_same": 0, "compared": 0, "tags": 0, "refs": 0}
for root, _, files in sorted(os.walk(assets)):
    for f in sorted(files):
        path = os.path.join(root, f)
        name = os.path.relpath(path, assets).replace(os.sep, "/")
        if f.endswith(".tmx"):
            counts["maps"] += 1
            problem = tiled(path, name)
            if problem:
                print(f"{name}: {problem}")
            else:
                counts["maps_same"] += 1
        elif f.endswith(".ldtk"):
            for level, expected in ldtk_levels(path):
                counts["levels"] += 1
                counts["compared"] += sum(len(c) for k, c in expected if k != "image")
                counts["refs"] += sum(len(o[4]) for k, c in expected if k == "objects" for o in c)
                counts["tags"] += sum(len(t) for t in ldtk_tags(path).values())
                problem = ldtk(path, name, level, expected)
                if problem:
                    print(f"{name}#{level}: {problem}")
                else:
                    counts["levels_same"] += 1
print(
    f"Tiled: {counts['maps_same']} of {counts['maps']} maps equal what every other reader that reads them reads; "
    f"LDtk: {counts['levels_same']} of {counts['levels']} levels equal their project's JSON "
    f"({counts['compared']} tiles, values and entities; {counts['tags']} tile enum tags, counted per level; layers' parallax; "
    f"{counts['refs']} references to entities of the same level)"
)
