/*
 * spark-switchml: SwitchML in-network aggregation for BMv2 (v1model), k = 64.
 * Wire format and algorithm: docs/protocol.md. Control-plane names: p4/README.md.
 *
 *   p4c --target bmv2 --arch v1model -o build \
 *       --p4runtime-files build/switchml.p4info.txt switchml.p4
 */
#include <core.p4>
// v1model.p4 declares the two-parameter register<T, I> and counter<I> used here only from
// this version on (p4c defaults to 20180101 without it).
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

#include "headers.p4"
#include "parser.p4"
#include "checksum.p4"
#include "aggregate.p4"
#include "ingress.p4"
#include "egress.p4"

V1Switch(SwitchMLParser(),
         SwitchMLVerifyChecksum(),
         SwitchMLIngress(),
         SwitchMLEgress(),
         SwitchMLComputeChecksum(),
         SwitchMLDeparser()) main;
