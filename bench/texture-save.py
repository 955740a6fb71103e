#!/usr/bin/env python3
"""Save -> hot-reload notice for one GPU texture, at each texture effort.

    bench/texture-save.py IMAGE [CARGO_ASSETS_BINARY] [--quality Q ...]

For each effort (default: the rule's `quality` unset, which is `fastest` in
a dev build, then `basic`, the release default), a package of its own in a
temporary folder holds IMAGE as `assets/t.png` under a `texture` rule;
after a first build, `cargo assets watch --port P` runs, and the image is
saved again three times (one pixel changed, written beside and renamed
over, as editors save), timing each save to the first byte of the notice
the watcher sends to a game. Needs Pillow (`tests/install-tools.sh` puts
it in `target/tools/venv`).
"""
import argparse
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from PIL import Image

parser = argparse.ArgumentParser()
parser.add_argument("image")
parser.add_argument("binary", nargs="?", default="target/release/cargo-assets")
parser.add_argument("--quality", action="append", default=None)
args = parser.parse_args()
binary = os.path.abspath(args.binary)
qualities = args.quality or ["unset", "basic"]


def received(sock, timeout):
    """Everything the watcher sends within `timeout` of the first byte."""
    data = b""
    while select.select([sock], [], [], timeout)[0]:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
        timeout = 0.3
    return data


def save_again(path, i):
    image = Image.open(path)
    image.load()
    pixels = image.load()
    pixels[i, i] = tuple((c + 1) % 256 for c in pixels[i, i])
    beside = path + ".tmp"
    image.save(beside, format="PNG")
    start = time.perf_counter()
    os.replace(beside, path)
    return start


width, height = Image.open(args.image).size
print(f"{args.image}: {width}x{height}")
print("| `quality` | save -> notice, three saves |\n|---|---|")
for port, quality in enumerate(qualities, start=47311):
    with tempfile.TemporaryDirectory() as package:
        os.makedirs(os.path.join(package, "assets"))
        os.makedirs(os.path.join(package, "src"))
        with open(os.path.join(package, "src", "main.rs"), "w") as f:
            f.write("fn main() {}\n")
        texture = os.path.join(package, "assets", "t.png")
        shutil.copyfile(args.image, texture)
        with open(os.path.join(package, "Cargo.toml"), "w") as f:
            f.write('[package]\nname = "save"\nversion = "0.1.0"\nedition = "2021"\n\n')
            f.write('[[package.metadata.assets.rules]]\nmatch = "*.png"\nprocessor = "texture"\n')
            if quality != "unset":
                f.write(f'quality = "{quality}"\n')
        subprocess.run([binary, "assets", "build"], cwd=package, check=True, capture_output=True)
        watch = subprocess.Popen(
            [binary, "assets", "watch", "--port", str(port)],
            cwd=package,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(300):
                try:
                    sock = socket.create_connection(("127.0.0.1", port))
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                sys.exit("the watcher never listened")
            assert received(sock, 10).startswith(b"cargo-assets-reload"), "no greeting"
            time.sleep(2)
            times = []
            for i in range(3):
                start = save_again(texture, i)
                if not select.select([sock], [], [], 60)[0]:
                    sys.exit("no notice within 60 s")
                times.append(time.perf_counter() - start)
                received(sock, 0.3)
                time.sleep(3)
        finally:
            watch.terminate()
            watch.wait()
    print(f"| {quality} | {', '.join(f'{t * 1000:.0f} ms' for t in times)} |")
