#!/usr/bin/env python3
"""Saves a PNG of the page a Chromium started with --remote-debugging-port=PORT shows, through the
DevTools protocol's Page.captureScreenshot (the page's pixels as drawn, WebGL canvas included).

usage: bench/cdp_screenshot.py PORT OUT.png

Standard library only: a DevTools WebSocket needs one masked text frame out and a few frames
back, so a small client here saves a virtual environment for a picture.
"""

import base64
import json
import os
import socket
import struct
import sys
import urllib.request


def page_socket_url(port):
    """The WebSocket address of the browser's first page."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=10) as answer:
        targets = json.load(answer)
    pages = [t for t in targets if t.get("type") == "page"]
    if not pages:
        sys.exit("the browser shows no page")
    return pages[0]["webSocketDebuggerUrl"]


def connect(url):
    """An open WebSocket to `url` (ws://host:port/path), after the HTTP upgrade."""
    rest = url.removeprefix("ws://")
    address, _, path = rest.partition("/")
    host, _, port = address.partition(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /{path} HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            sys.exit("the browser closed the DevTools connection")
        answer += chunk
    if b" 101 " not in answer.split(b"\r\n", 1)[0]:
        sys.exit(f"the browser refused the DevTools connection: {answer[:80]!r}")
    return sock


def send_text(sock, text):
    """One masked text frame, as a client must send."""
    payload = text.encode()
    header = bytearray([0x81])
    if len(payload) < 126:
        header.append(0x80 | len(payload))
    elif len(payload) < 1 << 16:
        header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
    else:
        header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
    mask = os.urandom(4)
    sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def read_exactly(sock, count):
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            sys.exit("the browser closed the DevTools connection")
        data += chunk
    return bytes(data)


def receive_message(sock):
    """One whole message (fragments joined); the server's frames are unmasked."""
    message = bytearray()
    while True:
        first, second = read_exactly(sock, 2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack(">H", read_exactly(sock, 2))[0]
        elif length == 127:
            length = struct.unpack(">Q", read_exactly(sock, 8))[0]
        message += read_exactly(sock, length)
        if first & 0x80:
            return message.decode()


def main():
    port, out = sys.argv[1], sys.argv[2]
    sock = connect(page_socket_url(port))
    send_text(sock, json.dumps({"id": 1, "method": "Page.captureScreenshot", "params": {"format": "png"}}))
    while True:
        answer = json.loads(receive_message(sock))
        if answer.get("id") == 1:
            break
    if "result" not in answer:
        sys.exit(f"no screenshot: {answer.get('error')}")
    with open(out, "wb") as file:
        file.write(base64.b64decode(answer["result"]["data"]))
    print(f"screenshot: {out}")


if __name__ == "__main__":
    main()
