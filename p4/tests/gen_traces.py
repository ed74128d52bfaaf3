#!/usr/bin/env python3
"""Generates the STF conformance traces in p4/tests/ (see README.md there).

Every expected frame is computed by a small reference model of the switch (class Switch),
written from docs/protocol.md section 4 plus the P4 program's frame handling, so no byte is
typed by hand. The output is deterministic (fixed seeds, no clock): rerunning must leave
the .stf files unchanged.

    python3 p4/tests/gen_traces.py          # rewrite p4/tests/*.stf
    python3 p4/tests/gen_traces.py --check  # exit 1 if a committed trace differs
"""
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ----------------------------------------------------------------------------- addressing
# STF port p (1..8) is one worker host: MAC 02:00:00:00:00:0p, IPv4 10.0.0.p, UDP port 50000+p.
# The switch: MAC 02:00:00:00:00:fe, IPv4 10.0.0.254, lanes 0xBEE0..0xBEEF.
SWITCH_MAC = 0x0200000000FE
SWITCH_IP = 0x0A0000FE
LANE = 0xBEE0
K = 64
HDR = 24             # SwitchML header bytes; the payload starts at datagram offset 24
NONE = -32768
POOL_SLOTS = 2048

DROP_NAMES = ["MALFORMED", "UNKNOWN_JOB", "STALE_GENERATION", "UNKNOWN_SENDER", "WRONG_K",
              "BAD_SLOT", "STALE_SEQ", "DUPLICATE_PENDING", "BAD_SECRET", "NOT_SWITCHML"]
DROP = {name: i for i, name in enumerate(DROP_NAMES)}


def host_mac(port):
    return 0x020000000000 | port


def host_ip(port):
    return 0x0A000000 | port


def host_udp(port):
    return 50000 + port


# ----------------------------------------------------------------------------- frames
def csum16(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4_header(src, dst, total_len, ident, ttl=64, proto=17, ihl=5, flags_frag=0x4000,
                checksum=None, options=b""):
    hdr = struct.pack("!BBHHHBBHII", (4 << 4) | ihl, 0, total_len, ident, flags_frag, ttl,
                      proto, 0, src, dst) + options
    c = csum16(hdr) if checksum is None else checksum
    return hdr[:10] + struct.pack("!H", c) + hdr[12:]


def sml_header(kind, set_id, enc, k, job, gen, rank, slot, exponent, seq, secret, version=1):
    return struct.pack("!BBHIHBBHhII", (version << 4) | kind, (set_id << 7) | enc, k, job, gen,
                       rank, 0, slot, exponent, seq, secret)


def payload_bytes(values):
    return b"".join(struct.pack("!I", v & 0xFFFFFFFF) for v in values)


def frame(eth_dst, eth_src, ip_src, ip_dst, sport, dport, datagram, ident=1, udp_len=None,
          ip_len=None, ip_checksum=None, ihl=5, options=b""):
    udp_len = 8 + len(datagram) if udp_len is None else udp_len
    ip_len = 4 * ihl + 8 + len(datagram) if ip_len is None else ip_len
    eth = struct.pack("!6s6sH", eth_dst.to_bytes(6, "big"), eth_src.to_bytes(6, "big"), 0x0800)
    ip = ipv4_header(ip_src, ip_dst, ip_len, ident, ihl=ihl, checksum=ip_checksum,
                     options=options)
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0)
    return eth + ip + udp + datagram


# ----------------------------------------------------------------------------- model
class Job:
    def __init__(self, job_id, gen, secret, ports, pool_base, pool_size, mcast, index, k=K):
        self.job_id, self.gen, self.secret, self.ports = job_id, gen, secret, list(ports)
        self.n = len(ports)
        self.pool_base, self.pool_size, self.mcast, self.index = pool_base, pool_size, mcast, index
        self.k = k


class Switch:
    """Reference model: what switchml.p4 does to one frame (docs/protocol.md section 4)."""

    def __init__(self):
        self.jobs = {}
        self.owner = {}   # pool index -> (job, gen, secret)
        self.sets = {}    # set index -> dict(bitmap, count, seq, used, exp, sums)
        self.drops = []   # reason names, in order

    def add_job(self, job):
        self.jobs[job.job_id] = job

    def _set(self, idx):
        return self.sets.setdefault(idx, dict(bitmap=0, count=0, seq=0, used=0, exp=0,
                                              sums=[0] * K))

    def process(self, port, raw):
        """Returns [(port, frame)] sent, or [] with the drop reason recorded (None if consumed)."""
        reason, out = self._process(port, raw)
        if reason is not None:
            self.drops.append(reason)
        return reason, out

    def _process(self, in_port, raw):
        # --- parser
        if len(raw) < 14 or struct.unpack("!H", raw[12:14])[0] != 0x0800 or len(raw) < 34:
            return "NOT_SWITCHML", []
        ip = raw[14:34]
        ihl, proto = ip[0] & 0x0F, ip[9]
        frag = struct.unpack("!H", ip[6:8])[0] & 0x1FFF
        if ihl != 5 or frag != 0 or proto != 17 or len(raw) < 42:
            return "NOT_SWITCHML", []
        sport, dport, ulen, _ = struct.unpack("!HHHH", raw[34:42])
        if dport & 0xFFF0 != LANE:
            return "NOT_SWITCHML", []
        if len(raw) < 42 + HDR or csum16(ip) != 0:
            return "MALFORMED", []       # parser error or checksum error
        b0, b1, k, job_id, gen, rank, _, slot, exp, seq, secret = struct.unpack(
            "!BBHIHBBHhII", raw[42:42 + HDR])
        payload = None
        if ulen == 8 + HDR + 4 * K:
            if len(raw) < 42 + HDR + 4 * K:
                return "MALFORMED", []   # parser error
            payload = list(struct.unpack("!%dI" % K, raw[42 + HDR:42 + HDR + 4 * K]))
        ip_len = struct.unpack("!H", ip[2:4])[0]
        if (b0 >> 4) != 1 or (b0 & 0xF) != 1 or ulen != 8 + HDR + 4 * k or ip_len != ulen + 20:
            return "MALFORMED", []
        job = self.jobs.get(job_id)
        if job is None:
            return "UNKNOWN_JOB", []
        if secret != job.secret:
            return "BAD_SECRET", []      # before anything else of the job is looked at
        if gen != job.gen:
            return "STALE_GENERATION", []
        src_ip, src_port = struct.unpack("!I", ip[12:16])[0], sport
        ranks = [r for r, p in enumerate(job.ports) if (host_ip(p), host_udp(p)) == (src_ip, src_port)]
        if not ranks or ranks[0] != rank or rank >= job.n:
            return "UNKNOWN_SENDER", []
        if k != job.k or k != K:
            return "WRONG_K", []
        if slot >= job.pool_size or job.pool_base + slot >= POOL_SLOTS:
            return "BAD_SLOT", []
        # --- aggregation (step 8)
        pool = job.pool_base + slot
        s = b1 >> 7
        idx, other = 2 * pool + s, 2 * pool + (1 - s)
        if self.owner.get(pool, (0, 0, 0)) != (job_id, gen, secret):
            self.owner[pool] = (job_id, gen, secret)
            for i in (idx, other):
                st = self._set(i)
                st["bitmap"], st["count"], st["used"] = 0, 0, 0
        st, ot = self._set(idx), self._set(other)
        b = 1 << rank
        if st["bitmap"] == 0:
            age = (seq - st["seq"]) & 0xFFFFFFFF
            if st["used"] and (age == 0 or age >= 0x80000000):
                return "STALE_SEQ", []
            st.update(bitmap=b, count=1, seq=seq, used=1, exp=exp, sums=list(payload))
            ot["bitmap"] &= ~b
            complete = job.n == 1
        elif seq != st["seq"]:
            return "STALE_SEQ", []
        elif st["bitmap"] & b == 0 and st["count"] == job.n:
            return "STALE_SEQ", []       # late copy of a finished use
        elif st["bitmap"] & b == 0:
            st["bitmap"] |= b
            ot["bitmap"] &= ~b
            st["count"] += 1
            st["exp"] = max(st["exp"], exp)
            st["sums"] = [(a + p) & 0xFFFFFFFF for a, p in zip(st["sums"], payload)]
            complete = st["count"] == job.n
        else:
            if st["count"] != job.n:
                return "DUPLICATE_PENDING", []
            # RETRANSMIT_RESULT: swap every address, back out of the ingress port.
            eth_dst, eth_src = raw[0:6], raw[6:12]
            body = self._result(raw, 3, st, eth_dst=int.from_bytes(eth_src, "big"),
                                eth_src=int.from_bytes(eth_dst, "big"),
                                ip_src=struct.unpack("!I", ip[16:20])[0], ip_dst=src_ip,
                                sport=dport, dport=sport)
            return None, [(in_port, body)]
        if not complete:
            return None, []
        out = []
        for r, p in enumerate(job.ports):   # one multicast copy per rank (rid = rank)
            out.append((p, self._result(raw, 2, st, eth_dst=host_mac(p),
                                        eth_src=int.from_bytes(raw[0:6], "big"),
                                        ip_src=struct.unpack("!I", ip[16:20])[0],
                                        ip_dst=host_ip(p), sport=dport, dport=host_udp(p))))
        return None, out

    @staticmethod
    def _result(raw, kind, st, eth_dst, eth_src, ip_src, ip_dst, sport, dport):
        ip = bytearray(raw[14:34])
        ip[12:16] = struct.pack("!I", ip_src)
        ip[16:20] = struct.pack("!I", ip_dst)
        ip[10:12] = b"\0\0"
        ip[10:12] = struct.pack("!H", csum16(bytes(ip)))
        udp = struct.pack("!HHHH", sport, dport, struct.unpack("!H", raw[38:40])[0], 0)
        sml = bytearray(raw[42:42 + HDR])   # the secret travels back too
        sml[0] = (1 << 4) | kind
        sml[14:16] = struct.pack("!h", st["exp"])
        eth = struct.pack("!6s6sH", eth_dst.to_bytes(6, "big"), eth_src.to_bytes(6, "big"), 0x0800)
        return eth + bytes(ip) + udp + bytes(sml) + payload_bytes(st["sums"])


# ----------------------------------------------------------------------------- STF writer
def hexgroups(raw):
    """Ethernet | IPv4 | UDP | SwitchML header | payload, one 4-byte group per element."""
    parts = [raw[0:14], raw[14:34], raw[34:42], raw[42:42 + HDR]]
    rest = raw[42 + HDR:]
    parts += [rest[i:i + 4] for i in range(0, len(rest), 4)]
    return " ".join(p.hex() for p in parts if p)


class Trace:
    def __init__(self, name, title, covers):
        self.name, self.sw, self.lines = name, Switch(), []
        self.ident = {}
        self.lines.append("# %s.stf: %s" % (name, title))
        self.lines.append("# Generated by p4/tests/gen_traces.py; do not edit. Addressing: p4/tests/README.md.")
        for c in covers:
            self.lines.append("# covers: " + c)
        self.mc_handle = 0
        self.jobs = {}

    def comment(self, text):
        self.lines.append("")
        self.lines.append("# " + text)

    def job(self, job_id, gen, secret, ports, pool_base, pool_size, mcast, index, k=K):
        j = Job(job_id, gen, secret, ports, pool_base, pool_size, mcast, index, k)
        self.sw.add_job(j)
        self.jobs[job_id] = j
        self.comment("job %d: generation %d, secret 0x%08x, n=%d, pool [%d, %d), multicast group %d, "
                     "job_index %d, ranks on STF ports %s" % (job_id, gen, secret, j.n, pool_base,
                                                               pool_base + pool_size, mcast, index, ports))
        self.lines.append(
            "add SwitchMLIngress.job_table hdr.switchml.job_id:%d SwitchMLIngress.set_job("
            "generation:%d, num_workers:%d, pool_base:%d, pool_size:%d, mcast_grp:%d, job_index:%d, k:%d, "
            "secret:0x%08x)" % (job_id, gen, j.n, pool_base, pool_size, mcast, index, k, secret))
        for r, p in enumerate(ports):
            self.lines.append(
                "add SwitchMLIngress.worker_table hdr.switchml.job_id:%d hdr.ipv4.src_addr:0x%08x "
                "hdr.udp.src_port:%d SwitchMLIngress.set_worker(rank:%d, bitmap_bit:0x%08x)"
                % (job_id, host_ip(p), host_udp(p), r, 1 << r))
        for r, p in enumerate(ports):
            self.lines.append(
                "add SwitchMLEgress.result_table hdr.switchml.job_id:%d standard_metadata.egress_rid:%d "
                "SwitchMLEgress.set_result_dest(dst_mac:0x%012x, dst_ip:0x%08x, dst_port:%d)"
                % (job_id, r, host_mac(p), host_ip(p), host_udp(p)))
        self.lines.append("mc_mgrp_create %d" % mcast)
        handles = []
        for r, p in enumerate(ports):
            self.lines.append("mc_node_create %d %d" % (r, p))   # rid = rank, one port
            handles.append(self.mc_handle)
            self.mc_handle += 1
        for h in handles:
            self.lines.append("mc_node_associate %d %d" % (mcast, h))

    def contribution(self, job_id, rank, g, S, values, exponent=NONE, enc=0, lane=LANE, **kw):
        """Frame of packet g of a rank: slot g mod S, set (g div S) mod 2, seq g."""
        j = self.jobs[job_id]
        port = j.ports[rank] if rank < j.n else kw.pop("port")
        return self.raw(port, job_id, rank, g % S, (g // S) % 2, g, values, exponent, enc, lane,
                        gen=kw.pop("gen", j.gen), **kw)

    def raw(self, port, job_id, rank, slot, set_id, seq, values, exponent=NONE, enc=0, lane=LANE,
            gen=0, k=K, kind=1, version=1, src_ip=None, src_port=None, truncate=None, secret=None,
            **kw):
        """A contribution frame; secret defaults to the job's (0 for a job the trace does not know)."""
        if secret is None:
            secret = self.jobs[job_id].secret if job_id in self.jobs else 0
        self.ident[port] = self.ident.get(port, 0) + 1
        dgram = sml_header(kind, set_id, enc, k, job_id, gen, rank, slot, exponent, seq, secret,
                           version=version) + payload_bytes(values)
        f = frame(SWITCH_MAC, host_mac(port), host_ip(port) if src_ip is None else src_ip,
                  SWITCH_IP, host_udp(port) if src_port is None else src_port, lane, dgram,
                  ident=self.ident[port], **kw)
        return port, (f if truncate is None else f[:truncate])

    def send(self, pkt, text):
        port, raw = pkt
        reason, out = self.sw.process(port, raw)
        if reason is not None:
            text += "  ->  dropped: %s (drop_reason[%d])" % (reason, DROP[reason])
        elif not out:
            text += "  ->  consumed, nothing sent"
        else:
            kinds = {2: "RESULT", 3: "RETRANSMIT_RESULT"}
            text += "  ->  %s to STF port(s) %s" % (kinds[out[0][1][42] & 0xF],
                                                     ", ".join(str(p) for p, _ in out))
        self.comment(text)
        self.lines.append("packet %d %s" % (port, hexgroups(raw)))
        for p, f in out:
            self.lines.append("expect %d %s" % (p, hexgroups(f)))
        return reason, out

    def text(self):
        counts = {}
        for r in self.sw.drops:
            counts[r] = counts.get(r, 0) + 1
        self.lines.append("")
        self.lines.append("# end of trace; drops by reason: " + (", ".join(
            "%s=%d" % (r, counts[r]) for r in DROP_NAMES if r in counts) or "none"))
        return "\n".join(self.lines) + "\n"


def vec(rng, lo=-1000000, hi=1000000):
    return [rng.randint(lo, hi) for _ in range(K)]


# ----------------------------------------------------------------------------- traces
# Secrets are fixed here (a controller draws them at random); one has its top bit set.
JOB_A = dict(job_id=1, gen=1, secret=0x9E3779B9, ports=[1, 2, 3], pool_base=0, pool_size=4, mcast=1,
             index=0)
JOB_B = dict(job_id=2, gen=7, secret=0x7F4A7C15, ports=[4, 5], pool_base=4, pool_size=4, mcast=2,
             index=1)


def basic_n3():
    t = Trace("basic_n3", "one job of three workers, first / middle / last contribution",
              ["first contribution overwrites, middle adds, last completes and multicasts RESULT",
               "32-bit wrap-around of sums; signed max of exponents with NONE smallest",
               "arrival order independent of rank; result UDP source port = lane port used"])
    t.job(**JOB_A)
    S = 4
    rng = random.Random(1)
    special = [[0x7FFFFFFF, -1, -2147483648, 5], [1, -1, -1, -5], [0, -1, -1, 0]]
    v = [special[r] + vec(rng)[4:] for r in range(3)]
    t.send(t.contribution(1, 0, 0, S, v[0], exponent=-3), "g=0 slot 0 set 0: rank 0 (first), exponent -3")
    t.send(t.contribution(1, 1, 0, S, v[1], exponent=NONE), "g=0: rank 1 (middle), exponent NONE")
    t.send(t.contribution(1, 2, 0, S, v[2], exponent=2), "g=0: rank 2 (last), exponent 2: slot complete")
    w = [vec(rng) for _ in range(3)]
    t.send(t.contribution(1, 2, 1, S, w[2], exponent=-100, enc=1, lane=0xBEE5),
           "g=1 slot 1 set 0 on lane 0xBEE5, enc FP32_BLOCK: rank 2 first, exponent -100")
    t.send(t.contribution(1, 0, 1, S, w[0], exponent=NONE, enc=1, lane=0xBEE5), "g=1: rank 0, exponent NONE")
    t.send(t.contribution(1, 1, 1, S, w[1], exponent=-101, enc=1, lane=0xBEE5),
           "g=1: rank 1 last, exponent -101: result exponent -100, UDP source port 0xBEE5")
    return t


def retransmission():
    t = Trace("retransmission", "retransmissions before and after completion",
              ["retransmission of a pending slot is dropped (DUPLICATE_PENDING)",
               "retransmission of a completed slot is answered by unicast RETRANSMIT_RESULT "
               "(kind 3, rank = requester) out of the ingress port, addresses swapped"])
    t.job(**JOB_A)
    S = 4
    rng = random.Random(2)
    v = [vec(rng) for _ in range(3)]
    t.send(t.contribution(1, 0, 2, S, v[0], exponent=4), "g=2 slot 2 set 0: rank 0")
    t.send(t.contribution(1, 0, 2, S, v[0], exponent=4), "g=2: rank 0 again (retransmission, slot pending)")
    t.send(t.contribution(1, 1, 2, S, v[1], exponent=6), "g=2: rank 1")
    t.send(t.contribution(1, 1, 2, S, v[1], exponent=6), "g=2: rank 1 again (retransmission, slot pending)")
    t.send(t.contribution(1, 2, 2, S, v[2], exponent=5), "g=2: rank 2 completes")
    t.send(t.contribution(1, 1, 2, S, v[1], exponent=6), "g=2: rank 1 retransmits after completion")
    t.send(t.contribution(1, 2, 2, S, v[2], exponent=5), "g=2: rank 2 (the completer) retransmits")
    t.send(t.contribution(1, 0, 2, S, v[0], exponent=4), "g=2: rank 0 retransmits")
    return t


def shadow_sets():
    t = Trace("shadow_sets", "one slot used with set 0, then set 1, then set 0 again",
              ["consecutive uses of slot 0 alternate sets (g = 0, 4, 8, 12 with S = 4)",
               "first contributor of a reused set overwrites the old sums",
               "the other set keeps its result for late retransmissions",
               "STALE_SEQ: delayed packet of an old use with the set busy, with the set idle, and a "
               "late copy of a finished use whose sender already moved on"])
    t.job(**JOB_A)
    S = 4
    rng = random.Random(3)
    vals = {g: [vec(rng) for _ in range(3)] for g in (0, 4, 8, 12)}
    for g in (0, 4):
        for r in range(3):
            t.send(t.contribution(1, r, g, S, vals[g][r]),
                   "g=%d slot 0 set %d: rank %d" % (g, (g // S) % 2, r))
    t.send(t.contribution(1, 0, 8, S, vals[8][0]), "g=8 slot 0 set 0 (reused): rank 0 overwrites")
    t.send(t.contribution(1, 1, 4, S, vals[4][1]),
           "g=4: rank 1 retransmits the set-1 use it missed: stored result still there")
    t.send(t.contribution(1, 2, 0, S, vals[0][2]), "g=0: delayed copy from rank 2 while set 0 holds g=8")
    for r in (1, 2):
        t.send(t.contribution(1, r, 8, S, vals[8][r]), "g=8: rank %d" % r)
    t.send(t.contribution(1, 0, 12, S, vals[12][0]), "g=12 slot 0 set 1: rank 0 (clears its bit in set 0)")
    t.send(t.contribution(1, 0, 8, S, vals[8][0]),
           "g=8: delayed copy from rank 0, set 0 complete but still busy (late copy of a finished use)")
    t.send(t.contribution(1, 1, 8, S, vals[8][1]),
           "g=8: rank 1 retransmits: the stored result is intact")
    for r in (1, 2):
        t.send(t.contribution(1, r, 12, S, vals[12][r]), "g=12 slot 0 set 1: rank %d" % r)
    t.send(t.contribution(1, 0, 8, S, vals[8][0]),
           "g=8: delayed copy from rank 0 after every rank moved to g=12 (set 0 idle)")
    return t


def unknown_sender():
    t = Trace("unknown_sender", "contributions from endpoints that are not the claimed rank",
              ["UNKNOWN_SENDER: unregistered UDP source port, unregistered IPv4 address, "
               "registered endpoint claiming another rank, rank >= n",
               "dropped packets leave the slot untouched"])
    t.job(**JOB_A)
    S = 4
    rng = random.Random(4)
    bad = vec(rng)
    v = [vec(rng) for _ in range(3)]
    t.send(t.raw(1, 1, 0, 0, 0, 0, bad, gen=1, src_port=50009),
           "rank 0 from STF port 1 but UDP source port 50009 (not registered)")
    t.send(t.raw(1, 1, 0, 0, 0, 0, bad, gen=1, src_ip=0x0A000009),
           "rank 0 from STF port 1 but source 10.0.0.9 (not registered)")
    t.send(t.raw(2, 1, 0, 0, 0, 0, bad, gen=1), "STF port 2 (rank 1's endpoint) claims rank 0")
    t.send(t.raw(3, 1, 3, 0, 0, 0, bad, gen=1), "STF port 3 claims rank 3 (n = 3)")
    for r in range(3):
        t.send(t.contribution(1, r, 0, S, v[r]), "g=0 slot 0: rank %d (valid)" % r)
    return t


def malformed():
    t = Trace("malformed", "SwitchML datagrams that are not well-formed contributions",
              ["MALFORMED: datagram shorter than the header, length != 24 + 4k (short and long), "
               "version != 1, kind RESULT / RETRANSMIT_RESULT sent to the switch",
               "all expressible as plain UDP datagrams; frame-level cases are in malformed_l3.stf"])
    t.job(**JOB_A)
    S = 4
    rng = random.Random(5)
    v = [vec(rng) for _ in range(3)]
    p = t.raw(1, 1, 0, 0, 0, 0, v[0], gen=1)
    short = frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, p[1][42:54])
    t.send((1, short), "12-byte datagram (shorter than the 24-byte header)")
    cut = frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, p[1][42:62])
    t.send((1, cut), "20-byte datagram (the header without its secret)")
    dgram = p[1][42:]
    t.send((1, frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, dgram[:-4])),
           "k = 64 but only 63 elements (276-byte datagram)")
    t.send((1, frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, dgram + b"\0" * 4)),
           "k = 64 but 65 elements (284-byte datagram)")
    t.send(t.raw(1, 1, 0, 0, 0, 0, v[0], gen=1, version=2), "version 2")
    t.send(t.raw(1, 1, 0, 0, 0, 0, v[0], gen=1, kind=2), "kind 2 (RESULT) sent to the switch")
    t.send(t.raw(1, 1, 0, 0, 0, 0, v[0], gen=1, kind=3), "kind 3 (RETRANSMIT_RESULT) sent to the switch")
    for r in range(3):
        t.send(t.contribution(1, r, 0, S, v[r]), "g=0 slot 0: rank %d (valid)" % r)
    return t


def malformed_l3():
    t = Trace("malformed_l3", "frames a UDP socket cannot produce (P4 only)",
              ["MALFORMED: bad IPv4 header checksum, IPv4 total length disagreeing with the UDP "
               "length, frame cut inside the payload",
               "NOT_SWITCHML: UDP to another port, IPv4 with options, non-IPv4 frame",
               "a Java runner over UDP sockets skips this file"])
    t.job(**JOB_A)
    S = 4
    rng = random.Random(6)
    v = [vec(rng) for _ in range(3)]
    dgram = t.raw(1, 1, 0, 0, 0, 0, v[0], gen=1)[1][42:]
    t.send((1, frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, dgram,
                     ip_checksum=0x1234)), "IPv4 header checksum wrong")
    t.send((1, frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, dgram,
                     ip_len=20 + 8 + 280 + 4)), "IPv4 total length 4 bytes longer than the UDP datagram")
    t.send((1, frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, dgram)[:66 + 100]),
           "frame cut after 25 payload elements (UDP length still says 288)")
    t.send((1, frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), 53, dgram)),
           "UDP to port 53")
    t.send((1, frame(SWITCH_MAC, host_mac(1), host_ip(1), SWITCH_IP, host_udp(1), LANE, dgram,
                     ihl=6, options=b"\x01\x01\x01\x00")), "IPv4 with 4 bytes of options")
    arp = struct.pack("!6s6sH", b"\xff" * 6, host_mac(1).to_bytes(6, "big"), 0x0806) + \
        struct.pack("!HHBBH6sI6sI", 1, 0x0800, 6, 4, 1, host_mac(1).to_bytes(6, "big"),
                    host_ip(1), b"\0" * 6, SWITCH_IP)
    t.send((1, arp), "ARP request")
    for r in range(3):
        t.send(t.contribution(1, r, 0, S, v[r]), "g=0 slot 0: rank %d (valid)" % r)
    return t


def job_checks():
    t = Trace("job_checks", "well-formed contributions rejected by the job's parameters",
              ["UNKNOWN_JOB, STALE_GENERATION, WRONG_K (k = 32, consistent length), "
               "BAD_SLOT (slot = S)", "dropped packets leave the slot untouched"])
    t.job(**JOB_A)
    S = 4
    rng = random.Random(7)
    v = [vec(rng) for _ in range(3)]
    t.send(t.raw(1, 99, 0, 0, 0, 0, v[0], gen=1), "job 99 (not installed)")
    t.send(t.raw(1, 1, 0, 0, 0, 0, v[0], gen=0), "job 1, generation 0 (job is at 1)")
    t.send(t.raw(1, 1, 0, 0, 0, 0, v[0][:32], gen=1, k=32), "k = 32, datagram 24 + 128 bytes")
    t.send(t.raw(1, 1, 0, 4, 0, 4, v[0], gen=1), "slot 4 (pool size 4)")
    for r in range(3):
        t.send(t.contribution(1, r, 0, S, v[r]), "g=0 slot 0: rank %d (valid)" % r)
    return t


def two_jobs():
    t = Trace("two_jobs", "two jobs aggregating at once in separate pools",
              ["job 1 (n=3, pool [0,4), group 1) and job 2 (n=2, pool [4,8), group 2) use the "
               "same slot numbers and seqs, interleaved", "results go only to each job's own workers",
               "per-job lane ports: job 2 sends to 0xBEE1"])
    t.job(**JOB_A)
    t.job(**JOB_B)
    S = 4
    rng = random.Random(8)
    a = {g: [vec(rng) for _ in range(3)] for g in (0, 1)}
    b = {g: [vec(rng) for _ in range(2)] for g in (0, 1)}
    t.send(t.contribution(1, 0, 0, S, a[0][0], exponent=3), "job 1 g=0: rank 0")
    t.send(t.contribution(2, 0, 0, S, b[0][0], exponent=9, lane=0xBEE1), "job 2 g=0: rank 0")
    t.send(t.contribution(1, 1, 0, S, a[0][1], exponent=1), "job 1 g=0: rank 1")
    t.send(t.contribution(2, 0, 1, S, b[1][0], lane=0xBEE1), "job 2 g=1: rank 0")
    t.send(t.contribution(2, 1, 0, S, b[0][1], exponent=-2, lane=0xBEE1), "job 2 g=0: rank 1 completes job 2 slot 0")
    t.send(t.contribution(1, 2, 0, S, a[0][2], exponent=2), "job 1 g=0: rank 2 completes job 1 slot 0")
    t.send(t.contribution(1, 2, 1, S, a[1][2]), "job 1 g=1: rank 2")
    t.send(t.contribution(2, 1, 1, S, b[1][1], lane=0xBEE1), "job 2 g=1: rank 1 completes job 2 slot 1")
    t.send(t.contribution(1, 0, 1, S, a[1][0]), "job 1 g=1: rank 0")
    t.send(t.contribution(1, 1, 1, S, a[1][1]), "job 1 g=1: rank 1 completes job 1 slot 1")
    return t


def pool_reuse():
    t = Trace("pool_reuse", "a pool slot taken over by another (job, generation)",
              ["the dataplane resets a slot when its owner (job id, generation) changes: a "
               "half-filled set of the previous owner neither adds to nor blocks the new one",
               "(stands in for re-registering a job with a new generation, which an STF trace "
               "cannot do: it cannot modify a table entry)"])
    t.job(job_id=3, gen=1, secret=0x2545F491, ports=[1, 2, 3], pool_base=8, pool_size=2, mcast=3,
          index=2)
    t.job(job_id=4, gen=5, secret=0x4F1BBCDC, ports=[4, 5], pool_base=8, pool_size=2, mcast=4,
          index=3)
    rng = random.Random(9)
    c = vec(rng)
    d = [vec(rng) for _ in range(2)]
    t.send(t.contribution(3, 0, 4, 2, c, exponent=12),
           "job 3 g=4 (slot 0 set 0, seq 4): rank 0 only; the set stays pending")
    t.send(t.contribution(4, 0, 0, 2, d[0], exponent=1),
           "job 4 g=0 (same pool slot, set 0, seq 0): new owner, both sets reset, fresh use")
    t.send(t.contribution(4, 1, 0, 2, d[1], exponent=NONE), "job 4 g=0: rank 1 completes without job 3's data")
    return t


def single_worker():
    t = Trace("single_worker", "a job of one worker",
              ["n = 1: every fresh contribution completes its slot at once (RESULT to itself)",
               "a retransmission is answered with RETRANSMIT_RESULT"])
    t.job(job_id=5, gen=2, secret=0x00000001, ports=[6], pool_base=16, pool_size=2, mcast=5,
          index=4)
    rng = random.Random(10)
    for g in range(3):
        t.send(t.contribution(5, 0, g, 2, vec(rng), exponent=g), "g=%d: rank 0" % g)
    rng = random.Random(10)
    t.send(t.contribution(5, 0, 2, 2, [vec(rng) for _ in range(3)][2], exponent=2), "g=2: rank 0 again")
    return t


def secret():
    t = Trace("secret", "contributions without the job's secret",
              ["BAD_SECRET: from the registered endpoint of the claimed rank (a forged source), "
               "with the secret of another job, with a wrong secret and a wrong generation or an "
               "unregistered source (the secret is checked first)",
               "a packet without the secret neither starts, adds to nor completes a slot, and a "
               "retransmission without it gets no RETRANSMIT_RESULT",
               "results carry the job's secret"])
    t.job(**JOB_A)
    t.job(**JOB_B)
    S = 4
    a = JOB_A["secret"]
    rng = random.Random(11)
    v = [vec(rng) for _ in range(3)]
    forged = vec(rng)
    t.send(t.contribution(1, 0, 0, S, forged, secret=a ^ 1),
           "g=0: rank 0's endpoint, secret off by one bit: would be the slot's first contribution")
    t.send(t.contribution(1, 0, 0, S, v[0], exponent=3), "g=0: rank 0 (valid, first)")
    t.send(t.contribution(1, 1, 0, S, forged, secret=JOB_B["secret"]),
           "g=0: rank 1's endpoint with job 2's secret: would add to the slot")
    t.send(t.contribution(1, 1, 0, S, forged, secret=0, gen=2),
           "g=0: rank 1's endpoint, secret 0 and generation 2 (the secret is checked first)")
    t.send(t.raw(1, 1, 0, 0, 0, 0, forged, gen=1, src_port=50009, secret=a ^ 0x80000000),
           "g=0: unregistered UDP port 50009 claiming rank 0, wrong secret (checked before the sender)")
    t.send(t.contribution(1, 1, 0, S, v[1], exponent=NONE), "g=0: rank 1 (valid)")
    t.send(t.contribution(1, 2, 0, S, forged, secret=~a & 0xFFFFFFFF),
           "g=0: rank 2's endpoint, inverted secret: would complete the slot")
    t.send(t.contribution(1, 2, 0, S, v[2], exponent=1), "g=0: rank 2 (valid) completes: RESULT with the secret")
    t.send(t.contribution(1, 1, 0, S, v[1], secret=a ^ 0x10000),
           "g=0: rank 1's retransmission with a wrong secret: no answer")
    t.send(t.contribution(1, 1, 0, S, v[1]), "g=0: rank 1's retransmission with the secret")
    return t


TRACES = [basic_n3, retransmission, shadow_sets, unknown_sender, malformed, malformed_l3,
          job_checks, two_jobs, pool_reuse, single_worker, secret]


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for make in TRACES:
        t = make()
        path = os.path.join(HERE, t.name + ".stf")
        text = t.text()
        if check:
            old = open(path).read() if os.path.exists(path) else None
            if old != text:
                stale.append(path)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        print("out of date: " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
