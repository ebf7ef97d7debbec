#!/usr/bin/env python3
"""What keeps a web page in the user's browser from using `collsim serve`
(docs/security.md, issue 29), against the real binary: the Host header must
name the server (DNS rebinding: 421), an Origin must be the server's own and
a cross-site fetch without one is refused (CSRF: 403), a POST's body must be
declared JSON (a form of another site cannot send that without a CORS
preflight: 415); --allow-host adds a reverse proxy's name.  Every request is
written header by header (http.client's putrequest), so that what a browser
would send, a missing Host included, is what the server sees.  Python's
standard library only; the server is started as tests/serve/test_api.py
starts it (its Server helper).
"""
import http.client
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_api import COLLSIM, SMALL, Server  # noqa: E402

DEFAULT = object()  # the Host a client of 127.0.0.1:PORT sends


def ask(server, method, path, body=None, headers=None, host=DEFAULT):
    """One request with exactly these headers (host None: no Host at all);
    returns (status, headers, parsed JSON or the raw bytes)."""
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    if host is DEFAULT:
        host = "127.0.0.1:%d" % server.port
    if host is not None:
        c.putheader("Host", host)
    for k, v in (headers or {}).items():
        c.putheader(k, v)
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    if body is not None:
        c.putheader("Content-Length", str(len(body)))
    c.endheaders(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    hdrs = dict((k.lower(), v) for k, v in r.getheaders())
    if hdrs.get("content-type", "").startswith("application/json"):
        data = json.loads(data)
    return r.status, hdrs, data


JSON = {"Content-Type": "application/json"}


class TestSecurity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Server("--jobs", "1", "--max-queue", "8")

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def refused(self, answer, code, text=None):
        status, headers, doc = answer
        self.assertEqual(status, code, doc)
        # the house format: a JSON error, never the page or a result
        self.assertTrue(headers["content-type"].startswith("application/json"), headers)
        self.assertEqual(doc["error"]["status"], "usage", doc)
        if text is not None:
            self.assertIn(text, doc["error"]["message"])
        # nothing that would let another origin read it
        self.assertNotIn("access-control-allow-origin", headers)

    def jobs(self):
        """Jobs made so far (queued, running, finished)."""
        status, _, doc = ask(self.s, "GET", "/api/health")
        self.assertEqual(status, 200, doc)
        return sum(doc["jobs"].values())

    # ---- CSRF: a form or fetch of another site ------------------------------

    def test_cross_origin_text_plain_post(self):
        # what a page of another site can send without a preflight: a form
        # (text/plain, urlencoded, multipart) or a simple fetch; its Origin
        # says where it comes from
        before = self.jobs()
        for ctype in ("text/plain", "application/x-www-form-urlencoded",
                      "multipart/form-data; boundary=x"):
            self.refused(ask(self.s, "POST", "/api/run", SMALL,
                             {"Content-Type": ctype, "Origin": "http://evil.example"}),
                         403, "Origin 'http://evil.example'")
            # an older browser sending no Origin: the body type alone refuses it
            self.refused(ask(self.s, "POST", "/api/run", SMALL, {"Content-Type": ctype}),
                         415, "application/json")
        self.assertEqual(self.jobs(), before, "a refused POST made a job")

    def test_post_without_content_type(self):
        self.refused(ask(self.s, "POST", "/api/run", SMALL), 415, "application/json")
        self.refused(ask(self.s, "POST", "/api/compare", {"machines": ["loggp:p=8"]}), 415)
        self.refused(ask(self.s, "POST", "/api/run", SMALL, {"Content-Type": "application/jsonx"}),
                     415)
        self.refused(ask(self.s, "POST", "/api/run", SMALL, {"Content-Type": ""}), 415)
        # the media type is case-insensitive, parameters are allowed
        for ctype in ("application/json", "Application/JSON", "application/json; charset=utf-8",
                      " application/json ;charset=UTF-8"):
            status, _, doc = ask(self.s, "POST", "/api/run", SMALL, {"Content-Type": ctype})
            self.assertIn(status, (200, 202), (ctype, doc))

    def test_foreign_origin(self):
        port = self.s.port
        for origin in ("http://evil.example", "null", "http://127.0.0.1:%d.evil.example" % port,
                       "http://127.0.0.1:%d" % (port + 1 if port < 65535 else 1),
                       "ftp://127.0.0.1:%d" % port, "127.0.0.1:%d" % port):
            for method, path, body in (("GET", "/api/health", None), ("GET", "/", None),
                                       ("POST", "/api/run", SMALL),
                                       ("DELETE", "/api/jobs/0123456789abcdef", None),
                                       ("OPTIONS", "/api/run", None)):
                h = {"Origin": origin}
                if body is not None:
                    h.update(JSON)
                self.refused(ask(self.s, method, path, body, h), 403, "Origin")

    def test_own_origin(self):
        port = self.s.port
        # what the page itself sends: its origin on POST and DELETE
        for host, origin in (("127.0.0.1:%d" % port, "http://127.0.0.1:%d" % port),
                             ("localhost:%d" % port, "http://localhost:%d" % port),
                             ("[::1]:%d" % port, "http://[::1]:%d" % port)):
            h = dict(JSON, Origin=origin)
            status, headers, doc = ask(self.s, "POST", "/api/run", SMALL, h, host=host)
            self.assertIn(status, (200, 202), (host, doc))
            status, _, doc = ask(self.s, "GET", "/api/jobs/" + doc["id"], None,
                                 {"Origin": origin, "Sec-Fetch-Site": "same-origin"}, host=host)
            self.assertEqual(status, 200, doc)

    def test_sec_fetch_site(self):
        # a cross-site fetch or <img> with no Origin (a GET): refused
        for path in ("/api/health", "/api/machines", "/api/jobs/0123456789abcdef/heatmap.png"):
            self.refused(ask(self.s, "GET", path, None, {"Sec-Fetch-Site": "cross-site"}), 403,
                         "cross-site")
            self.refused(ask(self.s, "GET", path, None, {"Sec-Fetch-Site": "cross-site",
                                                         "Sec-Fetch-Mode": "no-cors",
                                                         "Sec-Fetch-Dest": "image"}), 403)
        # a frame of another site is not a link followed
        self.refused(ask(self.s, "GET", "/", None, {"Sec-Fetch-Site": "cross-site",
                                                    "Sec-Fetch-Mode": "navigate",
                                                    "Sec-Fetch-Dest": "iframe"}), 403)
        # the page's own requests, a URL typed, a link followed from elsewhere
        for site in ("same-origin", "none"):
            status, _, _ = ask(self.s, "GET", "/api/health", None, {"Sec-Fetch-Site": site})
            self.assertEqual(status, 200, site)
        status, headers, page = ask(self.s, "GET", "/", None, {
            "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate",
            "Sec-Fetch-Dest": "document"})
        self.assertEqual(status, 200)
        self.assertIn(b"<title>", page)
        # never shown inside another site's frame
        self.assertEqual(headers["x-frame-options"], "DENY")
        self.assertEqual(headers["content-security-policy"], "frame-ancestors 'none'")

    # ---- DNS rebinding: a name of the attacker's, resolving to 127.0.0.1 ------

    def test_wrong_host(self):
        port = self.s.port
        for host in ("evil.example:%d" % port, "evil.example", "127.0.0.1",
                     "127.0.0.1:%d" % (port + 1 if port < 65535 else 1), "127.0.0.2:%d" % port,
                     "localhost.:%d" % port, "127.0.0.1:%d@evil.example" % port, ""):
            for method, path, body in (("GET", "/", None), ("GET", "/api/health", None),
                                       ("POST", "/api/run", SMALL)):
                answer = ask(self.s, method, path, body, JSON if body else None, host=host)
                self.refused(answer, 421, "is not a name of this server")
                # the refusal says which names the server answers to
                self.assertIn("127.0.0.1:%d" % port, answer[2]["error"]["message"])

    def test_dns_rebinding(self):
        # the page at http://attacker.example:PORT/, its name rebound to
        # 127.0.0.1: to the browser every request is same-origin, so it
        # sends the attacker's name as Host (and as Origin on a POST)
        port = self.s.port
        host = "attacker.example:%d" % port
        before = self.jobs()
        self.refused(ask(self.s, "GET", "/", host=host), 421)
        self.refused(ask(self.s, "GET", "/api/health", None, {"Sec-Fetch-Site": "same-origin"},
                         host=host), 421)
        self.refused(ask(self.s, "POST", "/api/run", SMALL,
                         dict(JSON, Origin="http://" + host, **{"Sec-Fetch-Site": "same-origin"}),
                         host=host), 421)
        self.refused(ask(self.s, "GET", "/api/jobs/0123456789abcdef/result", host=host), 421)
        self.assertEqual(self.jobs(), before)

    def test_missing_or_repeated_host(self):
        for method, path, body in (("GET", "/", None), ("GET", "/api/health", None),
                                   ("POST", "/api/run", SMALL)):
            self.refused(ask(self.s, method, path, body, JSON if body else None, host=None), 400,
                         "no Host")
        self.refused(ask(self.s, "GET", "/api/health", None,
                         {"Host": "evil.example:%d" % self.s.port}), 400, "several Host")

    def test_loopback_names(self):
        port = self.s.port
        for host in ("127.0.0.1:%d" % port, "localhost:%d" % port, "LocalHost:%d" % port,
                     "[::1]:%d" % port):
            status, _, doc = ask(self.s, "GET", "/api/health", host=host)
            self.assertEqual(status, 200, (host, doc))


class TestAllowHost(unittest.TestCase):
    def test_allow_host(self):
        s = Server("--allow-host", "proxy.example", "--allow-host", "alt.example:8443")
        try:
            port = s.port
            # a proxy passing the public name on (no port: https on 443), or
            # the name with the server's port
            for host in ("proxy.example", "Proxy.Example", "proxy.example:%d" % port,
                         "alt.example:8443", "127.0.0.1:%d" % port):
                status, _, doc = ask(s, "GET", "/api/health", host=host)
                self.assertEqual(status, 200, (host, doc))
            # the page behind the proxy: its origin is https://proxy.example
            status, _, doc = ask(s, "POST", "/api/run", SMALL,
                                 dict(JSON, Origin="https://proxy.example"), host="proxy.example")
            self.assertIn(status, (200, 202), doc)
            status, _, doc = ask(s, "POST", "/api/run", SMALL,
                                 dict(JSON, Origin="https://alt.example:8443"),
                                 host="alt.example:8443")
            self.assertIn(status, (200, 202), doc)
            # other names, other ports of a name given with one, other origins
            for host in ("other.example", "alt.example", "alt.example:%d" % port,
                         "proxy.example:1"):
                status, _, doc = ask(s, "GET", "/api/health", host=host)
                self.assertEqual(status, 421, (host, doc))
            status, _, doc = ask(s, "POST", "/api/run", SMALL,
                                 dict(JSON, Origin="https://evil.example"), host="proxy.example")
            self.assertEqual(status, 403, doc)
        finally:
            s.stop()

    def test_bad_allow_host(self):
        for bad in ("", "a/b", "proxy.example:0", "proxy.example:65536", "proxy.example:8k",
                    "::1", "[::1", "[zz]:80", "proxy.example:", "http://proxy.example"):
            r = subprocess.run([COLLSIM, "serve", "--port", "0", "--allow-host", bad],
                               capture_output=True, text=True, timeout=20)
            self.assertEqual(r.returncode, 2, (bad, r.stdout, r.stderr))
            self.assertIn("--allow-host", r.stderr, bad)
        r = subprocess.run([COLLSIM, "serve", "--help"], capture_output=True, text=True)
        self.assertIn("--allow-host", r.stdout)


if __name__ == "__main__":
    t0 = time.time()
    result = unittest.main(exit=False, verbosity=2).result
    print("test_security.py: %.1f s" % (time.time() - t0))
    sys.exit(0 if result.wasSuccessful() else 1)
