# The fake gateway of scripts/lib/two-host/selftest/flapping: LAB_DIR PORT [broken]
import http.server, os, sys, time, json
LAB = sys.argv[1]; port = int(sys.argv[2]); broken = len(sys.argv) > 3
connects = [0]
state = {"up": False}
glog = open(os.path.join(LAB, "a-gateway.log"), "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_PUT(self):
        n = int(self.headers.get("Content-Length", 0)); self.rfile.read(n)
        backend = os.path.exists(os.path.join(LAB, "backend.up"))
        if backend and not state["up"]:
            glog.write("%f connected to the key-value server at x\n" % time.time())
            connects[0] += 1
        if not backend and state["up"]:
            glog.write("%f the connection to the key-value server closed\n" % time.time())
        state["up"] = backend
        if backend: self.send_response(204); self.end_headers()
        else:
            time.sleep(0.2); self.send_response(500 if broken else 503); self.end_headers()
    def do_GET(self):
        if self.path.startswith("/actuator/metrics/rdma.memory.registered"):
            v = 1.2345E7 + (4096 * connects[0] if broken else 0)
        elif self.path.startswith("/actuator/metrics/jvm.memory.used"):
            v = 5.0E7
        else:
            self.send_response(200); self.end_headers(); return
        b = json.dumps({"name": "x", "measurements": [{"statistic": "VALUE", "value": v}]}).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(b)
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
