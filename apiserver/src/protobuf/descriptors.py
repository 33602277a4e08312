#!/usr/bin/env python3
"""Writes k8s-v1.35.pb, the FileDescriptorSet that protobuf/kinds.rs embeds:
the descriptors k8s-rs-pb compiles into its generated modules, taken from
their sources, as the crate's own file_descriptor() deadlocks (see kinds.rs).

    python3 descriptors.py ~/.cargo/registry/src/*/k8s-rs-pb-0.5.0/src/v1_35
"""
import glob
import re
import sys

LITERAL = re.compile(rb"static file_descriptor_proto_data: &'static \[u8\] = b\"(.*?)\";\n", re.S)
ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|n|r|t|0|\\|\"|'|\n\s*)")
SIMPLE = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"0": b"\0", b"\\": b"\\", b'"': b'"', b"'": b"'"}


def unescape(match):
    code = match.group(1)
    if code.startswith(b"x"):
        return bytes([int(code[1:], 16)])
    if code.startswith(b"\n"):  # a line continuation: skipped, with the indent
        return b""
    return SIMPLE[code]


def varint(n):
    out = bytearray()
    while True:
        out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def main(root):
    files = []
    for path in sorted(glob.glob(f"{root}/**/mod.rs", recursive=True)):
        if "/testapigroup/" in path:
            continue
        with open(path, "rb") as f:
            literal = LITERAL.search(f.read())
        if literal:
            files.append(ESCAPE.sub(unescape, literal.group(1)))
    # FileDescriptorSet { repeated FileDescriptorProto file = 1; }
    with open("k8s-v1.35.pb", "wb") as out:
        for data in files:
            out.write(b"\x0a" + varint(len(data)) + data)
    print(f"{len(files)} files")


main(sys.argv[1])
