#!/usr/bin/env python3
"""kc_host.py -- the host side of the kernel-client tests that is easier in
Python than in shell (standard library only).

  kc_host.py getport PROG VERS [tcp|udp]
      Ask the portmapper on 127.0.0.1:111 (PMAP v2 GETPORT, over UDP with a
      TCP fallback) where PROG VERS is served; print the port (0: not
      registered). Exit 0 when the portmapper answered, 1 when it did not.

  kc_host.py listen PORT LOG HANDLER [ARG...]
      Serve 127.0.0.1:PORT (the guest reaches it as 10.0.2.2:PORT through
      qemu's network) until killed: for every connection read one line,
      run HANDLER ARG... WORDS-OF-THE-LINE, and send back the first line of
      its output (or "FAIL handler ..."). Every exchange goes to LOG.
"""

import os
import socket
import struct
import subprocess
import sys
import time

PMAP_PROG, PMAP_VERS, PMAP_GETPORT = 100000, 2, 3
IPPROTO = {"tcp": 6, "udp": 17}


def getport_call(prog, vers, proto, xid):
    # RPC call header (AUTH_NONE both) + GETPORT's mapping (prog, vers, prot, port)
    return struct.pack(">IIIIII IIII IIII", xid, 0, 2, PMAP_PROG, PMAP_VERS, PMAP_GETPORT,
                       0, 0, 0, 0, prog, vers, IPPROTO[proto], 0)


def parse_reply(data, xid):
    # xid, REPLY(1), MSG_ACCEPTED(0), verifier (flavor, len, body), SUCCESS(0), port
    if len(data) < 28:
        raise ValueError("short reply (%d bytes)" % len(data))
    rxid, mtype, stat, _flavor, vlen = struct.unpack(">IIIII", data[:20])
    off = 20 + ((vlen + 3) & ~3)
    if rxid != xid or mtype != 1 or stat != 0:
        raise ValueError("not an accepted reply to our call")
    accept, port = struct.unpack(">II", data[off:off + 8])
    if accept != 0:
        raise ValueError("call not executed (accept status %d)" % accept)
    return port


def getport(prog, vers, proto, deadline=30.0):
    end = time.time() + deadline
    xid = (os.getpid() << 8) & 0xffffffff
    last = "no answer"
    while time.time() < end:
        xid = (xid + 1) & 0xffffffff
        call = getport_call(prog, vers, proto, xid)
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(2.0)
                s.sendto(call, ("127.0.0.1", 111))
                return parse_reply(s.recv(4096), xid)
        except (OSError, ValueError) as e:
            last = "udp: %s" % e
        try:
            with socket.create_connection(("127.0.0.1", 111), timeout=5.0) as s:
                s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
                data = b""
                while True:
                    hdr = s.recv(4, socket.MSG_WAITALL)
                    if len(hdr) < 4:
                        raise ValueError("connection closed")
                    n = struct.unpack(">I", hdr)[0]
                    data += s.recv(n & 0x7fffffff, socket.MSG_WAITALL)
                    if n & 0x80000000:
                        break
                return parse_reply(data, xid)
        except (OSError, ValueError) as e:
            last = "tcp: %s" % e
        time.sleep(0.5)
    raise OSError("the portmapper on 127.0.0.1:111 did not answer within %.0f s (%s)"
                  % (deadline, last))


def listen(port, logpath, handler):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(4)
    with open(logpath, "a", buffering=1) as log:
        log.write("listening on 127.0.0.1:%d\n" % port)
        while True:
            conn, peer = srv.accept()
            with conn:
                conn.settimeout(300)
                line = b""
                try:
                    while not line.endswith(b"\n") and len(line) < 4096:
                        chunk = conn.recv(1)
                        if not chunk:
                            break
                        line += chunk
                except OSError as e:
                    log.write("%s: %s\n" % (peer, e))
                    continue
                words = line.decode(errors="replace").split()
                try:
                    p = subprocess.run(handler + words, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, timeout=240)
                    out = p.stdout.strip().splitlines()
                    answer = out[0] if out else "FAIL handler printed nothing (status %d)" % (
                        p.returncode)
                    detail = "\n  ".join(out[1:])
                except (OSError, subprocess.TimeoutExpired) as e:
                    answer, detail = "FAIL handler: %s" % e, ""
                log.write("asked: %s\nanswer: %s\n%s" % (" ".join(words), answer,
                                                           ("  " + detail + "\n") if detail else ""))
                try:
                    conn.sendall((answer + "\n").encode())
                except OSError as e:
                    log.write("reply to %s: %s\n" % (peer, e))


def main(argv):
    if len(argv) >= 3 and argv[0] == "getport":
        proto = argv[3] if len(argv) > 3 else "tcp"
        try:
            print(getport(int(argv[1]), int(argv[2]), proto))
        except OSError as e:
            print("kc_host: %s" % e, file=sys.stderr)
            return 1
        return 0
    if len(argv) >= 4 and argv[0] == "listen":
        listen(int(argv[1]), argv[2], argv[3:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
