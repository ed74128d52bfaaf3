#!/usr/bin/env python3
"""Writes p4/switchml.p4info.txt: the P4Info (p4.config.v1.P4Info, protobuf text format) of
switchml.p4, as p4c emits it for `--arch v1model --p4runtime-files`.

p4c is not needed to run this. Ids follow p4c's scheme: the entity-type prefix byte
(p4info.proto P4Ids: action 0x01, table 0x02, counter 0x12, register 0x16) over the low
24 bits of the Jenkins one-at-a-time hash of the fully-qualified name. Controllers must
resolve names, never hard-code ids.

When the program changes, update ENTITIES below and rerun; when p4c is at hand, diff this
file against the compiler's own build/switchml.p4info.txt (that one wins).

    python3 p4/tools/gen_p4info.py
"""
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "switchml.p4info.txt")

PREFIX = {"action": 0x01, "table": 0x02, "counter": 0x12, "register": 0x16}

K = 64
POOL_SLOTS = 2048
POOL_SETS = 2 * POOL_SLOTS
MAX_JOBS = 64
DROP_REASONS = 10
JOB_DROP_STRIDE = 16

# name, match fields [(name, bitwidth)], action names, size
TABLES = [
    ("SwitchMLIngress.job_table", [("hdr.switchml.job_id", 32)],
     ["SwitchMLIngress.set_job", "NoAction"], MAX_JOBS),
    ("SwitchMLIngress.worker_table",
     [("hdr.switchml.job_id", 32), ("hdr.ipv4.src_addr", 32), ("hdr.udp.src_port", 16)],
     ["SwitchMLIngress.set_worker", "NoAction"], 2048),
    ("SwitchMLEgress.result_table",
     [("hdr.switchml.job_id", 32), ("standard_metadata.egress_rid", 16)],
     ["SwitchMLEgress.set_result_dest", "NoAction"], 2048),
]

# name, params [(name, bitwidth)], annotations
ACTIONS = [
    ("NoAction", [], ['@noWarn("unused")']),
    ("SwitchMLIngress.set_job",
     [("generation", 16), ("num_workers", 8), ("pool_base", 32), ("pool_size", 16),
      ("mcast_grp", 16), ("job_index", 8), ("k", 16), ("secret", 32)], []),
    ("SwitchMLIngress.set_worker", [("rank", 8), ("bitmap_bit", 32)], []),
    ("SwitchMLEgress.set_result_dest", [("dst_mac", 48), ("dst_ip", 32), ("dst_port", 16)], []),
]

# name, size (all count packets)
COUNTERS = [
    ("SwitchMLIngress.drop_reason", DROP_REASONS),
    ("SwitchMLIngress.job_packets_in", MAX_JOBS),
    ("SwitchMLIngress.job_retransmissions", MAX_JOBS),
    ("SwitchMLIngress.job_drops", MAX_JOBS * JOB_DROP_STRIDE),
    ("SwitchMLEgress.job_packets_out", MAX_JOBS),
]

# name, bitwidth, size
REGISTERS = [
    ("SwitchMLIngress.aggregator.slot_owner", 80, POOL_SLOTS),
    ("SwitchMLIngress.aggregator.set_bitmap", 32, POOL_SETS),
    ("SwitchMLIngress.aggregator.set_count", 8, POOL_SETS),
    ("SwitchMLIngress.aggregator.set_seq", 32, POOL_SETS),
    ("SwitchMLIngress.aggregator.set_used", 1, POOL_SETS),
    ("SwitchMLIngress.aggregator.set_exponent", 16, POOL_SETS),
    ("SwitchMLIngress.aggregator.set_sum", 32, POOL_SETS * K),
]


def jenkins(name):
    h = 0
    for c in name.encode():
        h = (h + c) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


class Ids:
    def __init__(self):
        self.used = set()

    def get(self, kind, name):
        # Linear probing on collision, like p4c.
        low = jenkins(name) & 0xFFFFFF
        while True:
            pid = (PREFIX[kind] << 24) | low
            if pid not in self.used:
                self.used.add(pid)
                return pid
            low = (low + 1) & 0xFFFFFF


def aliases(names):
    """Shortest dot-suffix of each name that no other name of the same kind ends with."""
    out = {}
    for n in names:
        parts = n.split(".")
        for i in range(len(parts) - 1, -1, -1):
            cand = ".".join(parts[i:])
            if not any(o != n and (o == cand or o.endswith("." + cand)) for o in names):
                out[n] = cand
                break
    return out


def preamble(lines, pid, name, alias, annotations=()):
    lines.append("  preamble {")
    lines.append("    id: %d" % pid)
    lines.append('    name: "%s"' % name)
    lines.append('    alias: "%s"' % alias)
    for a in annotations:
        lines.append('    annotations: "%s"' % a.replace('"', '\\"'))
    lines.append("  }")


def main():
    ids = Ids()
    action_ids = {name: ids.get("action", name) for name, _, _ in ACTIONS}
    lines = ["# proto-file: p4/config/v1/p4info.proto",
             "# proto-message: p4.config.v1.P4Info",
             "",
             "pkg_info {",
             '  arch: "v1model"',
             "}"]
    table_alias = aliases([t[0] for t in TABLES])
    for name, fields, actions, size in TABLES:
        lines.append("tables {")
        preamble(lines, ids.get("table", name), name, table_alias[name])
        for i, (fname, width) in enumerate(fields, 1):
            lines += ["  match_fields {", "    id: %d" % i, '    name: "%s"' % fname,
                      "    bitwidth: %d" % width, "    match_type: EXACT", "  }"]
        for a in actions:
            lines += ["  action_refs {", "    id: %d" % action_ids[a], "  }"]
        lines.append("  size: %d" % size)
        lines.append("}")
    action_alias = aliases([a[0] for a in ACTIONS])
    for name, params, annotations in ACTIONS:
        lines.append("actions {")
        preamble(lines, action_ids[name], name, action_alias[name], annotations)
        for i, (pname, width) in enumerate(params, 1):
            lines += ["  params {", "    id: %d" % i, '    name: "%s"' % pname,
                      "    bitwidth: %d" % width, "  }"]
        lines.append("}")
    counter_alias = aliases([c[0] for c in COUNTERS])
    for name, size in COUNTERS:
        lines.append("counters {")
        preamble(lines, ids.get("counter", name), name, counter_alias[name])
        lines += ["  spec {", "    unit: PACKETS", "  }", "  size: %d" % size, "}"]
    register_alias = aliases([r[0] for r in REGISTERS])
    for name, width, size in REGISTERS:
        lines.append("registers {")
        preamble(lines, ids.get("register", name), name, register_alias[name])
        lines += ["  type_spec {", "    bitstring {", "      bit {",
                  "        bitwidth: %d" % width, "      }", "    }", "  }",
                  "  size: %d" % size, "}"]
    lines += ["type_info {", "}"]
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
