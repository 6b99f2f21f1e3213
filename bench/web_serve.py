"""Serves web/ on 127.0.0.1 (WebGPU needs a secure context, which localhost is) and writes what
the page POSTs to /result or /failure into OUT_DIR/<kind>.json, for bench/web_check.sh; GET
/kept/run.tar answers with OUT_DIR/kept.tar (a run folder archive an earlier visit downloaded).

usage: python3 bench/web_serve.py WEB_DIR PORT OUT_DIR
"""

import http.server
import os
import pathlib
import sys

web_dir, port, out_dir = sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3])


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=web_dir, **kwargs)

    def do_GET(self):
        if self.path.split("?")[0] != "/kept/run.tar":
            return super().do_GET()
        kept = out_dir / "kept.tar"
        if not kept.exists():
            self.send_error(404)
            return
        body = kept.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-tar")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        kind = self.path.strip("/")
        if kind not in ("result", "failure"):
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        # web_check.sh reads the report as soon as its name appears, and a folder page's report
        # (its model three times over) is over 100 MB: written in place, a slow disk let it read
        # half of one. A rename makes the name appear only with the whole report behind it.
        partial = out_dir / f"{kind}.json.part"
        partial.write_bytes(body)
        os.replace(partial, out_dir / f"{kind}.json")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
